//! One payment per unit per run for the units of declared processes and timers
//! (a timer found by an attacker too).
//!
//! A process restarts itself when its own files change; were its unit also paid in
//! [`Run::pay_units`] for a keys file or a file it reads, a run changing both would restart it
//! twice, the first time before its new command is even written. So `pay_units` leaves a
//! declared process's unit to its process ([`Run::leave_to_process`]), which pays once, after
//! every file of the run is written: its own restart (a reload folded into it), its start (a
//! unit started reads everything, so nothing is said of it), or, when the process itself does
//! not move, what its files owe. A process that never gets that far (refused, failed before
//! its unit is touched) has its unit paid as any other's once the units are in their state.

use mesh_wire::{Cost, UnitOutcome};

use super::Run;
use crate::record::Record;
use crate::system::SystemError;
use crate::units;

/// What a unit's files owe, left to its process to pay.
pub(super) struct Left {
    cost: Cost,
    /// The record owed it when the run began: an earlier restart of it failed.
    owed_before: bool,
    settled: Option<Settled>,
}

/// How a process settled what its unit's files owed.
enum Settled {
    /// Restarted by its process for its own change: a reload owed is folded into it.
    Restarted,
    /// Paid for its files alone (restarted, reloaded, or not running).
    Paid(&'static str),
    /// Started by this run: it read every change as it started; nothing to say of it.
    Started,
    /// Its restart or start failed: the cost stays owed for the next run.
    Failed(SystemError),
    /// Held, neither started nor restarted (what it needs was refused), and why: the cost stays
    /// owed for the next run.
    Held(String),
}

impl Run<'_> {
    /// Whether `unit`'s cost is left to its declared process; if so, it is noted as owed.
    pub(super) fn leave_to_process(&mut self, unit: &str, cost: Cost, owed_before: bool) -> bool {
        if !self.processes.contains(unit) {
            return false;
        }
        self.left.insert(
            unit.to_string(),
            Left {
                cost,
                owed_before,
                settled: None,
            },
        );
        true
    }

    /// The cost `unit`'s files owe that its process has not settled yet, if any.
    pub(super) fn owed_to(&self, unit: &str) -> Option<Cost> {
        self.left
            .get(unit)
            .filter(|l| l.settled.is_none())
            .map(|l| l.cost)
    }

    /// The process restarted its unit (or, in a dry run, would): what its files owe is paid
    /// with it.
    pub(super) fn restarted_by_process(&mut self, unit: &str, record: &mut Record) {
        self.settle(unit, Settled::Restarted, record);
    }

    /// The process started its unit (or, in a dry run, would): it reads every change as it
    /// starts.
    pub(super) fn started_by_process(&mut self, unit: &str, record: &mut Record) {
        self.settle(unit, Settled::Started, record);
    }

    /// The process's restart or start of its unit failed: what its files owe stays owed.
    pub(super) fn not_paid_by_process(
        &mut self,
        unit: &str,
        error: &SystemError,
        record: &mut Record,
    ) {
        self.settle(unit, Settled::Failed(error.clone()), record);
    }

    /// The process does not move its unit: what its files owe is paid now, as `pay_units`
    /// would have (and a probe it declares is asked after).
    pub(super) fn pay_left(&mut self, unit: &str, record: &mut Record) {
        let Some(left) = self.left.get(unit).filter(|l| l.settled.is_none()) else {
            return;
        };
        if !self.applying() {
            return;
        }
        let settled = match units::pay(
            self.paths.system.as_ref(),
            unit,
            left.cost,
            left.owed_before,
        ) {
            Ok(done) => {
                if matches!(done, "restarted" | "reloaded") {
                    self.paid.insert(unit.to_string(), done);
                }
                Settled::Paid(done)
            }
            Err(e) => Settled::Failed(e),
        };
        self.settle(unit, settled, record);
    }

    /// Holds `unit`: what its files owe is neither paid nor forgotten.
    pub(super) fn hold_left(&mut self, unit: &str, why: &str, record: &mut Record) {
        if self.left.get(unit).is_some_and(|l| l.settled.is_none()) {
            self.settle(unit, Settled::Held(why.to_string()), record);
        }
    }

    fn settle(&mut self, unit: &str, settled: Settled, record: &mut Record) {
        let applying = self.applying();
        let Some(left) = self.left.get_mut(unit) else {
            return;
        };
        if applying {
            match &settled {
                Settled::Failed(_) | Settled::Held(_) => {
                    record.units.entry(unit.to_string()).or_default().owed = left.cost
                }
                Settled::Restarted | Settled::Paid(_) | Settled::Started => {
                    record.units.remove(unit);
                }
            }
        }
        left.settled = Some(settled);
    }

    /// Once every unit is in its state: each unit left to a process says what its process did
    /// (a restart, though a reload was owed), one its process started says nothing, and one no
    /// process settled is paid as any other.
    pub(super) fn settle_left(&mut self, record: &mut Record, units: &mut Vec<UnitOutcome>) {
        let unsettled: Vec<String> = self
            .left
            .iter()
            .filter(|(_, l)| l.settled.is_none())
            .map(|(u, _)| u.clone())
            .collect();
        for unit in unsettled {
            self.pay_left(&unit, record);
        }
        let applying = self.applying();
        units.retain_mut(|u| {
            let Some(left) = self.left.get(&u.unit) else {
                return true;
            };
            match &left.settled {
                Some(Settled::Started) => false,
                Some(Settled::Restarted) => {
                    u.action = Cost::Restart;
                    u.done = applying.then(|| "restarted".to_string());
                    true
                }
                Some(Settled::Paid(done)) => {
                    u.done = Some((*done).to_string());
                    true
                }
                Some(Settled::Failed(e)) => {
                    u.error = Some(e.to_string());
                    true
                }
                Some(Settled::Held(why)) => {
                    u.error = Some(why.clone());
                    true
                }
                None => true,
            }
        });
    }
}
