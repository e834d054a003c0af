//! An apt repository: its deb822 sources file under `/etc/apt/sources.list.d/` and the armored
//! key its `Signed-By:` names under `/etc/apt/keyrings/`, each with what was at its path kept
//! to be given back. Repositories come before packages; once every repository of the run is
//! written (or given back), `apt-get update` runs once, if any changed, so the packages after
//! them install from what the repositories now say.
//!
//! apt's answer is read per repository: one it refuses (a signature its key does not verify,
//! a suite that is not there) has its two files put back as they were before this run, and
//! fails naming the repository and apt's words; the others stand.

use std::path::Path;

use mesh_wire::{AptRepositorySpec, Outcome, Resource, State};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, outcome};
use crate::confirm::Touches;
use crate::files::Found;
use crate::record::{AptRepositoryEntry, Entry, FileEntry, Paths, Readers, Record};

/// A repository this run wrote, and how to put its files back if apt refuses it.
pub(super) struct Written {
    id: String,
    name: String,
    uri: String,
    /// Each file's path and what was there before this run.
    before: Vec<(String, Option<Found>)>,
    /// The record had no entry for it before this run.
    first: bool,
}

/// What this run did to apt's sources, for the one `apt-get update` after them.
#[derive(Default)]
pub(super) struct AptSources {
    written: Vec<Written>,
    /// Ids of repositories given back in this run.
    given_back: Vec<String>,
}

/// A file as apt wants it: these bytes, mode 0644.
fn as_declared(found: Option<&Found>, want: &str) -> bool {
    found.is_some_and(|f| f.bytes == want.as_bytes() && f.mode == 0o644)
}

