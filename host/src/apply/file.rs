//! A whole file the mesh owns: written atomically, the original kept the first time, what the
//! change costs its units owed in the record before it is written, checked by its `validate`
//! command with the other files of its units before any unit pays for it (`validate`), and given
//! back when undeclared.

use std::io;
use std::path::Path;

use mesh_wire::{FileSpec, Outcome, Resource, State, change_cost};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, outcome};
use crate::adopt::Adopt;
use crate::confirm::Touches;
use crate::files;
use crate::record::{Entry, FileEntry, Original, Paths, Readers, Record, Written};

impl Run<'_> {
    pub(super) fn try_file(
        &mut self,
        resource: &Resource,
        spec: &FileSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let (path, (uid, gid)) = self.owned_path(&spec.path, &spec.owner, &spec.group)?;
        let found = self.paths.machine.read(path).map_err(|e| e.to_string())?;
        // a secret arrives sealed to this machine's host key: opened here only to be written
        let opened = spec
            .sealed
            .as_ref()
            .map(|s| crate::sealed::open(&self.paths.machine, s))
            .transpose()?;
        let want = opened.as_deref().unwrap_or(&spec.content).as_bytes();
        let entry = match record.resources.get(&resource.id) {
            Some(Entry::File(e)) => Some(e.clone()),
            _ => None,
        };
        let written = entry.as_ref().and_then(|e| e.written.clone());
        let written = written.as_ref();
        // what the mesh wrote was changed on the machine since
        let drifted = match (&found, written) {
            (Some(f), Some(w)) => files::sha256(&f.bytes) != w.sha256,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        let same_content = found.as_ref().is_some_and(|f| f.bytes == want);
        let same_meta = found
            .as_ref()
            .is_some_and(|f| (f.uid, f.gid, f.mode) == (uid, gid, spec.mode));

        let entry = match entry {
            Some(e) => e,
            None => self.take_file(
                resource,
                spec,
                found.as_ref(),
                same_content && same_meta,
                record,
            )?,
        };

        let (state, detail) = if same_content && same_meta {
            (State::Unchanged, format!("{} is as declared", spec.path))
        } else if same_content {
            self.set_file_owner(spec, path, (uid, gid))?
        } else {
            let previous = written.map(|w| (w.source.as_str(), &w.settings));
            let cost = change_cost(previous, &spec.costing, drifted);
            self.owe_durably(record, &spec.costing.units, cost, &resource.id)?;
            if self.applying() {
                let write = Write {
                    path,
                    want,
                    owner: (uid, gid),
                    make_parent: !entry.parents_made.is_empty(),
                };
                self.write_file(resource, spec, &write, found.as_ref(), record)?;
            }
            self.file_said(spec, found.is_some(), drifted, &entry)
        };
        if self.applying() {
            record
                .resources
                .insert(resource.id.clone(), Entry::File(made(entry, spec, want)));
        }
        let mut done = outcome(&resource.id, state, detail);
        // a dry run shows what moves in the file, unless it is a secret
        if !self.applying() && !spec.secret && spec.sealed.is_none() && !same_content {
            let before = found.as_ref().map(|f| f.bytes.as_slice());
            done.seen
                .extend(mesh_wire::Seen::of(&spec.path, before, want));
        }
        Ok(done)
    }

    /// A file whose content is as declared: only its owner and mode are set.
    fn set_file_owner(
        &self,
        spec: &FileSpec,
        path: &Path,
        (uid, gid): (u32, u32),
    ) -> Result<(State, String), Failure> {
        if self.applying() {
            self.paths
                .machine
                .set_owner_mode(path, uid, gid, spec.mode)
                .map_err(|e| e.to_string())?;
        }
        let detail = format!(
            "{} {}",
            self.said("set owner and mode of", "set owner and mode of"),
            spec.path
        );
        Ok((State::Changed, detail))
    }

    /// The first time the mesh touches a path it keeps what was there, and says so in the
    /// record before the path is changed (`as_declared`: it will not be).
    fn take_file(
        &mut self,
        resource: &Resource,
        spec: &FileSpec,
        found: Option<&files::Found>,
        as_declared: bool,
        record: &mut Record,
    ) -> Result<FileEntry, Failure> {
        let original = match found {
            Some(f) if self.applying() => {
                let kept = self.keep_original(&resource.id, f)?;
                crate::adopt::note_original(self.paths, &resource.id, &spec.path, &kept)?;
                Some(kept)
            }
            Some(f) => Some(Original {
                blob: original_name(&resource.id),
                uid: f.uid,
                gid: f.gid,
                mode: f.mode,
            }),
            None => None,
        };
        let e = FileEntry {
            path: spec.path.clone(),
            created: found.is_none(),
            original,
            original_lost: false,
            written: None,
            readers: Readers::default(),
            parents_made: self.paths.machine.missing_ancestors(Path::new(&spec.path)),
        };
        if self.applying() && !as_declared {
            record
                .resources
                .insert(resource.id.clone(), Entry::File(e.clone()));
            record.save(self.paths).map_err(Failure::Record)?;
        }
        Ok(e)
    }

    /// Writes the file (its parent first, if the mesh makes it), to be checked with the other
    /// files of its units once all are in place.
    fn write_file(
        &mut self,
        resource: &Resource,
        spec: &FileSpec,
        write: &Write<'_>,
        found: Option<&files::Found>,
        record: &mut Record,
    ) -> Result<(), Failure> {
        if let Some(parent) = write.path.parent()
            && write.make_parent
        {
            // made with the mode a directory gets by default; recorded in the entry
            self.paths
                .machine
                .make_dir(parent)
                .map_err(|e| Failure::path(parent.display(), e))?;
        }
        if let Err(e) = self.paths.machine.write_atomically(
            write.path,
            write.want,
            Some(write.owner),
            spec.mode,
        ) {
            // nothing was written: nothing is owed for it
            self.forgive(record, &[resource.id.clone()].into());
            return Err(e.to_string().into());
        }
        self.written.push(super::validate::Written {
            id: resource.id.clone(),
            path: spec.path.clone(),
            previous: found.cloned(),
            entry: record.resources.get(&resource.id).cloned(),
            validate: spec.validate.clone(),
            effective: spec.effective.clone(),
            secret: spec.secret,
            units: spec.costing.units.clone(),
        });
        Ok(())
    }

    /// What writing the file did: made, rewritten over a hand edit, replacing the original
    /// (kept), or updated.
    fn file_said(
        &self,
        spec: &FileSpec,
        was_there: bool,
        drifted: bool,
        entry: &FileEntry,
    ) -> (State, String) {
        if !was_there {
            (
                State::Created,
                format!("{} {}", self.said("wrote", "write"), spec.path),
            )
        } else if drifted {
            (
                State::Changed,
                format!(
                    "{} {} (it was changed on the machine)",
                    self.said("rewrote", "rewrite"),
                    spec.path
                ),
            )
        } else if entry.written.is_none() && !entry.original_lost {
            (
                State::Changed,
                format!(
                    "{} {} (the original is kept)",
                    self.said("replaced", "replace"),
                    spec.path
                ),
            )
        } else {
            (
                State::Changed,
                format!("{} {}", self.said("updated", "update"), spec.path),
            )
        }
    }

    /// Keeps what was at a path before the mesh, as this resource's own copy: it lives until
    /// this resource is given back, whatever other file had the same bytes.
    pub(super) fn keep_original(
        &self,
        id: &str,
        found: &files::Found,
    ) -> Result<Original, Failure> {
        let blob = original_name(id);
        let at = self.paths.original(&blob);
        files::HOST
            .write_atomically(&at, &found.bytes, None, 0o600)
            .map_err(|e| format!("cannot keep the original at {}: {e}", at.display()))?;
        Ok(Original {
            blob,
            uid: found.uid,
            gid: found.gid,
            mode: found.mode,
        })
    }

    pub(super) fn give_back_file(&mut self, file: &FileEntry) -> Result<String, Failure> {
        let path = Path::new(&file.path);
        if let Some(original) = &file.original {
            if self.applying() {
                let bytes = files::HOST
                    .read(&self.paths.original(&original.blob))
                    .and_then(|found| found.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
                    .map_err(|e| format!("{}: the kept original cannot be read: {e}", file.path))?
                    .bytes;
                self.paths
                    .machine
                    .write_atomically(
                        path,
                        &bytes,
                        Some((original.uid, original.gid)),
                        original.mode,
                    )
                    .map_err(|e| format!("{}: cannot put the original back: {e}", file.path))?;
                self.spent_blobs.push(original.blob.clone());
            }
            Ok(format!(
                "{} {} from the original",
                self.said("restored", "restore"),
                file.path
            ))
        } else if file.original_lost {
            Ok(format!(
                "left {} as it is: the host had it before the mesh, and its original was lost \
                 with the helper's record, so it cannot be given back",
                file.path
            ))
        } else {
            if self.applying() {
                self.paths
                    .machine
                    .remove(path)
                    .map_err(|e| format!("{}: cannot remove it: {e}", file.path))?;
            }
            self.gone.insert(path.to_path_buf());
            // judged once every resource of the run is given back: a sibling that goes after
            // this one may be what still holds them now
            self.parents_made.extend(file.parents_made.iter().cloned());
            Ok(format!(
                "{} {}: the mesh made it",
                self.said("removed", "remove"),
                file.path
            ))
        }
    }
}

/// The name of a resource's kept original: a digest of its id, so no two resources share one.
/// (Records written before named blobs by their content; those names are read as they are.)
fn original_name(id: &str) -> String {
    format!("resource-{}", files::sha256(id.as_bytes()))
}

/// `entry` as the file is now made: `want` written, for the readers `spec` names.
fn made(mut entry: FileEntry, spec: &FileSpec, want: &[u8]) -> FileEntry {
    entry.readers = Readers {
        units: spec.costing.units.clone(),
        cost: spec.costing.cost,
    };
    entry.written = Some(Written {
        sha256: files::sha256(want),
        source: spec.costing.source.clone(),
        settings: spec.costing.settings.clone(),
    });
    entry
}

/// A file's bytes, where they go and whose they are.
struct Write<'a> {
    path: &'a Path,
    want: &'a [u8],
    owner: (u32, u32),
    /// The mesh makes its parent directory.
    make_parent: bool,
}

