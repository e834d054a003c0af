//! Confirm or revert: a push that changes a resource asking for confirmation (sshd, network,
//! firewall: what can cut the operator off) is undone by the helper itself unless the operator
//! confirms it over a new SSH connection in time.
//!
//! Before applying, the helper keeps what it needs to put the machine back ([`kept`]) in
//! `pending/<id>/` and starts a waiter as a transient systemd unit (`mesh-confirm-<id>`), so
//! neither the SSH session dying nor the helper dying mid-apply leaves the change in place; the
//! waiter's deadline runs from when the helper says it has applied. `confirm <id>` and the
//! waiter's deadline race for the one rename that claims `pending/<id>`: whichever wins, the
//! other sees it gone. A revert leaves a note in `reverted/`, said by the next run's report.
//! An apply decides, keeps and applies under the machine's lock, and a waiter claims and
//! reverts under it: no other helper's work falls between.

mod boot;
mod kept;
mod ledger;
#[cfg(test)]
mod tests;
mod waiter;

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mesh_wire::{Awaiting, CONFIRM_WITHIN, Declaration, HelperExit, Mode, Report, Reverted, State};

use crate::apply::{self, Error};
use crate::files;
use crate::record::Paths;
use kept::Kept;
pub(crate) use kept::Touches;
use ledger::Fate;
use waiter::{start_waiter, waiter_unit};

/// Runs the helper on `declaration`, keeping what is needed to revert when the apply changes a
/// resource that asks for confirmation, and says earlier reverts.
///
/// An apply holds the machine's lock from before it looks for a change awaiting confirmation
/// until it has applied and answered: a second helper that kept, or applied, between this one's
/// decision and its apply would have its revert undo this one's change, or its lock-out
/// confirmed by this one's confirmation. The waiter reverts under the same lock.
#[cfg(test)]
pub(crate) fn run(declaration: &Declaration, mode: Mode, paths: &Paths) -> Result<Report, Error> {
    run_as_sent(declaration, declaration, mode, paths)
}

/// [`run`], where `sent` is the declaration as it came (its secrets still sealed): what the
/// machine keeps of a generation it makes (see `generations`).
pub(crate) fn run_as_sent(
    declaration: &Declaration,
    sent: &Declaration,
    mode: Mode,
    paths: &Paths,
) -> Result<Report, Error> {
    match mode {
        Mode::DryRun => {
            // before and after: a change that begins or ends during the dry run is unsettled
            let before = pending(paths);
            let mut report = apply::run(declaration, mode, paths)?;
            report.pending = before.or_else(|| pending(paths));
            return Ok(with_notes(report, mode, paths));
        }
        Mode::Adopt => {
            // an adopt writes the record too: a revert would put the one before it back
            if let Some(id) = pending(paths) {
                return Err(Error::Awaiting(id));
            }
            let report = apply::run(declaration, mode, paths)?;
            return Ok(with_notes(report, mode, paths));
        }
        Mode::Apply => {}
    }
    let held = apply::Held::to_apply(paths, declaration.expects_record)?;
    crate::steps::done("lock");
    if let Some(id) = awaiting(paths, &held)? {
        return Err(Error::Awaiting(id));
    }
    crate::steps::done("waiting change looked for");
    let record = held.record(paths, declaration.expects_record)?;
    crate::steps::done("record read");
    // under the lock, before anything is kept or changed
    apply::refuse_stale(declaration, &record)?;
    let before = record.generation.clone();
    let asks = asking(declaration);
    let asking = !asks.is_empty() && would_change(declaration, paths, &held, &asks)?;
    crate::steps::done("confirmation asked for");
    if !asking {
        let mut report = apply::run_held(declaration, false, paths, &held, record)?;
        crate::generations::keep_made(&mut report, before.as_ref(), sent, paths);
        crate::steps::done("generation kept");
        return Ok(with_notes(report, mode, paths));
    }
    let id = files::random_hex()?;
    let deadline = declaration.confirm_within.unwrap_or(CONFIRM_WITHIN);
    let dir = keep_and_wait(declaration, &record, paths, &id, deadline)?;
    let mut report = match apply::run_held(declaration, false, paths, &held, record) {
        Ok(report) => report,
        Err(e) => {
            forget(&id, &dir, paths);
            return Err(e);
        }
    };
    let resources = changed(&report, &asks);
    if resources.is_empty() {
        // what asked for confirmation failed or was put back: nothing to confirm
        forget(&id, &dir, paths);
        crate::generations::keep_made(&mut report, before.as_ref(), sent, paths);
        return Ok(with_notes(report, mode, paths));
    }
    crate::generations::keep_made_awaiting(&dir, &mut report, before.as_ref(), sent);
    // the waiter's deadline runs from here
    if let Err(e) = files::HOST.write_atomically(&dir.join(APPLIED), b"", None, 0o600) {
        let reverted =
            claim(paths, &id)?.map(|claimed| revert_claimed(paths, &held, &id, &claimed, false));
        return Err(Error::Record(io::Error::other(format!(
            "cannot tell the waiter the change is made ({e}), so it was reverted now: {}",
            reverted.map(|r| r.restored.join("; ")).unwrap_or_default()
        ))));
    }
    report.awaiting = Some(Awaiting {
        id,
        deadline,
        resources,
    });
    Ok(with_notes(report, mode, paths))
}

