//! What a push awaiting confirmation keeps to put the machine back as it was before it: the
//! record, and whatever each declared or recorded resource's kind says it touches (every kind
//! says: `Kind::touches`, `GiveBack::touches`): every file, keys file and directory, what was at
//! each link's path, each kernel setting's value, each account's shell and groups, the state of
//! every unit, and which units read what and whether they ran. Kept in `pending/<id>/` (root's,
//! 0700) before the push changes anything; put back by [`revert`], which first gives back what the
//! push made and leaves every unit that ran before the push running (the push's change may have
//! made one exit).
//!
//! Containers and packages are not kept: a revert leaves them as the push made them (docs/guide.md
//! says so).

mod beyond;
mod revert;
mod unit;

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use mesh_wire::{Cost, Declaration, Spec};
use serde::{Deserialize, Serialize};

use crate::apply;
use crate::files;
use crate::record::{Entry, Paths, Record};
use beyond::{KeptAccount, KeptLink, KeptSetting};
pub(crate) use revert::revert;
use unit::KeptUnit;

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
    /// What was at the path of every link the push may make, move or give back.
    #[serde(default)]
    links: Vec<KeptLink>,
    /// Every kernel setting the push may set or give back, as it was.
    #[serde(default)]
    settings: Vec<KeptSetting>,
    /// Every account whose shell and groups the push may change, as they were.
    #[serde(default)]
    accounts: Vec<KeptAccount>,
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

    /// Notes what a declared resource of `spec` may touch, as its kind says: the files it
    /// writes and the units that read them, the directories it makes or sets, the unit it puts
    /// in a state (kept now).
    fn touch_declared(
        &mut self,
        spec: &Spec,
        paths: &Paths,
        touched: &mut Touched,
    ) -> io::Result<()> {
        let said = apply::touches(spec, paths);
        for unit in &said.units {
            self.keep_unit(paths.system.as_ref(), unit)?;
        }
        touched.take(said);
        Ok(())
    }

    /// Notes what giving back (or changing) a resource the record holds may touch, as its kind
    /// says, and the kept originals a give-back deletes.
    fn touch_recorded(
        &mut self,
        entry: &Entry,
        paths: &Paths,
        touched: &mut Touched,
    ) -> io::Result<()> {
        let said = apply::touches_recorded(entry);
        for unit in &said.units {
            if !self.units.iter().any(|u| &u.unit == unit) {
                self.keep_unit(paths.system.as_ref(), unit)?;
            }
        }
        self.originals.extend(said.originals.iter().cloned());
        touched.take(said);
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
        for path in &touched.links {
            self.links
                .push(KeptLink::now(paths, path, |bytes| blobs.keep(bytes))?);
        }
        self.settings.extend(
            touched
                .settings
                .iter()
                .filter_map(|name| KeptSetting::now(paths, name)),
        );
        for name in &touched.accounts {
            self.accounts.push(KeptAccount::now(paths, name)?);
        }
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
    links: BTreeSet<String>,
    settings: BTreeSet<String>,
    accounts: BTreeSet<String>,
}

/// What applying or giving back one resource may touch, as its kind says (`Kind::touches`,
/// `GiveBack::touches`): the files it writes with the units that read each and what a change
/// costs them, the directories it may make or set, the units it puts in a state, and the kept
/// originals its give-back deletes.
#[derive(Default)]
pub(crate) struct Touches {
    pub(crate) files: Vec<(String, Vec<String>, Cost)>,
    pub(crate) dirs: Vec<String>,
    pub(crate) units: Vec<String>,
    pub(crate) originals: Vec<String>,
    /// Links it may make, move or give back.
    pub(crate) links: Vec<String>,
    /// Kernel settings it may set or give back, by name.
    pub(crate) settings: Vec<String>,
    /// Users whose shell and groups it may change, by name.
    pub(crate) accounts: Vec<String>,
}

impl Touches {
    /// A file written as its `costing` says (its readers pay the dearest of its own cost and its
    /// settings'), and the directories writing it would make.
    pub(crate) fn written(path: &str, costing: &mesh_wire::Costing, paths: &Paths) -> Touches {
        let cost = costing
            .settings
            .values()
            .map(|s| s.cost)
            .fold(costing.cost, Cost::max);
        Touches {
            files: vec![(path.to_string(), costing.units.clone(), cost)],
            dirs: paths.machine.missing_ancestors(Path::new(path)),
            ..Touches::default()
        }
    }

    /// A file given back, which the units that read it pay for as the record says.
    pub(crate) fn given_back(path: &str, readers: &crate::record::Readers) -> Touches {
        Touches {
            files: vec![(path.to_string(), readers.units.clone(), readers.cost)],
            ..Touches::default()
        }
    }
}

impl Touched {
    fn take(&mut self, said: Touches) {
        for (path, readers, cost) in &said.files {
            self.add(path, readers, *cost);
        }
        self.dirs.extend(said.dirs);
        self.links.extend(said.links);
        self.settings.extend(said.settings);
        self.accounts.extend(said.accounts);
    }

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