impl Kind for FileSpec {
    const PHASE: Phase = Phase::Files;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_file(resource, self, record)
    }

    /// the mesh's now, with its original if a note (or a kept original named for it) says
    /// what it was
    fn adopt(&self, adopt: &mut Adopt<'_>, id: &str) {
        adopt.file(id, &self.path);
    }

    /// the file, and the directories writing it would make
    fn touches(&self, paths: &Paths) -> Touches {
        Touches::written(&self.path, &self.costing, paths)
    }
}

impl GiveBack for FileEntry {
    const KIND: &'static str = "file";
    const PHASE: Phase = Phase::Files;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        id: &str,
        record: &mut Record,
    ) -> Result<String, Failure> {
        // what is given back is a change its readers pay for, owed before it is made; a file
        // whose original was lost is left as it is, and costs nothing
        if !self.original_lost {
            run.owe_durably(record, &self.readers.units, self.readers.cost, id)?;
        }
        run.give_back_file(self)
    }

    /// the file, the directories the mesh made for it and the original a give-back deletes
    fn touches(&self) -> Touches {
        Touches {
            dirs: self.parents_made.clone(),
            originals: self.original.iter().map(|o| o.blob.clone()).collect(),
            ..Touches::given_back(&self.path, &self.readers)
        }
    }

    fn parents_made(&mut self) -> Option<(&str, &mut Vec<String>)> {
        (self.created && self.original.is_none() && !self.original_lost)
            .then_some((self.path.as_str(), &mut self.parents_made))
    }
}

#[cfg(test)]
mod tests;
