//! Applying a declaration: every declared resource made as declared, every resource the record
//! holds that is no longer declared undone, and every unit paid what the changes cost it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io;
use std::path::Path;

use mesh_wire::{
    Cost, Declaration, FileSpec, Mode, Outcome, Report, Resource, Spec, State, UnitOutcome,
    VERSION, change_cost,
};

use crate::files;
use crate::owners;
use crate::record::{Entry, FileEntry, Original, Paths, Record, Written};
use crate::units;

/// What stops a run before any resource is looked at.
#[derive(Debug)]
pub(crate) enum Error {
    /// The state directory or the record cannot be read or written.
    Record(io::Error),
    /// Another helper is applying on this machine.
    Busy,
}

impl Error {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Error::Record(_) => 3,
            Error::Busy => 4,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Record(e) => write!(f, "the helper's record is not usable: {e}"),
            Error::Busy => write!(
                f,
                "another mesh-host is applying on this machine; try again when it is done"
            ),
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Record(e)
    }
}

/// Applies (or, in a dry run, only measures) `declaration` on this machine.
pub(crate) fn run(declaration: &Declaration, mode: Mode, paths: &Paths) -> Result<Report, Error> {
    let _lock = match mode {
        Mode::Apply => Some(lock(paths)?),
        Mode::DryRun => None,
    };
    let mut record = Record::load(paths)?;
    let mut run = Run {
        mode,
        paths,
        owed: BTreeMap::new(),
        outcomes: Vec::new(),
        spent_blobs: Vec::new(),
    };
    for (unit, entry) in &record.units {
        if entry.owed > Cost::None {
            run.owe(unit, entry.owed, "owed by an earlier push");
        }
    }

    let declared: BTreeSet<&str> = declaration
        .resources
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    for resource in &declaration.resources {
        let outcome = match &resource.spec {
            Spec::File(file) => run.file(resource, file, &mut record),
        };
        run.outcomes.push(outcome);
    }
    let undeclared: Vec<String> = record
        .resources
        .keys()
        .filter(|id| !declared.contains(id.as_str()))
        .cloned()
        .collect();
    for id in undeclared {
        let outcome = run.undeclare(&id, &mut record);
        run.outcomes.push(outcome);
    }
    let units = run.pay_units(&mut record);

    if mode == Mode::Apply {
        record.save(paths)?;
        // Only now is a given-back original no longer needed.
        for blob in &run.spent_blobs {
            let _ = fs::remove_file(paths.original(blob));
        }
    }
    Ok(Report {
        version: VERSION,
        mode,
        hostname: fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default(),
        resources: run.outcomes,
        units,
    })
}

fn lock(paths: &Paths) -> Result<fs::File, Error> {
    fs::create_dir_all(paths.originals())?;
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(paths.lock())?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(Error::Busy),
        Err(fs::TryLockError::Error(e)) => Err(Error::Record(e)),
    }
}

struct Run<'a> {
    mode: Mode,
    paths: &'a Paths,
    /// What each unit is owed, and the resources that owe it.
    owed: BTreeMap<String, (Cost, Vec<String>)>,
    outcomes: Vec<Outcome>,
    /// Kept originals put back in this run, deleted once the record no longer names them.
    spent_blobs: Vec<String>,
}

fn outcome(id: &str, state: State, detail: impl Into<String>) -> Outcome {
    Outcome {
        id: id.to_string(),
        state,
        detail: detail.into(),
    }
}

