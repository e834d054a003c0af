//! What a push awaiting confirmation keeps to put the machine back as it was before it: the
//! record, every file, keys file and directory the push may touch (bytes, owner and mode, or that
//! nothing was there), each process's unit file, environment file and bundle, the state of every
//! service and process it declares or had, and which units read what and whether they ran. Kept
//! in `pending/<id>/`
//! (root's, 0700) before the push changes anything; put back by [`revert`], which leaves every
//! unit that ran before the push running (the push's change may have made one exit).
//!
//! Containers and packages are not kept: a revert leaves them as the push made them (docs/guide.md
//! says so).

mod unit;

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use mesh_wire::{Cost, Declaration, Reverted, Spec};
use serde::{Deserialize, Serialize};

use crate::apply;
use crate::files;
use crate::record::{Entry, LoadError, Paths, Record};
use crate::units;
use unit::{KeptUnit, put_back_made_unit, put_back_unit, run_again};

/// Everything kept for one push, as `pending/<id>/kept.json` says it.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Kept {
    /// The record's bytes before the push (blob name); `None`: there was none.
    record: Option<String>,
    /// Every file and keys file the push may write or give back.
    files: Vec<KeptFile>,
    /// Every directory the push may make or set.
    dirs: Vec<KeptDir>,
    /// Every service the push may start, stop, enable or disable, as it was.
    units: Vec<KeptUnit>,
    /// Every other unit that reads what the push may change, as it was: one that ran must run
    /// after a revert, though the change made it exit (sshd reloaded into an address it lacks).
    #[serde(default)]
    readers: Vec<KeptUnit>,
    /// Kept originals the record named before the push (a give-back deletes them), by blob.
    originals: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct KeptFile {
    path: String,
    /// What was there; `None`: nothing.
    was: Option<Was>,
    /// Units that read it, and what putting it back costs them.
    readers: Vec<String>,
    cost: Cost,
}

#[derive(Debug, Serialize, Deserialize)]
struct Was {
    blob: String,
    uid: u32,
    gid: u32,
    mode: u32,
}

#[derive(Debug, Serialize, Deserialize)]
struct KeptDir {
    path: String,
    /// Owner, group and mode; `None`: it was not there.
    was: Option<(u32, u32, u32)>,
}

/// The pending-undo directory of change `id`.
pub(crate) fn dir(paths: &Paths, id: &str) -> PathBuf {
    paths.root.join("pending").join(id)
}

fn manifest(dir: &Path) -> PathBuf {
    dir.join("kept.json")
}

impl Kept {
    /// Keeps, in `dir`, what `declaration` may change on this machine, which `record` (the
    /// record before the push, if any) describes.
    pub(crate) fn take(
        declaration: &Declaration,
        record: Option<&Record>,
        dir: &Path,
        paths: &Paths,
    ) -> io::Result<Kept> {
        files::HOST.private_dir(&paths.root.join("pending"), 0o700)?;
        files::HOST.private_dir(dir, 0o700)?;
        let mut kept = Kept::default();
        let mut blobs = Blobs { dir, next: 0 };
        if let Some(found) = files::HOST.read(&paths.record())? {
            kept.record = Some(blobs.keep(&found.bytes)?);
        }
        let mut touched = Touched::default();
        for resource in &declaration.resources {
            kept.touch_declared(&resource.spec, paths, &mut touched)?;
        }
        for entry in record.iter().flat_map(|r| r.resources.values()) {
            kept.touch_recorded(entry, paths, &mut touched)?;
        }
        let readers: BTreeSet<&String> = touched
            .files
            .values()
            .flat_map(|(units, _)| units)
            .collect();
        for unit in readers {
            if !kept.units.iter().any(|u| &u.unit == unit) {
                kept.readers
                    .push(KeptUnit::now(paths.system.as_ref(), unit)?);
            }
        }
        kept.keep_files(touched, paths, &mut blobs)?;
        for blob in &kept.originals {
            if let Some(found) = files::HOST.read(&paths.original(blob))? {
                files::HOST.write_atomically(
                    &dir.join(format!("original-{blob}")),
                    &found.bytes,
                    None,
                    0o600,
                )?;
            }
        }
        let json = serde_json::to_vec_pretty(&kept).map_err(io::Error::other)?;
        files::HOST.write_atomically(&manifest(dir), &json, None, 0o600)?;
        Ok(kept)
    }