/// Keeps what `declaration` would change on the machine `record` describes, for change `id`,
/// and starts the waiter that reverts it unless it is confirmed within `deadline`; the
/// change's directory. Nothing is changed if either fails.
fn keep_and_wait(
    declaration: &Declaration,
    record: &crate::record::Record,
    paths: &Paths,
    id: &str,
    deadline: u64,
) -> Result<PathBuf, Error> {
    let dir = kept::dir(paths, id);
    let kept = Kept::take(declaration, Some(record), &dir, paths)
        .and_then(|_| boot::install(id, &dir, paths));
    if let Err(e) = kept {
        forget(id, &dir, paths);
        return Err(Error::Record(io::Error::other(format!(
            "cannot keep what the push would change, so nothing was changed: {e}"
        ))));
    }
    // the waiter runs before anything changes: a helper that dies while it applies (killed, the
    // OOM killer) leaves a change no waiter would revert, and an operator locked out
    if let Err(e) = start_waiter(id, deadline, paths) {
        forget(id, &dir, paths);
        return Err(Error::Record(io::Error::other(format!(
            "cannot start the waiter that reverts the change unless it is confirmed, so nothing \
             was changed: {e}"
        ))));
    }
    Ok(dir)
}

/// The resources of `declaration` that ask for confirmation, those it takes off too.
fn asking(declaration: &Declaration) -> BTreeSet<&str> {
    declaration
        .resources
        .iter()
        .filter(|r| r.confirm)
        .map(|r| r.id.as_str())
        .chain(declaration.confirm_removals.iter().map(String::as_str))
        .collect()
}

/// Whether applying `declaration` would change one of `asks`: only such a push waits for a
/// confirmation.
fn would_change(
    declaration: &Declaration,
    paths: &Paths,
    held: &apply::Held,
    asks: &BTreeSet<&str>,
) -> Result<bool, Error> {
    let record = held.record(paths, declaration.expects_record)?;
    let measured = apply::run_held(declaration, true, paths, held, record)?;
    Ok(!changed(&measured, asks).is_empty())
}

/// Drops what was kept for change `id`, in `dir`, and its boot-time revert: nothing to undo.
fn forget(id: &str, dir: &Path, paths: &Paths) {
    let _ = files::HOST.remove_tree(dir);
    let _ = boot::remove(id, paths);
}

/// `mesh-host confirm <id>`: the change stays. Asked again about the same change (its answer was
/// lost on the way back), it answers what became of it: exit 0 confirmed,
/// [`EXIT_ALREADY_REVERTED`] when its deadline passed first, [`EXIT_UNKNOWN_CHANGE`] when the
/// machine knows nothing of it.
pub(crate) fn confirm(id: &str, paths: &Paths) -> u8 {
    let dir = kept::dir(paths, id);
    let done = dir.with_extension("confirmed");
    match std::fs::rename(&dir, &done) {
        Ok(()) => {
            settle_confirmed(id, &done, paths);
            println!("confirmed {id}");
            HelperExit::Done.status()
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let fate = ledger::fate(paths, id).ok().flatten();
            if done.exists() || fate == Some(Fate::Confirmed) {
                // a confirmation already made: a retry after a lost answer hears it again
                settle_confirmed(id, &done, paths);
                println!("confirmed {id} (already)");
                HelperExit::Done.status()
            } else if note(paths, id).exists()
                || dir.with_extension("reverting").exists()
                || fate == Some(Fate::Reverted)
            {
                eprintln!("mesh-host: change {id} was already reverted: its deadline passed");
                HelperExit::AlreadyReverted.status()
            } else {
                eprintln!("mesh-host: change {id} is unknown on this machine");
                HelperExit::UnknownChange.status()
            }
        }
        Err(e) => {
            eprintln!("mesh-host: cannot confirm change {id}: {e}");
            HelperExit::Record.status()
        }
    }
}