impl Run<'_> {
    pub(super) fn try_apt_repository(
        &mut self,
        resource: &Resource,
        spec: &AptRepositorySpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let (sources, key) = (spec.sources_path(), spec.key_path());
        let (want_sources, want_key) = (spec.sources_text(), spec.key_text());
        let read = |path: &str| {
            self.paths
                .machine
                .read(Path::new(path))
                .map_err(|e| format!("{path}: {e}"))
        };
        let (found_sources, found_key) = (read(&sources)?, read(&key)?);
        let what = format!("{} {}", spec.uri, spec.suite);
        if as_declared(found_sources.as_ref(), &want_sources)
            && as_declared(found_key.as_ref(), &want_key)
        {
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{what} is as declared, signed by {key}"),
            ));
        }
        let state = if found_sources.is_none() && found_key.is_none() {
            State::Created
        } else {
            State::Changed
        };
        if !self.applying() {
            return Ok(outcome(
                &resource.id,
                state,
                format!("would write {sources} ({what}) and its key {key}, then update apt"),
            ));
        }
        let first = !matches!(
            record.resources.get(&resource.id),
            Some(Entry::AptRepository(_))
        );
        if first {
            self.take_repository(resource, spec, record, [&found_sources, &found_key])?;
        }
        let written = Written {
            id: resource.id.clone(),
            name: spec.name.clone(),
            uri: spec.uri.clone(),
            before: vec![(key.clone(), found_key), (sources.clone(), found_sources)],
            first,
        };
        // the key first: a sources file never names a key that is not there yet
        for (path, bytes) in [(&key, &want_key), (&sources, &want_sources)] {
            if let Err(e) =
                self.paths
                    .machine
                    .write_atomically(Path::new(path), bytes.as_bytes(), None, 0o644)
            {
                // half written is neither: the old sources file would name the new key
                let put_back = self.put_back(&written, record);
                return Err(format!("{path}: {e}; {put_back}").into());
            }
        }
        self.apt.written.push(written);
        Ok(outcome(
            &resource.id,
            state,
            format!("wrote {sources} ({what}) and its key {key}"),
        ))
    }

    /// The first time: what was at the two paths is kept and the repository recorded, before
    /// the change, so an interrupted push still gives back what it found.
    fn take_repository(
        &mut self,
        resource: &Resource,
        spec: &AptRepositorySpec,
        record: &mut Record,
        [found_sources, found_key]: [&Option<Found>; 2],
    ) -> Result<(), Failure> {
        let keep = |run: &Self, part: &str, found: &Option<Found>| match found {
            Some(f) => run
                .keep_original(&format!("{}#{part}", resource.id), f)
                .map(Some),
            None => Ok(None),
        };
        let entry = AptRepositoryEntry {
            name: spec.name.clone(),
            sources: spec.sources_path(),
            sources_original: keep(self, "sources", found_sources)?,
            key: spec.key_path(),
            key_original: keep(self, "key", found_key)?,
        };
        record
            .resources
            .insert(resource.id.clone(), Entry::AptRepository(entry));
        // recorded before the change: an interrupted push still gives back what it found
        record.save(self.paths).map_err(Failure::Record)?;
        Ok(())
    }

    /// Removes both files (or puts back what was found at their paths); apt's lists are
    /// updated once, after every repository of the run.
    pub(super) fn give_back_apt_repository(
        &mut self,
        id: &str,
        entry: &AptRepositoryEntry,
    ) -> Result<String, Failure> {
        let mut said = Vec::new();
        for (path, original) in [
            (&entry.sources, &entry.sources_original),
            (&entry.key, &entry.key_original),
        ] {
            said.push(self.give_back_file(&FileEntry {
                path: path.clone(),
                created: original.is_none(),
                original: original.clone(),
                original_lost: false,
                written: None,
                readers: Readers::default(),
                parents_made: Vec::new(),
            })?);
        }
        self.apt.given_back.push(id.to_string());
        Ok(format!("repository {}: {}", entry.name, said.join("; ")))
    }

    /// `apt-get update`, once, when this run wrote or gave back a repository; each repository
    /// apt refused is put back as it was and fails, naming it.
    pub(super) fn update_apt(&mut self, record: &mut Record) {
        let apt = std::mem::take(&mut self.apt);
        if !self.applying() || (apt.written.is_empty() && apt.given_back.is_empty()) {
            return;
        }
        let (ok, said) = match self.paths.system.apt_update() {
            Ok(answer) => answer,
            Err(e) => (false, vec![e.to_string()]),
        };
        let mut refused: Vec<(&Written, Vec<&String>)> = apt
            .written
            .iter()
            .map(|w| (w, said.iter().filter(|l| names(l, &w.uri)).collect()))
            .filter(|(_, lines): &(_, Vec<_>)| !lines.is_empty())
            .collect();
        if !ok && refused.is_empty() {
            // apt failed without naming one: each repository written is the suspect
            refused = apt
                .written
                .iter()
                .map(|w| (w, said.iter().collect()))
                .collect();
        }
        for (w, lines) in &refused {
            let put_back = self.put_back(w, record);
            let words: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
            self.fail(
                &w.id,
                format!(
                    "apt-get update refused repository {} ({}): {}; {put_back}",
                    w.name,
                    w.uri,
                    last_lines(&words)
                ),
            );
        }
        for w in &apt.written {
            if !refused.iter().any(|(r, _)| r.id == w.id)
                && let Some(o) = self.outcomes.iter_mut().find(|o| o.id == w.id)
            {
                o.detail.push_str("; apt-get update took it");
            }
        }
        if ok {
            for id in &apt.given_back {
                if let Some(o) = self.outcomes.iter_mut().find(|o| &o.id == id) {
                    o.detail.push_str("; apt-get update took it");
                }
            }
        } else if apt.written.is_empty() {
            let words: Vec<&str> = said.iter().map(String::as_str).collect();
            for id in &apt.given_back {
                self.fail(
                    id,
                    format!(
                        "given back, but apt-get update failed after it: {}",
                        last_lines(&words)
                    ),
                );
            }
        }
        if !refused.is_empty()
            && let Err(e) = record.save(self.paths)
        {
            for (w, _) in &refused {
                self.fail(&w.id, format!("cannot save the record: {e}"));
            }
        }
    }

    /// A repository's files as they were before this run (apt refused it, or only one was
    /// written); the record forgets one it had not held before.
    fn put_back(&mut self, w: &Written, record: &mut Record) -> String {
        for (path, before) in &w.before {
            let at = Path::new(path);
            let done = match before {
                Some(f) => {
                    self.paths
                        .machine
                        .write_atomically(at, &f.bytes, Some((f.uid, f.gid)), f.mode)
                }
                None => self.paths.machine.remove(at),
            };
            if let Err(e) = done {
                return format!("{path} could not be put back: {e}");
            }
        }
        if w.first
            && let Some(Entry::AptRepository(e)) = record.resources.remove(&w.id)
        {
            let kept = [e.sources_original, e.key_original];
            self.spent_blobs
                .extend(kept.into_iter().flatten().map(|o| o.blob));
        }
        "its sources file and key are as they were before this push".to_string()
    }

    fn fail(&mut self, id: &str, detail: String) {
        if let Some(o) = self.outcomes.iter_mut().find(|o| o.id == id) {
            o.state = State::Failed;
            o.detail = detail;
        }
    }
}