    /// Notes what a declared resource of `spec` may touch: the files it writes and the units
    /// that read them, the directories it makes or sets, the unit it puts in a state (kept now).
    fn touch_declared(
        &mut self,
        spec: &Spec,
        paths: &Paths,
        touched: &mut Touched,
    ) -> io::Result<()> {
        match spec {
            Spec::File(_) | Spec::Keys(_) => {
                // directories writing it would make
                touched
                    .dirs
                    .extend(paths.machine.missing_ancestors(Path::new(spec.target())));
                if let Some(c) = spec.costing() {
                    let cost = c.settings.values().map(|s| s.cost).fold(c.cost, Cost::max);
                    touched.add(spec.target(), &c.units, cost);
                }
            }
            Spec::Directory(d) => touched.dirs.push(d.path.clone()),
            Spec::Service(s) => self.keep_unit(paths.system.as_ref(), &s.unit)?,
            Spec::Process(p) => {
                self.keep_unit(paths.system.as_ref(), &p.unit)?;
                for path in apply::files_of(paths, p) {
                    touched.dirs.extend(paths.machine.missing_ancestors(&path));
                    let path = path.display().to_string();
                    touched.add(&path, std::slice::from_ref(&p.unit), Cost::Restart);
                }
            }
            Spec::Package(_)
            | Spec::Container(_)
            | Spec::Symlink(_)
            | Spec::Sysctl(_)
            | Spec::Timer(_)
            | Spec::Group(_)
            | Spec::User(_)
            | Spec::AptRepository(_) => {}
        }
        Ok(())
    }

    /// Notes what giving back (or changing) a resource the record holds may touch, and the
    /// kept originals a give-back deletes.
    fn touch_recorded(
        &mut self,
        entry: &Entry,
        paths: &Paths,
        touched: &mut Touched,
    ) -> io::Result<()> {
        match entry {
            Entry::File(f) => {
                touched.add(&f.path, &f.readers.units, f.readers.cost);
                touched.dirs.extend(f.parents_made.iter().cloned());
                self.originals
                    .extend(f.original.iter().map(|o| o.blob.clone()));
            }
            Entry::Keys(k) => touched.add(&k.path, &k.readers.units, k.readers.cost),
            Entry::Directory(d) => touched.dirs.push(d.path.clone()),
            Entry::Process(p) => {
                if !self.units.iter().any(|u| u.unit == p.unit) {
                    self.keep_unit(paths.system.as_ref(), &p.unit)?;
                }
                let bundle = Path::new(&p.bundle_dir);
                let made = p.made_from.iter().flat_map(|m| m.bundle.keys());
                let written = [p.unit_file.clone()]
                    .into_iter()
                    .chain(p.env_file.iter().cloned())
                    .chain(made.map(|f| bundle.join(f).display().to_string()));
                for path in written {
                    touched.add(&path, std::slice::from_ref(&p.unit), Cost::Restart);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Keeps every touched file (its bytes, owner and mode, or that nothing was there) and
    /// every touched directory.
    fn keep_files(
        &mut self,
        touched: Touched,
        paths: &Paths,
        blobs: &mut Blobs<'_>,
    ) -> io::Result<()> {
        for (path, (readers, cost)) in touched.files {
            let was = match paths.machine.read(Path::new(&path))? {
                Some(found) => Some(Was {
                    blob: blobs.keep(&found.bytes)?,
                    uid: found.uid,
                    gid: found.gid,
                    mode: found.mode,
                }),
                None => None,
            };
            self.files.push(KeptFile {
                path,
                was,
                readers,
                cost,
            });
        }
        let mut dirs = touched.dirs;
        dirs.sort();
        dirs.dedup();
        for path in dirs {
            let was = paths.machine.dir_meta(Path::new(&path))?;
            self.dirs.push(KeptDir { path, was });
        }
        Ok(())
    }

    fn keep_unit(&mut self, system: &dyn crate::system::System, unit: &str) -> io::Result<()> {
        self.units.push(KeptUnit::now(system, unit)?);
        Ok(())
    }

    /// Reads what was kept in `dir`.
    pub(crate) fn load(dir: &Path) -> io::Result<Kept> {
        let found = files::HOST.read(&manifest(dir))?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is missing", manifest(dir).display()),
            )
        })?;
        serde_json::from_slice(&found.bytes).map_err(io::Error::other)
    }
}

/// The files a push may touch, with the units that read each and the strongest cost a change
/// owes them, and the directories it may make or set.
#[derive(Default)]
struct Touched {
    files: BTreeMap<String, (Vec<String>, Cost)>,
    dirs: Vec<String>,
}

impl Touched {
    fn add(&mut self, path: &str, readers: &[String], cost: Cost) {
        let (units, owed) = self.files.entry(path.to_string()).or_default();
        units.extend(readers.iter().cloned());
        units.sort();
        units.dedup();
        *owed = (*owed).max(cost);
    }
}

/// The kept copies of one push, each a blob of its own in the push's directory.
struct Blobs<'d> {
    dir: &'d Path,
    next: usize,
}

