//! Giving back what the record holds and the declaration no longer names: each kind's
//! [`GiveBack`](super::kind::GiveBack), in the reverse of the phases it is made in, deepest
//! paths first within a phase; then the parents the mesh made for them, once empty.

use std::cmp::Reverse;
use std::path::Path;

use mesh_wire::{Cost, Outcome, State, Undo};

use super::{Run, kind, outcome};
use crate::record::Record;

impl Run<'_> {
    /// Gives back every resource of the record that does not `stay` (declared, or held back
    /// by the operator). What is no longer declared goes first, units before the files they
    /// read, files before the directories that hold them. Files and keys given back are
    /// changes their readers pay for like any other.
    pub(super) fn give_back_undeclared(
        &mut self,
        record: &mut Record,
        stays: impl Fn(&str) -> bool,
    ) {
        let mut undeclared: Vec<(usize, String)> = record
            .resources
            .iter()
            .filter(|(id, _)| !stays(id.as_str()))
            .map(|(id, entry)| (kind::give_back_phase(entry).rank(), id.clone()))
            .collect();
        // the phases backwards; within one, deepest directories first
        undeclared.sort_by(|a, b| Reverse(a.0).cmp(&Reverse(b.0)).then_with(|| b.1.cmp(&a.1)));
        for (_, id) in undeclared {
            let outcome = self.undeclare(&id, record);
            self.outcomes.push(outcome);
        }
        self.remove_parents_made(record);
    }

    fn undeclare(&mut self, id: &str, record: &mut Record) -> Outcome {
        let Some(entry) = record.resources.get(id).cloned() else {
            return outcome(id, State::Unchanged, "not in the record");
        };
        let result = kind::give_back(self, id, &entry, record);
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
                outcome(id, State::Failed, e.failure.to_string())
            }
        }
    }
}
