//! What a run owes units, by cause: owed (and written to the record) before the change that
//! owes it is made, taken back when the change is not made, and paid once every file is in
//! place, at the strongest cost owed, once per unit.

use std::collections::BTreeSet;

use mesh_wire::{Cost, UnitOutcome};

use super::{Failure, Run};
use crate::record::Record;
use crate::units;

/// The cause of a cost the record kept from a run that did not pay it.
pub(super) const EARLIER: &str = "owed by an earlier push";

impl Run<'_> {
    pub(super) fn owe(&mut self, unit: &str, cost: Cost, because: &str) {
        self.owed
            .entry(unit.to_string())
            .or_default()
            .push((cost, because.to_string()));
    }

    /// Owes `cost` to each of `units` for `because`, and, when applying, writes it into the
    /// record first: the caller changes the machine only after this, so a helper killed at any
    /// instant leaves the cost owed for the next run.
    pub(super) fn owe_durably(
        &mut self,
        record: &mut Record,
        units: &[String],
        cost: Cost,
        because: &str,
    ) -> Result<(), Failure> {
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
            record.save(self.paths).map_err(Failure::Record)?;
        }
        Ok(())
    }

    /// Takes back what `causes` owed (files put back): each unit's record then owes only what
    /// its other causes do.
    pub(super) fn forgive(&mut self, record: &mut Record, causes: &BTreeSet<String>) {
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

    pub(super) fn pay_units(
        &mut self,
        record: &mut Record,
        stopping: &BTreeSet<&str>,
    ) -> Vec<UnitOutcome> {
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
                        (None, Some(e.to_string()))
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
