//! Applying a declaration: every declared resource made as declared, every resource the record
//! holds that is no longer declared undone, and every unit paid what the changes cost it.
//!
//! Order ([`kind::Phase`], each kind's in its own file): what is no longer declared is given back
//! first (units stopped before their files go, files before their directories); then
//! repositories, packages, groups, users, directories, files and keys are made (what a change
//! owes its units is written to the record before the change is made); then the files of
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
#[cfg(test)]
mod first_apply_tests;
mod give_back;
mod group;
mod held;
#[cfg(test)]
mod hostile_tests;
mod keys;
mod kind;
mod on_disk;
mod once;
mod owed;
mod package;
#[cfg(test)]
mod package_tests;
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
mod system_error_tests;
#[cfg(test)]
mod system_tests;
mod timer;
#[cfg(test)]
mod unchanged_tests;
mod user;
mod user_keys;
mod validate;

pub(crate) use accounts::account_of;
pub(crate) use container::INSTANCE_LABEL;
pub(crate) use error::{ApplyError, Error, Failure, refuse_stale};
pub(crate) use give_back::give_back_made;
pub(crate) use held::{Held, lock};
pub(crate) use kind::{adopt, parents_made, reverted, touches, touches_recorded};
pub(crate) use process::{env_file_there, files_of};
pub(crate) use sysctl::{read_value as sysctl_value, write_value as set_sysctl_value};

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use mesh_wire::{
    Cost, Declaration, Mode, Outcome, Report, Resource, ServiceSpec, State, Undo, UnitOutcome,
    VERSION,
};

use crate::files;
use crate::record::{Entry, Paths, Record};
use crate::units;
use kind::Phase;