impl Blobs<'_> {
    fn keep(&mut self, bytes: &[u8]) -> io::Result<String> {
        let name = format!("blob-{}", self.next);
        self.next += 1;
        files::HOST.write_atomically(&self.dir.join(&name), bytes, None, 0o600)?;
        Ok(name)
    }
}

/// Puts the machine back as `kept` (read from `dir`) says it was, then says what it did. The
/// caller holds the helper's lock. Each step that fails is said and the others still run.
/// `at_boot`: the machine went down during the wait and is booting, before its daemons start;
/// they read what is put back when they start, so none is started, stopped or paid.
pub(crate) fn revert(
    kept: &Kept,
    dir: &Path,
    paths: &Paths,
    id: &str,
    at: u64,
    at_boot: bool,
) -> Reverted {
    let mut done = Reverted {
        id: id.to_string(),
        at,
        restored: Vec::new(),
        failed: Vec::new(),
    };
    // a unit the push made goes down while its unit file is there to say how
    for unit in kept.units.iter().filter(|u| !u.exists) {
        put_back_made_unit(paths.system.as_ref(), unit, at_boot, &mut done);
    }
    // a directory that was there comes back before the files in it, shallowest first
    for d in kept.dirs.iter().filter(|d| d.was.is_some()) {
        note(&mut done, &d.path, put_back_dir(&paths.machine, d));
    }
    let (owed, unit_files) = put_back_files(kept, dir, paths, &mut done);
    // one the push made goes once the files are out of it, deepest first
    for d in kept.dirs.iter().rev().filter(|d| d.was.is_none()) {
        note(&mut done, &d.path, put_back_dir(&paths.machine, d));
    }
    put_back_originals(kept, dir, paths, &mut done);
    match put_back_record(kept, dir, paths) {
        Ok(left) => {
            done.restored
                .push(format!("{}: as before the push", paths.record().display()));
            done.restored.extend(
                left.into_iter()
                    .map(|id| format!("{id}: left as the push made it (not reverted)")),
            );
        }
        Err(e) => done
            .failed
            .push(format!("{}: {e}", paths.record().display())),
    }
    if unit_files && let Err(e) = paths.system.daemon_reload() {
        done.failed.push(e);
    }
    for unit in kept.units.iter().filter(|u| u.exists) {
        put_back_unit(paths.system.as_ref(), unit, at_boot, &mut done);
    }
    if at_boot {
        return done;
    }
    run_or_pay(kept, paths, owed, &mut done);
    done
}

/// Puts every kept file back; says what each put back cost the units that read it, and
/// whether a unit file was among them.
fn put_back_files(
    kept: &Kept,
    dir: &Path,
    paths: &Paths,
    done: &mut Reverted,
) -> (BTreeMap<String, Cost>, bool) {
    let mut owed: BTreeMap<String, Cost> = BTreeMap::new();
    let mut unit_files = false;
    for file in &kept.files {
        match put_back_file(&paths.machine, file, dir) {
            Ok(false) => {}
            Ok(true) => {
                unit_files |= Path::new(&file.path).starts_with(units::UNIT_DIR);
                done.restored.push(match &file.was {
                    Some(_) => format!("{}: put back as it was", file.path),
                    None => format!("{}: removed (it was not there)", file.path),
                });
                for unit in &file.readers {
                    let cost = owed.entry(unit.clone()).or_default();
                    *cost = (*cost).max(file.cost);
                }
            }
            Err(e) => done.failed.push(format!("{}: {e}", file.path)),
        }
    }
    (owed, unit_files)
}

