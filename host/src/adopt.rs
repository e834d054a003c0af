//! Adopting a machine whose record was lost (`mesh node adopt`): a fresh record that takes the
//! machine as it is now, built from the declaration and what is found there, and every loss said.
//!
//! What makes it better than a guess are the notes: each kept original is described beside the
//! record (its resource, path, owner and mode, in `kept/`), so losing the record does not lose
//! what the host had. A declared file whose note is found gets its original back; a kept original
//! that matches nothing declared is kept, never deleted, and named.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use mesh_wire::{
    Adoption, Declaration, Mode, Outcome, RecordRefusal, Report, State, Undo, VERSION,
};
use serde::{Deserialize, Serialize};

use crate::apply::{self, Error};
use crate::files;
use crate::record::{
    ContainerEntry, Entry, FileEntry, LoadError, Original, Paths, ProcessEntry, Readers, Record,
};
use crate::signs;

/// What a kept original was: written beside it when it is kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Note {
    id: String,
    path: String,
    original: Original,
}

/// Where the notes of kept originals are.
pub(crate) fn notes_dir(paths: &Paths) -> PathBuf {
    paths.root.join("kept")
}

fn note_name(id: &str) -> String {
    format!("{}.json", files::sha256(id.as_bytes()))
}

/// Describes a kept original, so it can be given back even if the record is lost.
pub(crate) fn note_original(
    paths: &Paths,
    id: &str,
    path: &str,
    original: &Original,
) -> Result<(), NoteError> {
    let note = Note {
        id: id.to_string(),
        path: path.to_string(),
        original: original.clone(),
    };
    let dir = notes_dir(paths);
    let at = dir.join(note_name(id));
    let bytes = serde_json::to_vec(&note).map_err(NoteError::Encode)?;
    files::HOST
        .private_dir(&dir, 0o700)
        .and_then(|()| files::HOST.write_atomically(&at, &bytes, None, 0o600))
        .map_err(|error| NoteError::Write { at, error })
}

/// Why a kept original could not be noted: its note would not encode, or not be written.
#[derive(Debug)]
pub(crate) enum NoteError {
    Encode(serde_json::Error),
    Write { at: PathBuf, error: std::io::Error },
}

impl std::fmt::Display for NoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoteError::Encode(e) => write!(f, "{e}"),
            NoteError::Write { at, error } => write!(
                f,
                "cannot note the kept original at {}: {error}",
                at.display()
            ),
        }
    }
}

impl std::error::Error for NoteError {}

impl From<NoteError> for apply::Failure {
    fn from(e: NoteError) -> Self {
        apply::Failure::Said(e.to_string())
    }
}

/// Removes the notes whose kept original is gone (given back). A note of an original nothing
/// names any more stays with it: it is what says where that original came from.
pub(crate) fn forget_notes(paths: &Paths) {
    let dir = notes_dir(paths);
    for name in signs::entries(&dir) {
        let at = dir.join(&name);
        let spent = files::HOST
            .read(&at)
            .ok()
            .flatten()
            .and_then(|found| serde_json::from_slice::<Note>(&found.bytes).ok())
            .is_some_and(|n| !paths.original(&n.original.blob).exists());
        if spent {
            let _ = files::HOST.remove(&at);
        }
    }
}

/// The notes whose kept original is still there.
fn notes(paths: &Paths) -> Vec<Note> {
    signs::entries(&notes_dir(paths))
        .into_iter()
        .filter_map(|name| {
            files::HOST
                .read(&notes_dir(paths).join(name))
                .ok()
                .flatten()
        })
        .filter_map(|found| serde_json::from_slice::<Note>(&found.bytes).ok())
        .filter(|n| paths.original(&n.original.blob).is_file())
        .collect()
}