/// Whether apt's `line` is about the repository at `uri`: apt writes it followed by its suite
/// (`file:/srv/r ./ InRelease`) or a file under it (`file:/srv/r/./InRelease`), so that
/// `file:/srv/r2` is not `file:/srv/r`.
fn names(line: &str, uri: &str) -> bool {
    let uri = uri.trim_end_matches('/');
    line.match_indices(uri).any(|(at, _)| {
        matches!(
            line[at + uri.len()..].chars().next(),
            Some(' ' | '/' | '\'')
        )
    })
}

/// apt's last few lines of complaint, joined for one detail.
fn last_lines(lines: &[&str]) -> String {
    if lines.is_empty() {
        return "it said nothing".to_string();
    }
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

impl Kind for AptRepositorySpec {
    const PHASE: Phase = Phase::Repositories;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_apt_repository(resource, self, record)
    }

    /// its sources and key files (apt's lists are read again at the next push's update)
    fn touches(&self, _paths: &Paths) -> Touches {
        Touches {
            files: [self.sources_path(), self.key_path()]
                .map(|f| (f, Vec::new(), mesh_wire::Cost::None))
                .into(),
            ..Touches::default()
        }
    }
}

impl GiveBack for AptRepositoryEntry {
    const KIND: &'static str = "apt-repository";
    /// given back with the files, before the packages that may have come from it
    const PHASE: Phase = Phase::Files;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_apt_repository(id, self)
    }

    /// its sources and key files, with the files found at their paths
    fn touches(&self) -> Touches {
        Touches {
            files: [self.sources.clone(), self.key.clone()]
                .map(|f| (f, Vec::new(), mesh_wire::Cost::None))
                .into(),
            originals: [&self.sources_original, &self.key_original]
                .into_iter()
                .flatten()
                .map(|o| o.blob.clone())
                .collect(),
            ..Touches::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn apt_s_lines_are_matched_to_the_repository_they_name() {
        let w = "W: GPG error: file:/srv/meshrepo ./ InRelease: NO_PUBKEY 5A4C92E91949BAD1";
        assert!(names(w, "file:/srv/meshrepo"));
        assert!(names(w, "file:/srv/meshrepo/"));
        assert!(!names(w, "file:/srv/mesh"));
        assert!(!names(
            "E: The repository 'file:/srv/meshrepo2 ./ InRelease' is not signed.",
            "file:/srv/meshrepo"
        ));
        assert!(names(
            "W: Failed to fetch file:/srv/meshrepo/./InRelease  NO_PUBKEY",
            "file:/srv/meshrepo"
        ));
    }
}
