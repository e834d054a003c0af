//! Applying a declaration: every declared resource made as declared, every resource the record
//! holds that is no longer declared undone, and every unit paid what the changes cost it.
//!
//! Order: what is no longer declared is given back first (units stopped before their files go,
//! files before their directories); then packages, directories, files and keys are made (what a
//! change owes its units is written to the record before the change is made); then the files of
//! each unit are checked together, all kept or all put back; then the units that read changed
//! files are reloaded or restarted, once each, at the strongest cost owed (a process's unit by
//! its process, with its own restart or start: [`once`]);
//! then services and processes are put in their declared state (so a unit the mesh starts reads
//! its new files, and a unit it stops is not restarted first).

mod access;
mod accounts;
mod apt_repository;
mod container;
mod directory;
mod effective;
mod env;
mod error;
mod fault;
mod file;
mod group;
mod held;
#[cfg(test)]
mod hostile_tests;
mod keys;
mod on_disk;
mod once;
mod package;
#[cfg(test)]
mod parents_tests;
mod process;
#[cfg(test)]
mod process_tests;
mod ready;
#[cfg(test)]
mod refused;
mod service;
#[cfg(test)]
mod stale_tests;
mod symlink;
mod sysctl;
#[cfg(test)]
mod system_tests;
mod timer;
mod user;
mod user_keys;
mod validate;

pub(crate) use container::INSTANCE_LABEL;
pub(crate) use error::{Error, refuse_stale};
pub(crate) use held::{Held, lock};
pub(crate) use process::{env_file_of, env_file_there, files_of, on_disk_digest};

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use mesh_wire::{
    Cost, Declaration, Mode, Outcome, Report, Resource, Spec, State, Undo, UnitOutcome, VERSION,
};

use crate::files;
use crate::record::{Entry, Paths, Record};
use crate::units;

/// Applies (or, in a dry run, only measures) `declaration` on this machine; an apply holds the
/// machine's lock throughout.
pub(crate) fn run(declaration: &Declaration, mode: Mode, paths: &Paths) -> Result<Report, Error> {
    match mode {
        Mode::Adopt => crate::adopt::run(declaration, paths),
        Mode::DryRun => {
            let _looking = held::lock_to_look(paths)?;
            let new_machine = !paths.record().exists();
            let record = held::record_without_lock(paths, declaration.expects_record)?;
            measure_or_apply(declaration, mode, paths, record, new_machine)
        }
        Mode::Apply => {
            let held = Held::to_apply(paths, declaration.expects_record)?;
            let record = held.record(paths, declaration.expects_record)?;
            refuse_stale(declaration, &record)?;
            run_held(declaration, false, paths, &held, record)
        }
    }
}

/// [`run`] for a caller that holds the machine's lock, with the record as [`Held::record`]
/// read it; `dry_run` only measures, as no other helper can change the machine meanwhile.
pub(crate) fn run_held(
    declaration: &Declaration,
    dry_run: bool,
    paths: &Paths,
    held: &Held,
    record: Record,
) -> Result<Report, Error> {
    let mode = if dry_run { Mode::DryRun } else { Mode::Apply };
    measure_or_apply(declaration, mode, paths, record, held.new_machine())
}