/// Notes change `id` confirmed, then drops what was kept for it (in `done`): while the note
/// cannot be written, `done` itself says it.
fn settle_confirmed(id: &str, done: &Path, paths: &Paths) {
    if let Err(e) = crate::generations::settle_confirmed(done, paths) {
        eprintln!("mesh-host: the generation change {id} made is not kept on the machine: {e}");
    }
    if ledger::note(paths, id, Fate::Confirmed).is_ok() {
        forget(id, done, paths);
    } else {
        let _ = boot::remove(id, paths);
    }
}

/// Written in a change's kept directory once the helper has applied it: the waiter's deadline
/// runs from then.
const APPLIED: &str = "applied";

/// `mesh-host await-confirm <id> --deadline <seconds> --applier <pid>`, run by the waiter unit,
/// started before the helper `applier` applies: returns as soon as the change is confirmed or
/// dropped (nothing to confirm), reverts it at once if the applier dies before it has applied,
/// and at the deadline once it has.
pub(crate) fn await_confirm(id: &str, deadline: u64, applier: u32, paths: &Paths) -> u8 {
    let dir = kept::dir(paths, id);
    let mut applied_at: Option<Instant> = None;
    let why = loop {
        if !dir.exists() {
            return 0;
        }
        match applied_at {
            None if dir.join(APPLIED).exists() => applied_at = Some(Instant::now()),
            // the marker first: the applier writes it and then ends
            None if !alive(applier) && !dir.join(APPLIED).exists() => {
                break "its helper ended before it had applied it".to_string();
            }
            Some(at) if at.elapsed() >= Duration::from_secs(deadline) => {
                break format!("it was not confirmed within {deadline} s");
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    match claim_held(paths, id) {
        Ok(Some((held, claimed))) => {
            let reverted = revert_claimed(paths, &held, id, &claimed, false);
            eprintln!(
                "mesh-host: change {id}: {why}: reverted: {}",
                reverted.restored.join("; ")
            );
            u8::from(!reverted.failed.is_empty())
        }
        Ok(None) => HelperExit::Done.status(),
        Err(e) => {
            eprintln!("mesh-host: cannot revert change {id}: {e}");
            HelperExit::Record.status()
        }
    }
}

/// `mesh-host revert-pending <id> [--at-boot]`, run by systemd whenever the waiter unit stops,
/// and early at boot by the change's boot-time revert: after a confirmation or a revert there is
/// nothing left to do; a waiter stopped or killed before its deadline (by hand, the OOM killer,
/// a shutdown) or a machine that went down during the wait reverts the change now, not never.
pub(crate) fn revert_pending(id: &str, at_boot: bool, paths: &Paths) -> u8 {
    match claim_held(paths, id) {
        Ok(Some((held, claimed))) => {
            let reverted = revert_claimed(paths, &held, id, &claimed, at_boot);
            eprintln!(
                "mesh-host: change {id} was not confirmed before {}: reverted: {}",
                if at_boot {
                    "the machine went down"
                } else {
                    "its waiter stopped"
                },
                reverted.restored.join("; ")
            );
            u8::from(!reverted.failed.is_empty())
        }
        Ok(None) => HelperExit::Done.status(),
        Err(e) => {
            eprintln!("mesh-host: cannot revert change {id}: {e}");
            HelperExit::Record.status()
        }
    }
}

/// The change still awaiting confirmation, if any; one whose waiter is gone (the machine
/// rebooted) is reverted now, as its waiter would have. A boot-time revert left behind by a
/// change no longer pending is removed.
pub(crate) fn awaiting(paths: &Paths, held: &apply::Held) -> io::Result<Option<String>> {
    boot::sweep(paths);
    let pending = paths.root.join("pending");
    let entries = match std::fs::read_dir(&pending) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if !Awaiting::valid_id(&name) {
            continue;
        }
        let waiting = paths
            .system
            .unit_state(&waiter_unit(&name))
            .is_ok_and(|s| s.running == Some(true));
        if waiting {
            return Ok(Some(name));
        }
        if let Some(claimed) = claim(paths, &name)? {
            revert_claimed(paths, held, &name, &claimed, false);
        }
    }
    Ok(None)
}

/// A change this machine has not settled yet: awaiting its confirmation, or being reverted. A
/// dry run says it, and nothing it found may be taken as confirmed.
fn pending(paths: &Paths) -> Option<String> {
    let entries = std::fs::read_dir(paths.root.join("pending")).ok()?;
    entries.flatten().find_map(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        let id = name.strip_suffix(".reverting").unwrap_or(&name);
        Awaiting::valid_id(id).then(|| id.to_string())
    })
}

/// The resources in `asks` that `report` says changed (or would).
fn changed(report: &Report, asks: &BTreeSet<&str>) -> Vec<String> {
    report
        .resources
        .iter()
        .filter(|o| asks.contains(o.id.as_str()))
        .filter(|o| matches!(o.state, State::Created | State::Changed | State::Removed))
        .map(|o| o.id.clone())
        .collect()
}

/// Whether process `pid` still runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// Takes change `id` to revert it: the one rename `confirm` races with. `None` when it is gone
/// (confirmed, or already taken).
fn claim(paths: &Paths, id: &str) -> io::Result<Option<PathBuf>> {
    let dir = kept::dir(paths, id);
    let claimed = dir.with_extension("reverting");
    match std::fs::rename(&dir, &claimed) {
        Ok(()) => Ok(Some(claimed)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Takes the machine's lock, then change `id` to revert it ([`claim`]): a change is claimed and
/// reverted only under the lock, so no helper keeps or applies in between, and none finds it
/// gone (claimed) while it is not yet put back. `None` when it is gone already (confirmed,
/// reverted); the lock is not waited for then.
fn claim_held(paths: &Paths, id: &str) -> Result<Option<(apply::Held, PathBuf)>, Error> {
    if !kept::dir(paths, id).exists() {
        return Ok(None);
    }
    // a helper holds the lock only while it applies, and refuses to while this change waits:
    // wait for one that began just before, for a bounded time
    let started = Instant::now();
    let held = loop {
        match apply::Held::take(paths) {
            Err(Error::Busy) if started.elapsed() < Duration::from_secs(300) => {
                std::thread::sleep(Duration::from_millis(500));
            }
            other => break other?,
        }
    };
    Ok(claim(paths, id)?.map(|claimed| (held, claimed)))
}

/// Reverts a claimed change (the caller holds the machine's lock), notes it for the next report,
/// and drops what was kept and the boot-time revert.
fn revert_claimed(
    paths: &Paths,
    _held: &apply::Held,
    id: &str,
    claimed: &Path,
    at_boot: bool,
) -> Reverted {
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let reverted = match Kept::load(claimed) {
        Ok(kept) => kept::revert(&kept, claimed, paths, id, at, at_boot),
        Err(e) => failure(id, at, format!("what was kept cannot be read: {e}")),
    };
    let saved = serde_json::to_vec_pretty(&reverted)
        .map_err(io::Error::other)
        .and_then(|json| {
            files::HOST.private_dir(&paths.root.join("reverted"), 0o700)?;
            files::HOST.write_atomically(&note(paths, id), &json, None, 0o600)
        });
    if saved
        .and_then(|()| ledger::note(paths, id, Fate::Reverted))
        .is_ok()
    {
        forget(id, claimed, paths);
    }
    reverted
}

fn failure(id: &str, at: u64, why: String) -> Reverted {
    Reverted {
        id: id.to_string(),
        at,
        restored: Vec::new(),
        failed: vec![why],
    }
}

fn note(paths: &Paths, id: &str) -> PathBuf {
    paths.root.join("reverted").join(format!("{id}.json"))
}

/// `report` with the reverts noted since the last apply; an apply says them once.
fn with_notes(report: Report, mode: Mode, paths: &Paths) -> Report {
    let report = notes_added(report, mode, paths);
    crate::steps::done("notes read");
    report
}

fn notes_added(mut report: Report, mode: Mode, paths: &Paths) -> Report {
    let Ok(entries) = std::fs::read_dir(paths.root.join("reverted")) else {
        return report;
    };
    let mut notes: Vec<(Reverted, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let found = files::HOST.read(&entry.path()).ok()??;
            let reverted = serde_json::from_slice(&found.bytes).ok()?;
            Some((reverted, entry.path()))
        })
        .collect();
    notes.sort_by_key(|(r, _)| r.at);
    for (reverted, path) in notes {
        if mode == Mode::Apply {
            let _ = files::HOST.remove(&path);
        }
        report.reverted.push(reverted);
    }
    report
}
