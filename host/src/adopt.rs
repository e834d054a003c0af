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
    Adoption, Declaration, Mode, Outcome, RecordRefusal, Report, Resource, Spec, State, Undo,
    VERSION,
};
use serde::{Deserialize, Serialize};

use crate::apply::{self, Error};
use crate::files;
use crate::record::{
    ContainerEntry, DirectoryEntry, Entry, FileEntry, KeysEntry, LoadError, Original, Paths,
    ProcessEntry, Readers, Record, ServiceEntry,
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
) -> Result<(), String> {
    let note = Note {
        id: id.to_string(),
        path: path.to_string(),
        original: original.clone(),
    };
    let dir = notes_dir(paths);
    let at = dir.join(note_name(id));
    let bytes = serde_json::to_vec(&note).map_err(|e| e.to_string())?;
    fs::create_dir_all(&dir)
        .and_then(|()| files::write_atomically(&at, &bytes, None, 0o600))
        .map_err(|e| format!("cannot note the kept original at {}: {e}", at.display()))
}

/// Removes the notes whose kept original is gone (given back). A note of an original nothing
/// names any more stays with it: it is what says where that original came from.
pub(crate) fn forget_notes(paths: &Paths) {
    let dir = notes_dir(paths);
    for name in signs::entries(&dir) {
        let at = dir.join(&name);
        let spent = fs::read(&at)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Note>(&bytes).ok())
            .is_some_and(|n| !paths.original(&n.original.blob).exists());
        if spent {
            let _ = fs::remove_file(at);
        }
    }
}

/// The notes whose kept original is still there.
fn notes(paths: &Paths) -> Vec<Note> {
    signs::entries(&notes_dir(paths))
        .into_iter()
        .filter_map(|name| fs::read(notes_dir(paths).join(name)).ok())
        .filter_map(|bytes| serde_json::from_slice::<Note>(&bytes).ok())
        .filter(|n| paths.original(&n.original.blob).is_file())
        .collect()
}

/// Takes the machine as it is now. A machine whose record is readable is left as it is.
pub(crate) fn run(declaration: &Declaration, paths: &Paths) -> Result<Report, Error> {
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
        adopt.resource(resource);
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

struct Adopt<'a> {
    paths: &'a Paths,
    notes: Vec<Note>,
    /// Kept originals given to a declared file.
    used: BTreeSet<String>,
    record: Record,
    outcomes: Vec<Outcome>,
    adoption: Adoption,
}

