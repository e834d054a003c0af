//! Putting the machine back as a kept push says it was: the units it made stopped, its
//! directories and files as they were, the kept originals and the record as before, and every
//! unit that ran before running again, or paid what putting its files back cost it.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::Path;

use mesh_wire::{Cost, Reverted, State};

use super::unit::{put_back_made_unit, put_back_unit, run_again};
use super::{Kept, KeptDir, KeptFile};
use crate::files;
use crate::record::{Entry, LoadError, Paths, Record};
use crate::units;

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
    // what the push made is taken off as undeclaring it would, whatever its kind
    let (made_owed, still_made) = take_off_made(kept, dir, paths, &mut done);
    // a unit the push made goes down while its unit file is there to say how
    for unit in kept.units.iter().filter(|u| !u.exists) {
        put_back_made_unit(paths.system.as_ref(), unit, at_boot, &mut done);
    }
    // a directory that was there comes back before the files in it, shallowest first
    for d in kept.dirs.iter().filter(|d| d.was.is_some()) {
        note(&mut done, &d.path, put_back_dir(&paths.machine, d));
    }
    let (mut owed, unit_files) = put_back_files(kept, dir, paths, &mut done);
    for (unit, cost) in made_owed {
        let owed = owed.entry(unit).or_default();
        *owed = (*owed).max(cost);
    }
    for link in &kept.links {
        link.put_back(paths, dir, &mut done);
    }
    for setting in &kept.settings {
        setting.put_back(paths, &mut done);
    }
    for account in &kept.accounts {
        account.put_back(paths, &mut done);
    }
    // one the push made goes once the files are out of it, deepest first
    for d in kept.dirs.iter().rev().filter(|d| d.was.is_none()) {
        note(&mut done, &d.path, put_back_dir(&paths.machine, d));
    }
    put_back_originals(kept, dir, paths, &mut done);
    match put_back_record(kept, dir, paths, &still_made) {
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
        done.failed.push(e.to_string());
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
            Err(e) => done.failed.push(e.to_string()),
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

/// Gives back what the push made (in the record now, not in the one kept before it) of every
/// kind a revert undoes, as undeclaring it would: a link, a kernel setting, an account or a timer
/// goes as surely as a file. Says what that owes the units that read it (paid once the rest is
/// put back), and the ids it could not give back: the record put back keeps those, the mesh's.
fn take_off_made(
    kept: &Kept,
    dir: &Path,
    paths: &Paths,
    done: &mut Reverted,
) -> (BTreeMap<String, Cost>, BTreeSet<String>) {
    let records = kept_record(kept, dir).and_then(|before| Ok((before, record_now(paths)?)));
    let (before, mut now) = match records {
        Ok(records) => records,
        Err(e) => {
            done.failed
                .push(format!("{}: {e}", paths.record().display()));
            return Default::default();
        }
    };
    let made: BTreeSet<String> = now
        .resources
        .iter()
        .filter(|(id, e)| !before.resources.contains_key(*id) && crate::apply::reverted(e))
        .map(|(id, _)| id.clone())
        .collect();
    if made.is_empty() {
        return Default::default();
    }
    let (outcomes, owed) = match crate::apply::give_back_made(paths, &mut now, &made) {
        Ok(given) => given,
        Err(e) => {
            done.failed
                .push(format!("{}: {e}", paths.record().display()));
            return (BTreeMap::new(), made);
        }
    };
    for o in outcomes {
        match o.state {
            State::Removed => done.restored.push(format!("{}: {}", o.id, o.detail)),
            State::Failed => done.failed.push(format!(
                "{}: {}; the push made it, and the record keeps it as the mesh's",
                o.id, o.detail
            )),
            _ => {}
        }
    }
    let still_made = made
        .into_iter()
        .filter(|id| now.resources.contains_key(id))
        .collect();
    (owed, still_made)
}

fn unreadable(e: LoadError) -> io::Error {
    match e {
        LoadError::Io(e) => e,
        LoadError::Refused(r) => io::Error::other(r.to_string()),
    }
}

/// The record as it was before the push; a machine the mesh had never applied had none.
fn kept_record(kept: &Kept, dir: &Path) -> io::Result<Record> {
    match &kept.record {
        Some(blob) => {
            let found = files::HOST
                .read(&dir.join(blob))?
                .ok_or_else(|| io::Error::other(format!("its kept copy {blob} is gone")))?;
            Record::parse(&found.bytes, "the record kept before the push").map_err(unreadable)
        }
        None => Ok(Record::new()),
    }
}

fn record_now(paths: &Paths) -> io::Result<Record> {
    Ok(Record::load(paths)
        .map_err(unreadable)?
        .unwrap_or_else(Record::new))
}

/// Puts the record back as it was before the push, but for what a revert does not undo
/// (packages, containers) and what the push made that could not be given back (`still_made`):
/// those keep what the push made of them, so the record stays true to the machine and nothing
/// on it is left unowned. Says the ids of those the push had changed. A machine the mesh had
/// never applied gets an empty record, not none (its lock is a sign of the mesh, and a missing
/// record would then be taken for a lost one).
fn put_back_record(
    kept: &Kept,
    dir: &Path,
    paths: &Paths,
    still_made: &BTreeSet<String>,
) -> io::Result<Vec<String>> {
    let mut before = kept_record(kept, dir)?;
    let now = record_now(paths)?;
    let not_reverted = |(id, e): &(&String, &Entry)| {
        !crate::apply::reverted(e) || still_made.contains(id.as_str())
    };
    let as_json = |e: Option<&Entry>| e.and_then(|e| serde_json::to_value(e).ok());
    let ids: BTreeSet<String> = (before.resources.iter().chain(now.resources.iter()))
        .filter(not_reverted)
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