/// `new_machine`: the machine had no record (and no signs of the mesh) when this run began.
fn measure_or_apply(
    declaration: &Declaration,
    mode: Mode,
    paths: &Paths,
    mut record: Record,
    new_machine: bool,
) -> Result<Report, Error> {
    // one `systemctl show` for every declared unit: a run that changes nothing asks no more
    let declared: Vec<String> = declaration
        .resources
        .iter()
        .filter_map(|r| match &r.spec {
            Spec::Service(sv) => Some(sv.unit.clone()),
            Spec::Process(p) => Some(p.unit.clone()),
            Spec::Timer(t) => Some(t.timer_unit()),
            _ => None,
        })
        .collect();
    paths
        .system
        .prefetch(&declared.iter().map(String::as_str).collect::<Vec<_>>());
    let mut run = Run {
        mode,
        paths,
        owed: BTreeMap::new(),
        earlier: BTreeSet::new(),
        outcomes: Vec::new(),
        spent_blobs: Vec::new(),
        written: Vec::new(),
        gone: BTreeSet::new(),
        stopped: BTreeSet::new(),
        started: BTreeSet::new(),
        paid: BTreeMap::new(),
        parents_made: Vec::new(),
        apt: Default::default(),
        processes: declaration
            .resources
            .iter()
            .filter_map(|r| match &r.spec {
                Spec::Process(p) => Some(p.unit.clone()),
                // a timer restarts itself when it changes: it pays what its files owe with that
                Spec::Timer(t) => Some(t.timer_unit()),
                _ => None,
            })
            .collect(),
        left: BTreeMap::new(),
    };
    for (unit, entry) in &record.units {
        if entry.owed > Cost::None {
            run.owe(unit, entry.owed, EARLIER);
            run.earlier.insert(unit.clone());
        }
    }

    let declared: BTreeSet<&str> = declaration
        .resources
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    // A unit's found state is taken before anything of this run can touch it.
    for resource in &declaration.resources {
        if let Spec::Service(service) = &resource.spec {
            run.find_service(resource, service, &mut record)?;
        }
    }
    // What the operator holds back stays as the machine has it: neither undone nor applied.
    let kept: BTreeSet<&str> = declaration
        .keep
        .iter()
        .map(String::as_str)
        .filter(|id| !declared.contains(id) && record.resources.contains_key(*id))
        .collect();
    // What is no longer declared goes first, units before the files they read, files before
    // the directories that hold them. Files and keys given back are changes their readers pay
    // for like any other.
    let mut undeclared: Vec<(u8, String)> = record
        .resources
        .iter()
        .filter(|(id, _)| !declared.contains(id.as_str()) && !kept.contains(id.as_str()))
        .map(|(id, entry)| {
            let phase = match entry {
                Entry::Process(_) | Entry::Service(_) | Entry::Container(_) | Entry::Timer(_) => 0,
                Entry::File(_)
                | Entry::Keys(_)
                | Entry::Symlink(_)
                | Entry::Sysctl(_)
                | Entry::AptRepository(_) => 1,
                Entry::Directory(_) => 2,
                // a user after what runs as it and the files it owns, its groups after it
                Entry::User(_) => 3,
                Entry::Group(_) => 4,
                Entry::Package(_) => 5,
            };
            (phase, id.clone())
        })
        .collect();
    // deepest directories first
    undeclared.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
    for (_, id) in undeclared {
        let outcome = run.undeclare(&id, &mut record);
        run.outcomes.push(outcome);
    }
    run.remove_parents_made(&mut record);
    // Then what is declared: apt's repositories (and one `apt-get update` after them), packages,
    // groups, users (a directory's, a file's or a process's
    // owner may be one this run makes), directories, files and keys; the units that read changed
    // files are paid; then services and processes are put in their state.
    let phase = |spec: &Spec| match spec {
        Spec::AptRepository(_) => 0,
        Spec::Package(_) => 1,
        Spec::Group(_) => 2,
        Spec::User(_) => 3,
        Spec::Directory(_) => 4,
        Spec::File(_) | Spec::Keys(_) | Spec::Symlink(_) | Spec::Sysctl(_) => 5,
        Spec::Service(_) | Spec::Process(_) | Spec::Container(_) | Spec::Timer(_) => UNITS,
    };
    for step in 0..UNITS {
        for resource in declaration
            .resources
            .iter()
            .filter(|r| phase(&r.spec) == step)
        {
            let outcome = run.apply(resource, &mut record);
            run.outcomes.push(outcome);
            fault::at(mode, paths, &resource.id);
        }
        if step == 0 {
            run.update_apt(&mut record);
        }
    }
    // every file is in place: each unit's files are checked together, all kept or all put back
    run.check_written(&mut record)?;
    // A unit declared stopped, or stopped on the way out, is not restarted on its way down; a
    // process restarts itself.
    let stopped = std::mem::take(&mut run.stopped);
    let not_paid: BTreeSet<&str> = declaration
        .resources
        .iter()
        .filter_map(|r| match &r.spec {
            Spec::Service(s) if s.running == Some(false) => Some(s.unit.as_str()),
            _ => None,
        })
        .chain(stopped.iter().map(String::as_str))
        .collect();
    let mut units = run.pay_units(&mut record, &not_paid);
    for resource in declaration
        .resources
        .iter()
        .filter(|r| phase(&r.spec) == UNITS)
    {
        let outcome = run.apply(resource, &mut record);
        run.outcomes.push(outcome);
        fault::at(mode, paths, &resource.id);
    }
    run.settle_left(&mut record, &mut units);
    for u in &mut units {
        if run.started.contains(&u.unit) && u.done.as_deref() == Some(units::NOT_RUNNING) {
            u.done = Some(units::STARTED.to_string());
        }
    }
    let left = "held back by the operator: left as the machine has it";
    run.outcomes
        .extend(kept.iter().map(|id| outcome(id, State::Unchanged, left)));
    for outcome in &mut run.outcomes {
        if (declared.contains(outcome.id.as_str()) || kept.contains(outcome.id.as_str()))
            && let Some(entry) = record.resources.get(&outcome.id)
        {
            let undo = entry.undo();
            if undo != Undo::default() {
                outcome.undo = Some(undo);
            }
        }
    }

    if mode == Mode::Apply {
        // a push that changed nothing is no generation: the machine is as the last one left it
        let changed = !units.is_empty()
            || run
                .outcomes
                .iter()
                .any(|o| matches!(o.state, State::Created | State::Changed | State::Removed));
        if changed {
            record.generation = Some(next_generation(&record, declaration));
        }
        record.save(paths)?;
        // Only now is a given-back original no longer needed, unless the record still names it
        // (records written before originals were kept per resource share one by content).
        let named: BTreeSet<&str> = record
            .resources
            .values()
            .filter_map(|entry| match entry {
                Entry::File(f) => f.original.as_ref().map(|o| o.blob.as_str()),
                _ => None,
            })
            .collect();
        for blob in run
            .spent_blobs
            .iter()
            .filter(|b| !named.contains(b.as_str()))
        {
            let _ = files::HOST.remove(&paths.original(blob));
        }
        crate::adopt::forget_notes(paths);
    }
    Ok(Report {
        version: VERSION,
        mode,
        hostname: hostname(),
        host_keys: host_keys(&paths.machine),
        new_machine,
        resources: run.outcomes,
        units,
        adoption: None,
        awaiting: None,
        reverted: Vec::new(),
        pending: None,
        generation: record.generation,
        facts: Some(crate::facts::gather()),
    })
}