/// Applies (or, in a dry run, only measures) `declaration` on this machine; an apply holds the
/// machine's lock throughout.
pub(crate) fn run(declaration: &Declaration, mode: Mode, paths: &Paths) -> Result<Report, Error> {
    match mode {
        Mode::Adopt => crate::adopt::run(declaration, paths),
        Mode::DryRun => {
            let _looking = held::lock_to_look(paths)?;
            crate::steps::done("lock");
            let new_machine = !paths.record().exists();
            let record = held::record_without_lock(paths, declaration.expects_record)?;
            crate::steps::done("record read");
            measure_or_apply(declaration, mode, paths, record, new_machine).map(with_facts)
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
    let report = measure_or_apply(declaration, mode, paths, record, held.new_machine())?;
    // a dry run under the lock only tells the apply after it whether a change asks for
    // confirmation: nobody reads its facts, so they are not gathered twice
    Ok(if dry_run { report } else { with_facts(report) })
}

/// `report` with what the machine says it is, gathered now.
fn with_facts(mut report: Report) -> Report {
    report.facts = Some(crate::facts::gather());
    crate::steps::done("facts");
    report
}

/// `new_machine`: the machine had no record (and no signs of the mesh) when this run began.
fn measure_or_apply(
    declaration: &Declaration,
    mode: Mode,
    paths: &Paths,
    mut record: Record,
    new_machine: bool,
) -> Result<Report, Error> {
    let mut run = Run::begin(declaration, mode, paths, &record);
    let declared: BTreeSet<&str> = declaration
        .resources
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    // A unit's found state is taken before anything of this run can touch it.
    for resource in &declaration.resources {
        if let Some(service) = resource.spec.get::<ServiceSpec>() {
            run.find_service(resource, service, &mut record)?;
        }
    }
    crate::steps::done("units' state");
    // What the operator holds back stays as the machine has it: neither undone nor applied.
    let kept: BTreeSet<&str> = declaration
        .keep
        .iter()
        .map(String::as_str)
        .filter(|id| !declared.contains(id) && record.resources.contains_key(*id))
        .collect();
    run.give_back_undeclared(&mut record, |id| declared.contains(id) || kept.contains(id));
    // Then what is declared, phase by phase; before the units are put in their state, the
    // files they read are checked and the units paid.
    let mut units = Vec::new();
    for phase in Phase::ORDER {
        if phase == Phase::Units {
            // every file is in place: each unit's files are checked together, all kept or all
            // put back
            run.check_written(&mut record)?;
            units = run.pay_units_not_stopped(declaration, &mut record);
        }
        run.apply_phase(declaration, phase, &mut record);
        if phase == Phase::Repositories {
            run.update_apt(&mut record);
        }
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
    run.name_undo(&record, |id| declared.contains(id) || kept.contains(id));
    crate::steps::done("resources");
    if mode == Mode::Apply {
        run.finish(declaration, &mut record, !units.is_empty())?;
        crate::steps::done("record written");
    }
    Ok(Report {
        version: VERSION,
        mode,
        hostname: crate::facts::hostname(),
        host_keys: crate::facts::host_keys(&paths.machine),
        new_machine,
        resources: run.outcomes,
        units,
        adoption: None,
        awaiting: None,
        reverted: Vec::new(),
        pending: None,
        generation: record.generation,
        facts: None,
        steps: Vec::new(),
        generation_not_kept: None,
    })
}

impl<'a> Run<'a> {
    /// A run of `declaration` on the machine of `paths`, whose record is `record`: every
    /// declared unit asked about at once (a run that changes nothing asks no more), and what
    /// the record says is owed from earlier runs owed again.
    fn begin(declaration: &Declaration, mode: Mode, paths: &'a Paths, record: &Record) -> Self {
        let declared: Vec<String> = declaration
            .resources
            .iter()
            .filter_map(|r| kind::unit(&r.spec))
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
                .filter(|r| kind::pays_its_files(&r.spec))
                .filter_map(|r| kind::unit(&r.spec))
                .collect(),
            left: BTreeMap::new(),
            absent: declaration
                .resources
                .iter()
                .filter_map(|r| Some((r, r.spec.get::<mesh_wire::PackageSpec>()?)))
                .filter(|(_, p)| p.absent)
                .map(|(r, p)| (p.name.clone(), r.id.clone()))
                .collect(),
        };
        for (unit, entry) in &record.units {
            if entry.owed > Cost::None {
                run.owe(unit, entry.owed, owed::EARLIER);
                run.earlier.insert(unit.clone());
            }
        }
        run
    }

    /// Applies every declared resource of `phase`, in the declaration's order.
    fn apply_phase(&mut self, declaration: &Declaration, phase: Phase, record: &mut Record) {
        for resource in declaration
            .resources
            .iter()
            .filter(|r| kind::phase(&r.spec) == phase)
        {
            let outcome = self.apply(resource, record);
            self.outcomes.push(outcome);
            fault::at(self.mode, self.paths, &resource.id);
        }
    }

    /// Pays the units what this run's changes owe them, but for a unit declared stopped or
    /// stopped on the way out: it is not restarted on its way down (a process restarts itself).
    fn pay_units_not_stopped(
        &mut self,
        declaration: &Declaration,
        record: &mut Record,
    ) -> Vec<UnitOutcome> {
        let stopped = std::mem::take(&mut self.stopped);
        let not_paid: BTreeSet<&str> = declaration
            .resources
            .iter()
            .filter_map(|r| kind::stopped_unit(&r.spec))
            .chain(stopped.iter().map(String::as_str))
            .collect();
        self.pay_units(record, &not_paid)
    }

    /// Names, on the outcome of each resource `stays` (declared or held back), what undeclaring
    /// it would do.
    fn name_undo(&mut self, record: &Record, stays: impl Fn(&str) -> bool) {
        for outcome in &mut self.outcomes {
            if stays(&outcome.id)
                && let Some(entry) = record.resources.get(&outcome.id)
            {
                let undo = entry.undo();
                if undo != Undo::default() {
                    outcome.undo = Some(undo);
                }
            }
        }
    }

    /// An apply's end: a new generation if anything changed (`units_paid`: a unit was owed a
    /// payment), the record saved, and the originals given back deleted.
    fn finish(
        &mut self,
        declaration: &Declaration,
        record: &mut Record,
        units_paid: bool,
    ) -> Result<(), Error> {
        // a push that changed nothing is no generation: the machine is as the last one left it
        let changed = units_paid
            || self
                .outcomes
                .iter()
                .any(|o| matches!(o.state, State::Created | State::Changed | State::Removed));
        if changed {
            record.generation = Some(next_generation(record, declaration));
        }
        record.save(self.paths)?;
        self.forget_spent(record);
        crate::adopt::forget_notes(self.paths);
        Ok(())
    }

    /// Deletes the originals this run gave back, now that the record that named them is saved,
    /// but for one the record still names (records written before originals were kept per
    /// resource share one by content).
    fn forget_spent(&self, record: &Record) {
        let named: BTreeSet<&str> = record
            .resources
            .values()
            .filter_map(|entry| match entry {
                Entry::File(f) => f.original.as_ref().map(|o| o.blob.as_str()),
                _ => None,
            })
            .collect();
        for blob in self
            .spent_blobs
            .iter()
            .filter(|b| !named.contains(b.as_str()))
        {
            let _ = files::HOST.remove(&self.paths.original(blob));
        }
    }
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

struct Run<'a> {
    mode: Mode,
    paths: &'a Paths,
    /// What each unit is owed, by cause (a resource id, or [`owed::EARLIER`]).
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
    /// The packages declared absent, with their resources' ids: removing one may take another
    /// of them with it, and no package besides.
    absent: BTreeMap<String, String>,
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
        if let Some(held) = self.hold_for_refused_requirement(resource, record) {
            return held;
        }
        let result = kind::apply(self, resource, record);
        result.unwrap_or_else(|e| {
            outcome(
                &resource.id,
                State::Failed,
                format!("{}: {}", resource.spec.target(), e.failure),
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
    ) -> Result<(&'p std::path::Path, (u32, u32)), Failure> {
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
}

#[cfg(test)]
pub(crate) mod testkit;