impl Adopt<'_> {
    fn take(&mut self, id: &str, entry: Entry, detail: String) {
        let undo = entry.undo();
        self.outcomes.push(Outcome {
            id: id.to_string(),
            state: State::Unchanged,
            detail,
            undo: (undo != Undo::default()).then_some(undo),
        });
        self.record.resources.insert(id.to_string(), entry);
    }

    fn lost(&mut self, what: String) {
        self.adoption.cannot_give_back.push(what);
    }

    fn resource(&mut self, resource: &Resource) {
        let id = resource.id.as_str();
        match &resource.spec {
            Spec::File(f) => self.file(id, &f.path),
            Spec::Keys(k) if Path::new(&k.path).is_file() => {
                // its keys are owned again at the next push, with what is there now
                let entry = Entry::Keys(KeysEntry {
                    path: k.path.clone(),
                    created: false,
                    owned: Default::default(),
                    made_from: None,
                    readers: Readers::default(),
                    originals_lost: true,
                });
                self.take(id, entry, format!("{}: taken as it is", k.path));
                self.lost(format!(
                    "{}: the values its keys had before the mesh are lost; undeclaring leaves \
                     them as they are",
                    k.path
                ));
            }
            Spec::Directory(d) if Path::new(&d.path).is_dir() => {
                let entry = Entry::Directory(DirectoryEntry {
                    path: d.path.clone(),
                    created: false,
                    original: None,
                    parents_made: Vec::new(),
                });
                self.take(id, entry, format!("{}: taken as it is", d.path));
                self.lost(format!(
                    "{}: whether the mesh made it, and its owner and mode before, are lost; \
                     undeclaring keeps it",
                    d.path
                ));
            }
            Spec::Service(s) => {
                let entry = Entry::Service(ServiceEntry {
                    unit: s.unit.clone(),
                    found_running: None,
                    found_enabled: None,
                    started: false,
                    stopped: false,
                    enabled: false,
                    disabled: false,
                });
                self.take(id, entry, format!("{}: taken as it is", s.unit));
                self.lost(format!(
                    "{}: the state the host had it in is lost; undeclaring leaves it as it is",
                    s.unit
                ));
            }
            Spec::Process(p) => {
                let unit_file = signs::units_dir(self.paths).join(&p.unit);
                if signs::marked_units(&signs::units_dir(self.paths)).contains(&p.unit) {
                    let entry = Entry::Process(ProcessEntry {
                        unit: p.unit.clone(),
                        unit_file: unit_file.display().to_string(),
                        bundle_dir: p.bundle_dir.clone(),
                        digest: apply::on_disk_digest(p, &unit_file),
                    });
                    self.take(id, entry, format!("{}: the mesh wrote it; taken", p.unit));
                }
            }
            // a package is never removed; a container is known by its labels
            Spec::Keys(_) | Spec::Directory(_) | Spec::Package(_) | Spec::Container(_) => {}
        }
    }

    /// A declared file: the mesh's now, with its original if a note (or, failing one, a kept
    /// original named for its resource) says what it was.
    fn file(&mut self, id: &str, path: &str) {
        let found = match files::read(Path::new(path)) {
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
        let entry = Entry::File(FileEntry {
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
        for unit in signs::marked_units(&dir) {
            if declared.contains(unit.as_str()) {
                continue;
            }
            let stem = unit.strip_suffix(".service").unwrap_or(&unit);
            let entry = Entry::Process(ProcessEntry {
                unit: unit.clone(),
                unit_file: dir.join(&unit).display().to_string(),
                bundle_dir: signs::bundles_dir(self.paths)
                    .join(stem)
                    .display()
                    .to_string(),
                digest: None,
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
                let entry = Entry::Container(ContainerEntry {
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
            hostname: apply::hostname(),
            resources: self.outcomes,
            units: Vec::new(),
            adoption: Some(self.adoption),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use std::path::PathBuf;

    use mesh_wire::{Declaration, Mode, RecordRefusal, State};

    use super::notes_dir;
    use crate::apply::Error;
    use crate::apply::testkit::{decl, file, run, sandbox, states};
    use crate::record::Paths;
    use crate::signs;

    /// A sandbox whose file `conf` holds `found`, and a declaration giving it the mesh's content.
    fn machine(found: &str) -> (tempfile::TempDir, Paths, PathBuf, Declaration) {
        let (dir, paths) = sandbox();
        let target = dir.path().join("conf");
        fs::write(&target, found).unwrap();
        let declared = decl(vec![file(&target, "mesh\n")]);
        (dir, paths, target, declared)
    }

    fn refused(result: Result<mesh_wire::Report, Error>) -> RecordRefusal {
        match result {
            Err(Error::Refused(r)) => r,
            Err(e) => panic!("not a refusal: {e}"),
            Ok(r) => panic!("not refused: {r:?}"),
        }
    }

    #[test]
    fn a_lost_record_is_refused_and_adopt_gives_the_original_back() {
        let (dir, paths) = sandbox();
        let target = dir.path().join("issue");
        fs::write(&target, "the host's own\n").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o604)).unwrap();
        let declared = decl(vec![file(&target, "mesh\n")]);
        assert_eq!(states(&declared, Mode::Apply, &paths), vec![State::Changed]);
        fs::remove_file(paths.record()).unwrap();

        // a push and a dry run are refused, naming what was found; nothing changes
        let changed = decl(vec![file(&target, "mesh, again\n")]);
        for mode in [Mode::Apply, Mode::DryRun] {
            let RecordRefusal::Lost { found, .. } = refused(run(&changed, mode, &paths)) else {
                panic!("not a lost record")
            };
            assert!(
                found.iter().any(|f| f.contains("kept originals")),
                "{found:?}"
            );
        }
        assert_eq!(fs::read_to_string(&target).unwrap(), "mesh\n");
        assert!(!paths.record().exists());

        let report = run(&declared, Mode::Adopt, &paths).unwrap();
        let adoption = report.adoption.unwrap();
        assert!(adoption.cannot_give_back.is_empty(), "{adoption:?}");
        assert!(adoption.kept.is_empty(), "{adoption:?}");
        assert_eq!(
            report.resources[0].undo.as_ref().unwrap().restores,
            vec![target.display().to_string()]
        );
        // adopting again changes nothing: the record is whole
        let again = run(&declared, Mode::Adopt, &paths).unwrap();
        assert!(again.adoption.unwrap().had_record);

        assert_eq!(
            states(&declared, Mode::Apply, &paths),
            vec![State::Unchanged]
        );
        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "the host's own\n");
        assert_eq!(
            fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
            0o604
        );
        assert!(signs::entries(&paths.originals()).is_empty());
        assert!(signs::entries(&notes_dir(&paths)).is_empty());
    }

    #[test]
    fn an_original_nothing_matches_is_kept_and_named_and_never_given_back_wrong() {
        let (_dir, paths, target, declared) = machine("the host's own\n");
        states(&declared, Mode::Apply, &paths);
        // as an older helper left it: no notes
        fs::remove_file(paths.record()).unwrap();
        fs::remove_dir_all(notes_dir(&paths)).unwrap();

        let report = run(&declared, Mode::Adopt, &paths).unwrap();
        let adoption = report.adoption.unwrap();
        assert_eq!(adoption.kept.len(), 1, "{adoption:?}");
        assert!(
            adoption.cannot_give_back[0].contains(&target.display().to_string()),
            "{adoption:?}"
        );
        assert_eq!(report.resources[0].undo, None, "nothing is promised");

        let gone = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
        assert_eq!(gone.resources[0].state, State::Removed);
        assert!(
            gone.resources[0].detail.contains("cannot be given back"),
            "{}",
            gone.resources[0].detail
        );
        // left as it is, and the orphaned original is still kept
        assert_eq!(fs::read_to_string(&target).unwrap(), "mesh\n");
        assert_eq!(signs::entries(&paths.originals()).len(), 1);
    }

    #[test]
    fn an_original_kept_under_its_resource_s_name_is_matched_without_a_note() {
        let (_dir, paths, target, declared) = machine("mesh\n");
        let id = &declared.resources[0].id;
        fs::create_dir_all(paths.originals()).unwrap();
        let blob = format!("resource-{}", crate::files::sha256(id.as_bytes()));
        fs::write(paths.original(&blob), "the host's own\n").unwrap();

        let report = run(&declared, Mode::Adopt, &paths).unwrap();
        let adoption = report.adoption.unwrap();
        assert!(adoption.kept.is_empty() && adoption.cannot_give_back.is_empty());
        run(&decl(vec![]), Mode::Apply, &paths).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "the host's own\n");
    }

    #[test]
    fn a_record_that_cannot_be_trusted_is_refused_and_adopt_sets_it_aside() {
        let (dir, paths) = sandbox();
        let target = dir.path().join("conf");
        let declared = decl(vec![file(&target, "mesh\n")]);
        states(&declared, Mode::Apply, &paths);
        let good = fs::read_to_string(paths.record()).unwrap();

        fs::write(
            paths.record(),
            good.replace("\"version\": 1", "\"version\": 99"),
        )
        .unwrap();
        for mode in [Mode::Apply, Mode::DryRun, Mode::Adopt] {
            let refusal = refused(run(&declared, mode, &paths));
            assert!(
                matches!(refusal, RecordRefusal::UnknownVersion { version: 99, .. }),
                "{refusal:?}"
            );
            assert!(refusal.to_string().contains("version 99"), "{refusal}");
        }

        fs::write(paths.record(), "{\"version\": 1, \"resources\": ").unwrap();
        let refusal = refused(run(&declared, Mode::Apply, &paths));
        assert!(
            matches!(refusal, RecordRefusal::Unreadable { .. }),
            "{refusal:?}"
        );
        assert_eq!(refusal.exit_code(), mesh_wire::EXIT_RECORD_UNREADABLE);
        let report = run(&declared, Mode::Adopt, &paths).unwrap();
        let kept = report.adoption.unwrap().kept;
        assert!(kept[0].contains("record.json.unreadable-"), "{kept:?}");
        assert_eq!(
            states(&declared, Mode::Apply, &paths),
            vec![State::Unchanged]
        );
    }

    #[test]
    fn keys_whose_values_before_the_mesh_are_lost_are_left_as_they_are() {
        let (dir, paths) = sandbox();
        let target = dir.path().join("daemon.json");
        fs::write(&target, r#"{"theirs": 1, "ours": "before"}"#).unwrap();
        let keys: mesh_wire::Resource = serde_json::from_value(serde_json::json!({
            "id": "t:keys:daemon", "instance": "t", "module": "t@1", "kind": "keys",
            "path": target.display().to_string(), "owner": "0", "group": "0", "mode": 0o644,
            "keys": [{"path": ["ours"], "value": "mesh"}],
            "source": "s", "settings": {}, "cost": "none", "units": []
        }))
        .unwrap();
        let declared = decl(vec![keys]);
        states(&declared, Mode::Apply, &paths);
        fs::remove_file(paths.record()).unwrap();
        refused(run(&declared, Mode::Apply, &paths));

        let report = run(&declared, Mode::Adopt, &paths).unwrap();
        assert_eq!(report.resources[0].undo, None, "nothing is promised");
        assert!(
            report.adoption.unwrap().cannot_give_back[0].contains("daemon.json"),
            "the loss is said"
        );
        assert_eq!(
            states(&declared, Mode::Apply, &paths),
            vec![State::Unchanged]
        );
        let gone = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
        assert!(
            gone.resources[0].detail.contains("cannot be given back"),
            "{}",
            gone.resources[0].detail
        );
        assert_eq!(
            fs::read_to_string(&target)
                .unwrap()
                .replace(char::is_whitespace, ""),
            r#"{"theirs":1,"ours":"mesh"}"#
        );
    }

    #[test]
    fn units_the_mesh_marked_are_taken_and_others_are_not() {
        let (_dir, paths) = sandbox();
        let units = signs::units_dir(&paths);
        fs::create_dir_all(&units).unwrap();
        fs::write(units.join("w-old.service"), format!("{}: x\n", signs::MARK)).unwrap();
        fs::write(units.join("theirs.service"), "[Unit]\n").unwrap();
        let report = run(&decl(vec![]), Mode::Adopt, &paths).unwrap();
        let ids: Vec<&str> = report.resources.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, vec!["adopted:process:w-old.service"]);
        assert_eq!(
            report.resources[0].undo.as_ref().unwrap().stops,
            vec!["w-old.service"]
        );
    }
}