/// Puts back the kept originals the push's give-backs deleted.
fn put_back_originals(kept: &Kept, dir: &Path, paths: &Paths, done: &mut Reverted) {
    for blob in &kept.originals {
        let kept_copy = dir.join(format!("original-{blob}"));
        let result = match (
            files::HOST.read(&paths.original(blob)),
            files::HOST.read(&kept_copy),
        ) {
            (Ok(None), Ok(Some(found))) => {
                files::HOST.write_atomically(&paths.original(blob), &found.bytes, None, 0o600)
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
            _ => Ok(()),
        };
        if let Err(e) = result {
            done.failed.push(format!("kept original {blob}: {e}"));
        }
    }
}

/// What ran before and does not now is started (it reads what was put back), not paid; every
/// other reader is paid what putting its files back `owed` it.
fn run_or_pay(kept: &Kept, paths: &Paths, owed: BTreeMap<String, Cost>, done: &mut Reverted) {
    let started: BTreeSet<&str> = kept
        .units
        .iter()
        .filter(|u| u.exists)
        .chain(&kept.readers)
        .filter(|u| run_again(paths.system.as_ref(), u, done))
        .map(|u| u.unit.as_str())
        .collect();
    for (unit, cost) in owed
        .into_iter()
        .filter(|(u, _)| !started.contains(u.as_str()))
    {
        match units::pay(paths.system.as_ref(), &unit, cost, false) {
            Ok(said) => done.restored.push(format!("{unit}: {said}")),
            Err(e) => done.failed.push(e),
        }
    }
}

fn note(done: &mut Reverted, path: &str, result: io::Result<Option<String>>) {
    match result {
        Ok(Some(said)) => done.restored.push(format!("{path}: {said}")),
        Ok(None) => {}
        Err(e) => done.failed.push(format!("{path}: {e}")),
    }
}

/// Puts the record back as it was before the push, but for what a revert does not undo
/// (packages, containers): those keep what the push made of them, so the record stays
/// true to the machine. Says the ids of those the push had changed. A machine the mesh had never
/// applied gets an empty record, not none (its lock is a sign of the mesh, and a missing record
/// would then be taken for a lost one).
fn put_back_record(kept: &Kept, dir: &Path, paths: &Paths) -> io::Result<Vec<String>> {
    let unreadable = |e: LoadError| match e {
        LoadError::Io(e) => e,
        LoadError::Refused(r) => io::Error::other(r.to_string()),
    };
    let mut before = match &kept.record {
        Some(blob) => {
            let found = files::HOST
                .read(&dir.join(blob))?
                .ok_or_else(|| io::Error::other(format!("its kept copy {blob} is gone")))?;
            Record::parse(&found.bytes, "the record kept before the push").map_err(unreadable)?
        }
        None => Record::new(),
    };
    let now = Record::load(paths)
        .map_err(unreadable)?
        .unwrap_or_else(Record::new);
    let not_reverted = |e: &Entry| matches!(e, Entry::Package(_) | Entry::Container(_));
    let as_json = |e: Option<&Entry>| e.and_then(|e| serde_json::to_value(e).ok());
    let ids: BTreeSet<String> = (before.resources.iter().chain(now.resources.iter()))
        .filter(|(_, e)| not_reverted(e))
        .map(|(id, _)| id.clone())
        .collect();
    let mut left = Vec::new();
    for id in ids {
        let made = now.resources.get(&id);
        if as_json(made) != as_json(before.resources.get(&id)) {
            left.push(id.clone());
        }
        match made {
            Some(entry) => before.resources.insert(id, entry.clone()),
            None => before.resources.remove(&id),
        };
    }
    before.save(paths)?;
    Ok(left)
}

/// Puts one file back; `true` when it had to change.
fn put_back_file(root: &files::Root, file: &KeptFile, dir: &Path) -> io::Result<bool> {
    let path = Path::new(&file.path);
    let now = root.read(path)?;
    match &file.was {
        None => {
            if now.is_none() {
                return Ok(false);
            }
            root.remove(path)?;
            Ok(true)
        }
        Some(was) => {
            let bytes = files::HOST
                .read(&dir.join(&was.blob))?
                .map(|f| f.bytes)
                .ok_or_else(|| io::Error::other(format!("its kept copy {} is gone", was.blob)))?;
            let same = now.as_ref().is_some_and(|n| {
                (n.bytes.as_slice(), n.uid, n.gid, n.mode)
                    == (bytes.as_slice(), was.uid, was.gid, was.mode)
            });
            if same {
                return Ok(false);
            }
            root.write_atomically(path, &bytes, Some((was.uid, was.gid)), was.mode)?;
            Ok(true)
        }
    }
}

/// Puts one directory back: removed if the push made it and it is empty, else its owner and
/// mode as they were; what was done, if anything.
fn put_back_dir(root: &files::Root, d: &KeptDir) -> io::Result<Option<String>> {
    let path = Path::new(&d.path);
    let now = root.dir_meta(path)?;
    match (d.was, now) {
        (None, Some(_)) => match root.dir_is_empty(path, &Default::default())? {
            Some(true) => root
                .remove_dir(path)
                .map(|()| Some("removed (it was not there)".into())),
            _ => Ok(Some(
                "kept: the push made it, and something is in it now".into(),
            )),
        },
        (Some(was), None) => {
            root.make_dir(path)?;
            root.set_dir_owner_mode(path, was.0, was.1, was.2)?;
            Ok(Some("made again, as it was".into()))
        }
        (Some(was), Some(now)) if was != now => {
            root.set_dir_owner_mode(path, was.0, was.1, was.2)?;
            Ok(Some("owner and mode put back".into()))
        }
        _ => Ok(None),
    }
}
