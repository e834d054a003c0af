//! What a plan's changes owe the units that read them: the highest cost each unit pays, the
//! resources that cause it, and what happens to it in a word (`reload`, `restart`, `start`,
//! `stop`).

use std::collections::BTreeMap;

use crate::wire::Cost;

use super::UnitChange;

/// The units owed a reload, restart, start or stop by a plan's changes so far.
#[derive(Default)]
pub(super) struct Owed {
    units: BTreeMap<String, (Cost, Vec<String>)>,
    /// Units a service resource stops: they stop rather than pay for their files.
    stops: Vec<String>,
    /// Units a service declared running starts, if they are not running.
    starts: Vec<String>,
    /// Units the mesh creates: a new process.
    created: Vec<String>,
}

impl Owed {
    /// `unit` pays at least `cost`, because of `id` (named only when it pays something).
    pub(super) fn owe(&mut self, unit: &str, cost: Cost, id: &str) {
        let slot = self
            .units
            .entry(unit.to_string())
            .or_insert((Cost::None, Vec::new()));
        slot.0 = slot.0.max(cost);
        if cost > Cost::None {
            slot.1.push(id.to_string());
        }
    }

    /// `unit` stops, because of `id`.
    pub(super) fn stop(&mut self, unit: &str, id: &str) {
        self.owe(unit, Cost::Restart, id);
        self.stops.push(unit.to_string());
    }

    /// `unit` is started if it is not running, because of `id`: what its files owe is paid
    /// either way.
    pub(super) fn start(&mut self, unit: &str, id: &str) {
        self.owe(unit, Cost::None, id);
        self.units
            .entry(unit.to_string())
            .or_insert((Cost::None, Vec::new()))
            .1
            .push(id.to_string());
        self.starts.push(unit.to_string());
    }

    /// `unit` is made by the push (a new process), because of `id`.
    pub(super) fn create(&mut self, unit: &str, id: &str) {
        self.owe(unit, Cost::Restart, id);
        self.created.push(unit.to_string());
    }

    /// Every unit that pays something, or is started, with its verb.
    pub(super) fn into_units(self) -> Vec<UnitChange> {
        let Owed {
            units,
            stops,
            starts,
            created,
        } = self;
        units
            .into_iter()
            .filter(|(unit, (c, _))| *c > Cost::None || starts.contains(unit))
            .map(|(unit, (action, because))| {
                let verb = if stops.contains(&unit) {
                    "stop"
                } else if created.contains(&unit) {
                    "start"
                } else if action == Cost::None {
                    "start, if it is not running,"
                } else if starts.contains(&unit) && action == Cost::Restart {
                    "start (or restart, if it runs)"
                } else {
                    action.as_str()
                };
                UnitChange {
                    stops: stops.contains(&unit),
                    verb,
                    unit,
                    action,
                    because,
                }
            })
            .collect()
    }
}