/// Takes the machine as it is now. A machine whose record is readable is left as it is; a new
/// one (no record, no signs of the mesh, none known to the operator) is given an empty record, so
/// that what it has stays its own and the next push keeps it as the original.
pub(crate) fn run(declaration: &Declaration, paths: &Paths) -> Result<Report, Error> {
    // taken before the lock this run makes: the lock an earlier apply left is a sign of the mesh
    let applied_before = paths.lock().exists();
    let _lock = apply::lock(paths)?;
    let mut adopt = Adopt {
        paths,
        notes: notes(paths),
        used: BTreeSet::new(),
        record: Record::new(),
        outcomes: Vec::new(),
        adoption: Adoption::default(),
    };
    match Record::load(paths) {
        Ok(Some(_)) => {
            adopt.adoption.had_record = true;
            return Ok(adopt.report());
        }
        Ok(None)
            if signs::refuse_if_found(paths, applied_before, declaration.expects_record)
                .is_ok() =>
        {
            Record::new().save(paths)?;
            adopt.adoption.new_machine = true;
            return Ok(adopt.report());
        }
        Ok(None) => {}
        Err(LoadError::Refused(RecordRefusal::Unreadable { .. })) => {
            let aside = set_aside(paths)?;
            adopt.adoption.kept.push(format!(
                "{} (the record that could not be read, set aside)",
                aside.display()
            ));
        }
        Err(e) => return Err(e.into()),
    }
    for resource in &declaration.resources {
        apply::adopt(&mut adopt, resource);
    }
    adopt.undeclared_units(declaration);
    adopt.undeclared_containers(declaration);
    for blob in signs::entries(&paths.originals()) {
        if !adopt.used.contains(&blob) {
            let was = adopt
                .notes
                .iter()
                .find(|n| n.original.blob == blob)
                .map(|n| format!(" (the original of {})", n.path))
                .unwrap_or_default();
            adopt
                .adoption
                .kept
                .push(format!("{}{was}", paths.original(&blob).display()));
        }
    }
    adopt.record.save(paths)?;
    Ok(adopt.report())
}

/// What the declaration names of one kind: units of processes, names of containers.
fn declared<'d>(declaration: &'d Declaration, kind: &str) -> BTreeSet<&'d str> {
    declaration
        .resources
        .iter()
        .filter(|r| r.spec.kind() == kind)
        .map(|r| r.spec.target())
        .collect()
}

/// Moves an unreadable record aside (kept: it may still tell a person what the host had).
fn set_aside(paths: &Paths) -> Result<PathBuf, Error> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let aside = paths.root.join(format!("record.json.unreadable-{secs}"));
    fs::rename(paths.record(), &aside)?;
    Ok(aside)
}

/// An adoption under way: the fresh record, what was said of each resource, and every loss.
pub(crate) struct Adopt<'a> {
    pub(crate) paths: &'a Paths,
    notes: Vec<Note>,
    /// Kept originals given to a declared file.
    used: BTreeSet<String>,
    record: Record,
    outcomes: Vec<Outcome>,
    adoption: Adoption,
}