/// The generation this apply makes: one past the newer of the machine's and the plan's, the
/// sending inventory's, now.
fn next_generation(record: &Record, declaration: &Declaration) -> mesh_wire::Generation {
    let planned = declaration.planned.as_ref();
    mesh_wire::Generation {
        number: mesh_wire::next_number(record.generation.as_ref(), planned),
        inventory: planned.map(|p| p.inventory.clone()).unwrap_or_default(),
        pushed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        rolled_back_to: None,
        push: planned.and_then(|p| p.push.clone()),
    }
}

/// The machine's SSH host public keys, `TYPE BASE64` each, sorted: what tells this machine from
/// another one later given its address.
pub(crate) fn host_keys(root: &files::Root) -> Vec<String> {
    let dir = Path::new("/etc/ssh");
    let mut keys: Vec<String> = crate::signs::entries(&root.real(dir))
        .into_iter()
        .filter(|name| name.starts_with("ssh_host_") && name.ends_with("_key.pub"))
        .filter_map(|name| root.read(&dir.join(name)).ok().flatten())
        .filter_map(|found| {
            let text = String::from_utf8_lossy(&found.bytes).into_owned();
            let mut words = text.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect();
    keys.sort();
    keys
}

/// The machine's hostname, as it says it.
pub(crate) fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// The last phase of an apply: units put in their state, once every file is paid for.
const UNITS: u8 = 6;

/// The cause of a cost the record kept from a run that did not pay it.
const EARLIER: &str = "owed by an earlier push";

struct Run<'a> {
    mode: Mode,
    paths: &'a Paths,
    /// What each unit is owed, by cause (a resource id, or [`EARLIER`]).
    owed: BTreeMap<String, Vec<(Cost, String)>>,
    /// Units the record said were owed when this run began: an earlier payment of theirs failed,
    /// or a helper died before paying.
    earlier: BTreeSet<String>,
    outcomes: Vec<Outcome>,
    /// Kept originals put back in this run, deleted once the record no longer names them.
    spent_blobs: Vec<String>,
    /// Files written in this run, to be checked with the others of their units.
    written: Vec<validate::Written>,
    /// Paths this run removed (or, in a dry run, would have): a directory holding only these is
    /// empty by the time it is judged, in the real run as in the dry one.
    gone: BTreeSet<PathBuf>,
    /// Units this run stops on the way out: what their files owe is not paid.
    stopped: BTreeSet<String>,
    /// Units this run started: they read every file this run wrote as they started.
    started: BTreeSet<String>,
    /// Units this run restarted or reloaded for the files they read, and which of the two: a
    /// probe they declare is asked once their resource is put in its state.
    paid: BTreeMap<String, &'static str>,
    /// Parents the mesh made for the directories, files and links given back in this run:
    /// removed, when empty, once all of them are.
    parents_made: Vec<String>,
    /// The repositories this run wrote or gave back: apt's lists are updated once after them.
    apt: apt_repository::AptSources,
    /// The units of the declared processes: each pays what its files owe with its process.
    processes: BTreeSet<String>,
    /// What the files of a process's unit owe, left to its process ([`once`]).
    left: BTreeMap<String, once::Left>,
}

fn outcome(id: &str, state: State, detail: impl Into<String>) -> Outcome {
    Outcome {
        id: id.to_string(),
        state,
        detail: detail.into(),
        undo: None,
        seen: Vec::new(),
        micros: 0,
    }
}

impl Run<'_> {
    /// Applies one declared resource, timed; a failure is that resource's alone.
    fn apply(&mut self, resource: &Resource, record: &mut Record) -> Outcome {
        let begun = std::time::Instant::now();
        let mut outcome = self.apply_untimed(resource, record);
        outcome.micros = u64::try_from(begun.elapsed().as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        outcome
    }

    fn apply_untimed(&mut self, resource: &Resource, record: &mut Record) -> Outcome {
        // The operator checked these too, but the helper runs as root and trusts no sender: a
        // path that leaves its place or names the helper's state, or a mode that hands out
        // power, fails the resource before anything is looked at.
        if let Err(refused) = resource.spec.check() {
            return outcome(
                &resource.id,
                State::Failed,
                format!("{}: refused: {refused}", resource.spec.target()),
            );
        }
        if let Some(dir) = self.refused_directory_above(&resource.spec) {
            return outcome(
                &resource.id,
                State::Failed,
                format!(
                    "{}: not written: the directory {dir} it is in was refused in this run",
                    resource.spec.target()
                ),
            );
        }
        let result = match &resource.spec {
            Spec::File(f) => self.try_file(resource, f, record),
            Spec::Keys(k) => self.try_keys(resource, k, record),
            Spec::Service(s) => self.try_service(resource, s, record),
            Spec::Directory(d) => self.try_directory(resource, d, record),
            Spec::Package(p) => self.try_package(resource, p, record),
            Spec::Process(p) => self.try_process(resource, p, record),
            Spec::Container(c) => self.try_container(resource, c, record),
            Spec::Symlink(l) => self.try_symlink(resource, l, record),
            Spec::Sysctl(s) => self.try_sysctl(resource, s, record),
            Spec::Timer(t) => self.try_timer(resource, t, record),
            Spec::Group(g) => self.try_group(resource, g, record),
            Spec::User(u) => self.try_user(resource, u, record),
            Spec::AptRepository(a) => self.try_apt_repository(resource, a, record),
        };
        result.unwrap_or_else(|e| {
            outcome(
                &resource.id,
                State::Failed,
                format!("{}: {e}", resource.spec.target()),
            )
        })
    }

    /// The path a file or directory resource writes, and the ids of the owner and group it
    /// gets (looked up on this machine).
    fn owned_path<'p>(
        &self,
        path: &'p str,
        owner: &str,
        group: &str,
    ) -> Result<(&'p std::path::Path, (u32, u32)), String> {
        let path = std::path::Path::new(path);
        if !path.is_absolute() {
            return Err("not an absolute path".into());
        }
        Ok((
            path,
            crate::owners::ids(self.paths.system.as_ref(), owner, group)?,
        ))
    }

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
        self.owed
            .entry(unit.to_string())
            .or_default()
            .push((cost, because.to_string()));
    }

    /// Owes `cost` to each of `units` for `because`, and, when applying, writes it into the
    /// record first: the caller changes the machine only after this, so a helper killed at any
    /// instant leaves the cost owed for the next run.
    fn owe_durably(
        &mut self,
        record: &mut Record,
        units: &[String],
        cost: Cost,
        because: &str,
    ) -> Result<(), String> {
        let mut raised = false;
        for unit in units {
            self.owe(unit, cost, because);
            if self.applying() && cost > Cost::None {
                let entry = record.units.entry(unit.clone()).or_default();
                raised |= entry.owed < cost;
                entry.owed = entry.owed.max(cost);
            }
        }
        if raised {
            record
                .save(self.paths)
                .map_err(|e| format!("cannot save the record: {e}"))?;
        }
        Ok(())
    }

    /// Takes back what `causes` owed (files put back): each unit's record then owes only what
    /// its other causes do.
    fn forgive(&mut self, record: &mut Record, causes: &BTreeSet<String>) {
        let applying = self.applying();
        for (unit, owed) in &mut self.owed {
            let before = owed.len();
            owed.retain(|(_, because)| !causes.contains(because));
            if owed.len() == before || !applying {
                continue;
            }
            match owed.iter().map(|(c, _)| *c).max() {
                Some(cost) if cost > Cost::None => {
                    record.units.entry(unit.clone()).or_default().owed = cost;
                }
                _ => {
                    record.units.remove(unit);
                }
            }
        }
    }

    fn undeclare(&mut self, id: &str, record: &mut Record) -> Outcome {
        let Some(entry) = record.resources.get(id).cloned() else {
            return outcome(id, State::Unchanged, "not in the record");
        };
        let result = match &entry {
            // what is given back is a change its readers pay for, owed before it is made; a file
            // whose original was lost is left as it is, and costs nothing
            Entry::File(file) => (if file.original_lost {
                Ok(())
            } else {
                self.owe_durably(record, &file.readers.units, file.readers.cost, id)
            })
            .and_then(|()| self.give_back_file(file)),
            Entry::Keys(keys) => (if keys.originals_lost {
                Ok(())
            } else {
                self.owe_durably(record, &keys.readers.units, keys.readers.cost, id)
            })
            .and_then(|()| self.give_back_keys(keys)),
            Entry::Service(service) => self.give_back_service(service),
            Entry::Directory(dir) => self.give_back_directory(dir),
            Entry::Package(package) => self.give_back_package(package),
            Entry::Process(process) => self.give_back_process(process),
            Entry::Container(container) => self.give_back_container(container),
            Entry::Symlink(link) => self.give_back_symlink(link),
            Entry::Sysctl(sysctl) => self.give_back_sysctl(sysctl),
            Entry::Timer(timer) => self.give_back_timer(timer),
            Entry::Group(group) => self.give_back_group(group),
            Entry::User(user) => self.give_back_user(user),
            Entry::AptRepository(repo) => self.give_back_apt_repository(id, repo),
        };
        match result {
            Ok(detail) => {
                if self.applying() {
                    record.resources.remove(id);
                }
                // what was done, as the plan predicted it: one rule for both (`Entry::undo`)
                let mut done = entry.undo();
                done.settle(
                    |p| self.gone.contains(Path::new(p)),
                    |p| self.paths.machine.exists(Path::new(p)).unwrap_or(true),
                );
                for unit in &done.reloads {
                    self.owe(unit, Cost::Reload, id);
                }
                for unit in &done.restarts {
                    self.owe(unit, Cost::Restart, id);
                }
                self.stopped.extend(done.stops.iter().cloned());
                let mut removed = outcome(id, State::Removed, detail);
                removed.undo = (done != Undo::default()).then_some(done);
                removed
            }
            Err(e) => {
                // nothing was given back: its readers owe nothing for it
                self.forgive(record, &[id.to_string()].into());
                outcome(id, State::Failed, e)
            }
        }
    }

    fn pay_units(&mut self, record: &mut Record, stopping: &BTreeSet<&str>) -> Vec<UnitOutcome> {
        let owed = std::mem::take(&mut self.owed);
        let mut out = Vec::new();
        for (unit, causes) in owed {
            let cost = causes.iter().map(|(c, _)| *c).max().unwrap_or(Cost::None);
            if cost == Cost::None {
                continue;
            }
            // one cause once, though it may be owed both before and after its give-back
            let mut because: Vec<String> = Vec::new();
            for (_, b) in causes.into_iter().filter(|(c, _)| *c > Cost::None) {
                if !because.contains(&b) {
                    because.push(b);
                }
            }
            if stopping.contains(unit.as_str()) {
                record.units.remove(&unit);
                continue;
            }
            let owed_before = self.earlier.contains(&unit);
            // its process pays it, once, after its own files are written
            let left = self.leave_to_process(&unit, cost, owed_before);
            let (done, error) = if self.applying() && !left {
                match units::pay(self.paths.system.as_ref(), &unit, cost, owed_before) {
                    Ok(done) => {
                        record.units.remove(&unit);
                        if matches!(done, "restarted" | "reloaded") {
                            self.paid.insert(unit.clone(), done);
                        }
                        (Some(done.to_string()), None)
                    }
                    Err(e) => {
                        record.units.entry(unit.clone()).or_default().owed = cost;
                        (None, Some(e))
                    }
                }
            } else {
                (None, None)
            };
            out.push(UnitOutcome {
                unit,
                action: cost,
                because,
                done,
                error,
            });
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod testkit;
