//! Giving back what the record holds and the declaration no longer names: each kind's
//! [`GiveBack`](super::kind::GiveBack), in the reverse of the phases it is made in, deepest
//! paths first within a phase; then the parents the mesh made for them, once empty.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::Path;

use mesh_wire::{Cost, Declaration, Mode, Outcome, State, Undo, VERSION};

use super::{Run, kind, outcome};
use crate::record::{Paths, Record};

/// Gives back, as undeclaring each would, the resources of `record` named in `made`: what a push
/// awaiting confirmation made, taken off by its revert whatever its kind (a link, a kernel
/// setting, an account, a timer, as well as a file), so nothing it made is left unowned. Says
/// what each give-back did and what it owes the units still running, for the revert to pay
/// once it has put back the rest. The record is saved without those given back; one that
/// failed stays in it, the mesh's still. No generation is made: the revert puts the record back
/// as it was before the push.
pub(crate) fn give_back_made(
    paths: &Paths,
    record: &mut Record,
    made: &BTreeSet<String>,
) -> io::Result<(Vec<Outcome>, BTreeMap<String, Cost>)> {
    let nothing = Declaration {
        version: VERSION,
        node: String::new(),
        resources: Vec::new(),
        expects_record: true,
        confirm_within: None,
        confirm_removals: Vec::new(),
        keep: Vec::new(),
        planned: None,
    };
    let mut run = Run::begin(&nothing, Mode::Apply, paths, record);
    run.give_back_undeclared(record, |id| !made.contains(id));
    record.save(paths)?;
    run.forget_spent(record);
    let owed = run
        .owed
        .iter()
        .filter(|(unit, _)| !run.stopped.contains(*unit))
        .filter_map(|(unit, causes)| {
            let cost = causes
                .iter()
                .filter(|(_, because)| made.contains(because))
                .map(|(c, _)| *c)
                .max()?;
            (cost > Cost::None).then(|| (unit.clone(), cost))
        })
        .collect();
    Ok((run.outcomes, owed))
}

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