impl Adopt<'_> {
    /// Takes `entry` into the fresh record for `id`, saying `detail`.
    pub(crate) fn take(&mut self, id: &str, entry: Entry, detail: String) {
        let undo = entry.undo();
        self.outcomes.push(Outcome {
            id: id.to_string(),
            state: State::Unchanged,
            detail,
            undo: (undo != Undo::default()).then_some(undo),
            seen: Vec::new(),
            micros: 0,
        });
        self.record.resources.insert(id.to_string(), entry);
    }

    /// Says what undeclaring can no longer give back.
    pub(crate) fn lost(&mut self, what: String) {
        self.adoption.cannot_give_back.push(what);
    }

    /// A declared file: the mesh's now, with its original if a note (or, failing one, a kept
    /// original named for its resource) says what it was.
    pub(crate) fn file(&mut self, id: &str, path: &str) {
        let found = match self.paths.machine.read(Path::new(path)) {
            Ok(found) => found,
            Err(e) => {
                self.lost(format!("{path}: not taken: {e}"));
                return;
            }
        };
        let original = self.original_of(id, path, found.as_ref());
        if found.is_none() && original.is_none() {
            return;
        }
        let detail = match &original {
            Some(o) => format!(
                "{path}: taken; its original (kept at {}) is given back when undeclared",
                self.paths.original(&o.blob).display()
            ),
            None => {
                self.lost(format!(
                    "{path}: what the host had there before the mesh is lost; undeclaring leaves \
                     it as it is"
                ));
                format!("{path}: taken; its original is lost")
            }
        };
        if let Some(o) = &original {
            self.used.insert(o.blob.clone());
        }
        let entry = Entry::from(FileEntry {
            path: path.to_string(),
            created: false,
            original_lost: original.is_none(),
            original,
            written: None,
            readers: Readers::default(),
            parents_made: Vec::new(),
        });
        self.take(id, entry, detail);
    }

    fn original_of(&self, id: &str, path: &str, found: Option<&files::Found>) -> Option<Original> {
        let unused = |n: &&Note| !self.used.contains(&n.original.blob);
        let noted = self
            .notes
            .iter()
            .filter(unused)
            .find(|n| n.id == id)
            .or_else(|| self.notes.iter().filter(unused).find(|n| n.path == path));
        if let Some(n) = noted {
            return Some(n.original.clone());
        }
        // a kept original named for its resource (as helpers that keep originals per resource
        // name them), without a note: its owner and mode are lost, so it gets the file's present
        // ones
        let blob = format!("resource-{}", files::sha256(id.as_bytes()));
        let found = found?;
        (self.paths.original(&blob).is_file() && !self.used.contains(&blob)).then_some(Original {
            blob,
            uid: found.uid,
            gid: found.gid,
            mode: found.mode,
        })
    }

    /// Units the mesh marked that no declared process names: the mesh's, so the next push stops
    /// and removes them.
    fn undeclared_units(&mut self, declaration: &Declaration) {
        let declared = declared(declaration, "process");
        let dir = signs::units_dir(self.paths);
        for unit in signs::marked_units(&self.paths.machine, &dir) {
            if declared.contains(unit.as_str()) {
                continue;
            }
            let stem = unit.strip_suffix(".service").unwrap_or(&unit);
            let entry = Entry::from(ProcessEntry {
                unit: unit.clone(),
                unit_file: dir.join(&unit).display().to_string(),
                bundle_dir: signs::bundles_dir(self.paths)
                    .join(stem)
                    .display()
                    .to_string(),
                env_file: apply::env_file_there(self.paths, &unit),
                digest: None,
                made_from: None,
            });
            self.take(
                &format!("adopted:process:{unit}"),
                entry,
                format!("{unit}: the mesh wrote it and no longer declares it: the next push stops and removes it"),
            );
        }
    }

    /// Containers the mesh labelled that nothing declares: the next push removes them.
    fn undeclared_containers(&mut self, declaration: &Declaration) {
        let declared = declared(declaration, "container");
        for name in signs::mesh_containers(self.paths) {
            if !declared.contains(name.as_str()) {
                let entry = Entry::from(ContainerEntry {
                    name: name.clone(),
                    spec: None,
                });
                self.take(
                    &format!("adopted:container:{name}"),
                    entry,
                    format!("container {name}: the mesh made it and no longer declares it: the next push removes it"),
                );
            }
        }
    }

    fn report(self) -> Report {
        Report {
            version: VERSION,
            mode: Mode::Adopt,
            hostname: crate::facts::hostname(),
            host_keys: crate::facts::host_keys(&self.paths.machine),
            new_machine: self.adoption.new_machine,
            resources: self.outcomes,
            units: Vec::new(),
            adoption: Some(self.adoption),
            awaiting: None,
            reverted: Vec::new(),
            pending: None,
            generation: None,
            facts: Some(crate::facts::gather()),
            steps: Vec::new(),
            generation_not_kept: None,
        }
    }
}

#[cfg(test)]
mod tests;