impl Run<'_> {
    fn applying(&self) -> bool {
        self.mode == Mode::Apply
    }

    /// Past tense when done, conditional when only measured.
    fn said(&self, done: &str, would: &str) -> String {
        if self.applying() {
            done.to_string()
        } else {
            format!("would {would}")
        }
    }

    fn owe(&mut self, unit: &str, cost: Cost, because: &str) {
        let slot = self
            .owed
            .entry(unit.to_string())
            .or_insert((Cost::None, Vec::new()));
        slot.0 = slot.0.max(cost);
        slot.1.push(because.to_string());
    }

    fn file(&mut self, resource: &Resource, spec: &FileSpec, record: &mut Record) -> Outcome {
        match self.try_file(resource, spec, record) {
            Ok(o) => o,
            Err(e) => outcome(&resource.id, State::Failed, format!("{}: {e}", spec.path)),
        }
    }

    fn try_file(
        &mut self,
        resource: &Resource,
        spec: &FileSpec,
        record: &mut Record,
    ) -> Result<Outcome, String> {
        let path = Path::new(&spec.path);
        if !path.is_absolute() {
            return Err("not an absolute path".into());
        }
        let uid = owners::id_of("passwd", &spec.owner)?;
        let gid = owners::id_of("group", &spec.group)?;
        let found = files::read(path).map_err(|e| e.to_string())?;
        let want = spec.content.as_bytes();
        let entry = record
            .resources
            .get(&resource.id)
            .map(|Entry::File(e)| e.clone());
        let written = entry.as_ref().and_then(|e| e.written.clone());
        let written = written.as_ref();
        let drifted = match (&found, written) {
            (Some(f), Some(w)) => files::sha256(&f.bytes) != w.sha256,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        let same_content = found.as_ref().is_some_and(|f| f.bytes == want);
        let same_meta = found
            .as_ref()
            .is_some_and(|f| (f.uid, f.gid, f.mode) == (uid, gid, spec.mode));

        // The first time the mesh touches a path it keeps what was there, and says so in the
        // record before the path is changed.
        let mut entry = match entry {
            Some(e) => e,
            None => {
                let original = match &found {
                    Some(f) if self.applying() => Some(self.keep_original(f)?),
                    Some(f) => Some(Original {
                        blob: files::sha256(&f.bytes),
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
                    written: None,
                };
                if self.applying() && !(same_content && same_meta) {
                    record
                        .resources
                        .insert(resource.id.clone(), Entry::File(e.clone()));
                    record
                        .save(self.paths)
                        .map_err(|e| format!("cannot save the record: {e}"))?;
                }
                e
            }
        };

        let state;
        let detail;
        if same_content && same_meta {
            state = State::Unchanged;
            detail = format!("{} is as declared", spec.path);
        } else if same_content {
            if self.applying() {
                files::set_owner_mode(path, uid, gid, spec.mode).map_err(|e| e.to_string())?;
            }
            state = State::Changed;
            detail = format!(
                "{} {}",
                self.said("set owner and mode of", "set owner and mode of"),
                spec.path
            );
        } else {
            if self.applying() {
                files::write_atomically(path, want, Some((uid, gid)), spec.mode)
                    .map_err(|e| e.to_string())?;
            }
            let previous = written.map(|w| (w.source.as_str(), &w.settings));
            let cost = change_cost(previous, spec, drifted);
            for unit in &spec.units {
                self.owe(unit, cost, &resource.id);
            }
            (state, detail) = match &found {
                None => (
                    State::Created,
                    format!("{} {}", self.said("wrote", "write"), spec.path),
                ),
                Some(_) if drifted => (
                    State::Changed,
                    format!(
                        "{} {} (it was changed on the machine)",
                        self.said("rewrote", "rewrite"),
                        spec.path
                    ),
                ),
                Some(_) if entry.written.is_none() => (
                    State::Changed,
                    format!(
                        "{} {} (the original is kept)",
                        self.said("replaced", "replace"),
                        spec.path
                    ),
                ),
                Some(_) => (
                    State::Changed,
                    format!("{} {}", self.said("updated", "update"), spec.path),
                ),
            };
        }
        entry.written = Some(Written {
            sha256: files::sha256(want),
            source: spec.source.clone(),
            settings: spec.settings.clone(),
        });
        if self.applying() {
            record
                .resources
                .insert(resource.id.clone(), Entry::File(entry));
        }
        Ok(outcome(&resource.id, state, detail))
    }

    fn keep_original(&self, found: &files::Found) -> Result<Original, String> {
        let blob = files::sha256(&found.bytes);
        let at = self.paths.original(&blob);
        if !at.exists() {
            files::write_atomically(&at, &found.bytes, None, 0o600)
                .map_err(|e| format!("cannot keep the original at {}: {e}", at.display()))?;
        }
        Ok(Original {
            blob,
            uid: found.uid,
            gid: found.gid,
            mode: found.mode,
        })
    }

    fn undeclare(&mut self, id: &str, record: &mut Record) -> Outcome {
        let Some(entry) = record.resources.get(id).cloned() else {
            return outcome(id, State::Unchanged, "not in the record");
        };
        let result = match &entry {
            Entry::File(file) => self.give_back_file(file),
        };
        match result {
            Ok(detail) => {
                if self.applying() {
                    record.resources.remove(id);
                }
                outcome(id, State::Removed, detail)
            }
            Err(e) => outcome(id, State::Failed, e),
        }
    }

    fn give_back_file(&mut self, file: &FileEntry) -> Result<String, String> {
        let path = Path::new(&file.path);
        if let Some(original) = &file.original {
            if self.applying() {
                let bytes = fs::read(self.paths.original(&original.blob))
                    .map_err(|e| format!("{}: the kept original cannot be read: {e}", file.path))?;
                files::write_atomically(
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
        } else {
            if self.applying() {
                files::remove(path).map_err(|e| format!("{}: cannot remove it: {e}", file.path))?;
            }
            Ok(format!(
                "{} {}: the mesh made it",
                self.said("removed", "remove"),
                file.path
            ))
        }
    }

    fn pay_units(&mut self, record: &mut Record) -> Vec<UnitOutcome> {
        let owed = std::mem::take(&mut self.owed);
        let mut out = Vec::new();
        for (unit, (cost, because)) in owed {
            if cost == Cost::None {
                continue;
            }
            let error = if self.applying() {
                match units::pay(&unit, cost) {
                    Ok(_) => {
                        record.units.remove(&unit);
                        None
                    }
                    Err(e) => {
                        record.units.entry(unit.clone()).or_default().owed = cost;
                        Some(e)
                    }
                }
            } else {
                None
            };
            out.push(UnitOutcome {
                unit,
                action: cost,
                because,
                error,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::MetadataExt;

    use mesh_wire::{Cost, Declaration, FileSpec, Mode, Resource, Spec, State, VERSION};

    use super::run;
    use crate::record::Paths;

    fn file(path: &std::path::Path, content: &str) -> Resource {
        Resource {
            id: format!("t:file:{}", path.display()),
            instance: "t".into(),
            module: "t@1".into(),
            spec: Spec::File(FileSpec {
                path: path.display().to_string(),
                // numeric ids: no getent needed, and ours so the test needs no root
                owner: nix_uid().to_string(),
                group: nix_gid().to_string(),
                mode: 0o640,
                content: content.into(),
                source: "s".into(),
                settings: BTreeMap::new(),
                cost: Cost::None,
                units: vec![],
            }),
        }
    }

    fn nix_uid() -> u32 {
        std::fs::metadata("/proc/self")
            .map(|m| m.uid())
            .unwrap_or(0)
    }
    fn nix_gid() -> u32 {
        std::fs::metadata("/proc/self")
            .map(|m| m.gid())
            .unwrap_or(0)
    }

    fn decl(resources: Vec<Resource>) -> Declaration {
        Declaration {
            version: VERSION,
            node: "n".into(),
            resources,
        }
    }

    fn states(d: &Declaration, mode: Mode, paths: &Paths) -> Vec<State> {
        run(d, mode, paths)
            .unwrap()
            .resources
            .iter()
            .map(|o| o.state)
            .collect()
    }

    #[test]
    fn a_file_is_made_left_alone_changed_and_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            root: dir.path().join("state"),
        };
        let target = dir.path().join("conf");
        std::fs::write(&target, "the operator's own\n").unwrap();

        // a dry run says what it would do and touches nothing
        assert_eq!(
            states(&decl(vec![file(&target, "mesh\n")]), Mode::DryRun, &paths),
            vec![State::Changed]
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "the operator's own\n"
        );
        assert!(!paths.record().exists());

        assert_eq!(
            states(&decl(vec![file(&target, "mesh\n")]), Mode::Apply, &paths),
            vec![State::Changed]
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "mesh\n");
        assert_eq!(std::fs::metadata(&target).unwrap().mode() & 0o7777, 0o640);
        let mtime = std::fs::metadata(&target).unwrap().mtime_nsec();

        assert_eq!(
            states(&decl(vec![file(&target, "mesh\n")]), Mode::Apply, &paths),
            vec![State::Unchanged]
        );
        assert_eq!(
            std::fs::metadata(&target).unwrap().mtime_nsec(),
            mtime,
            "an unchanged file was rewritten"
        );

        // undeclared: the original comes back, and the kept copy is gone
        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "the operator's own\n"
        );
        assert_eq!(std::fs::read_dir(paths.originals()).unwrap().count(), 0);
    }

    #[test]
    fn a_file_the_mesh_created_is_removed_when_undeclared() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            root: dir.path().join("state"),
        };
        let target = dir.path().join("new.conf");
        assert_eq!(
            states(&decl(vec![file(&target, "x\n")]), Mode::Apply, &paths),
            vec![State::Created]
        );
        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert!(!target.exists());
        // nothing left to undo
        assert!(states(&decl(vec![]), Mode::Apply, &paths).is_empty());
    }

    #[test]
    fn a_missing_directory_fails_that_resource_only() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            root: dir.path().join("state"),
        };
        let good = dir.path().join("ok.conf");
        let bad = dir.path().join("no/such/dir.conf");
        let report = run(
            &decl(vec![file(&bad, "x\n"), file(&good, "y\n")]),
            Mode::Apply,
            &paths,
        )
        .unwrap();
        assert_eq!(report.resources[0].state, State::Failed);
        assert!(
            report.resources[0].detail.contains("does not exist"),
            "{}",
            report.resources[0].detail
        );
        assert_eq!(report.resources[1].state, State::Created);
    }
}
