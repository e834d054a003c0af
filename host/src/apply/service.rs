//! An existing unit put in its declared state, and given back as the mesh found it.
//!
//! The state a unit was first found in is recorded once, the first time the helper applies it,
//! and never overwritten; undeclaring undoes only what the mesh itself did, and never starts a
//! unit on the way out.

use mesh_wire::{OnRemoval, Outcome, Resource, ServiceSpec, State};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, outcome};
use crate::adopt::Adopt;
use crate::confirm::Touches;
use crate::record::{Entry, Paths, Record, ServiceEntry};
use crate::units::UnitState;

impl Run<'_> {
    /// Records the state a unit is found in, the first time the mesh declares it: before this
    /// run restarts, starts or stops anything. A record that cannot be saved stops the run.
    pub(super) fn find_service(
        &mut self,
        resource: &Resource,
        spec: &ServiceSpec,
        record: &mut Record,
    ) -> Result<(), super::Error> {
        if record.resources.contains_key(&resource.id) {
            return Ok(());
        }
        // A unit that does not exist (or a systemctl that cannot answer) is reported by the
        // resource itself when it is applied.
        let Ok(now) = self.paths.system.unit_state(&spec.unit) else {
            return Ok(());
        };
        if !now.exists {
            return Ok(());
        }
        record.resources.insert(
            resource.id.clone(),
            Entry::Service(ServiceEntry {
                unit: spec.unit.clone(),
                found_running: now.running,
                found_enabled: now.enabled,
                started: false,
                stopped: false,
                enabled: false,
                disabled: false,
                stop_runs: now.stop_runs,
                leave_running: spec.on_removal == OnRemoval::LeaveRunning,
            }),
        );
        if self.applying() {
            record.save(self.paths)?;
        }
        Ok(())
    }

    pub(super) fn try_service(
        &mut self,
        resource: &Resource,
        spec: &ServiceSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        // not found before this run: its unit file may be one this run just wrote (a timer and
        // its service declared as files), which systemd reads only once told to
        let first = !record.resources.contains_key(&resource.id);
        if first && self.applying() {
            self.paths.system.daemon_reload()?;
        }
        let now = self.paths.system.unit_state(&spec.unit)?;
        if !now.exists {
            return Err(
                "no such unit on this machine (a service names a unit that is installed; install its package first)"
                    .into(),
            );
        }
        if first {
            // found now, after this run's files and before anything of this run moved it
            self.find_service(resource, spec, record)
                .map_err(|e| e.to_string())?;
        }
        let Some(Entry::Service(mut entry)) = record.resources.get(&resource.id).cloned() else {
            return Err("its found state was not recorded".into());
        };
        // what its stop runs and what a removal is to do are as of now, for the plan
        entry.stop_runs = now.stop_runs.clone();
        let leave_running = spec.on_removal == OnRemoval::LeaveRunning;
        let mut did = Vec::new();
        // what a removal will do is the record's to know: a change to it is a change
        if entry.leave_running != leave_running {
            entry.leave_running = leave_running;
            did.push(format!(
                "{} on removal: {}",
                self.said("set", "set"),
                spec.on_removal.name()
            ));
        }
        let started = self.put_in_state(spec, &now, &mut entry, &mut did)?;
        if self.applying() {
            record
                .resources
                .insert(resource.id.clone(), Entry::Service(entry));
        }
        // whether it serves is its probe's to say, after whatever this run did to it
        let paid = self.paid.get(&spec.unit).copied();
        if let Some(e) = self.not_ready(
            started || paid.is_some(),
            spec.ready.as_ref(),
            Some(&spec.unit),
        ) {
            if let Some(how) = paid {
                did.push(format!("{how} for the files it reads"));
            }
            return Ok(outcome(
                &resource.id,
                State::Failed,
                format!("{} {}, but {e}", did.join(" and "), spec.unit),
            ));
        }
        Ok(if did.is_empty() {
            outcome(
                &resource.id,
                State::Unchanged,
                format!("{} is as declared", spec.unit),
            )
        } else {
            outcome(
                &resource.id,
                State::Changed,
                format!("{} {}", did.join(" and "), spec.unit),
            )
        })
    }

    /// Enables or disables, starts or stops the unit as declared, where `now` it is not; each
    /// move said in `did`. Whether it started.
    fn put_in_state(
        &mut self,
        spec: &ServiceSpec,
        now: &UnitState,
        entry: &mut ServiceEntry,
        did: &mut Vec<String>,
    ) -> Result<bool, Failure> {
        if let Some(enable) = spec.enabled
            && now.enabled != Some(enable)
        {
            let verb = if enable { "enable" } else { "disable" };
            if self.applying() {
                self.paths.system.systemctl(verb, &spec.unit)?;
            }
            // Only a move away from the found state is the mesh's to undo later.
            entry.enabled = enable && entry.found_enabled == Some(false);
            entry.disabled = !enable && entry.found_enabled == Some(true);
            did.push(self.said(&format!("{verb}d"), verb));
        }
        let mut started = false;
        if let Some(run) = spec.running
            && now.running != Some(run)
        {
            let verb = if run { "start" } else { "stop" };
            if self.applying() {
                self.paths.system.systemctl(verb, &spec.unit)?;
                if run {
                    self.started.insert(spec.unit.clone());
                }
            }
            started = run;
            entry.started = run && entry.found_running == Some(false);
            entry.stopped = !run && entry.found_running == Some(true);
            did.push(self.said(if run { "started" } else { "stopped" }, verb));
        }
        Ok(started)
    }

    pub(super) fn give_back_service(&mut self, entry: &ServiceEntry) -> Result<String, Failure> {
        let unit = &entry.unit;
        // what the mesh started or enabled stays so; what it found running was never its to stop
        if entry.leave_running && (entry.started || entry.enabled) {
            return Ok(format!(
                "{unit}: left as it is, {}: its module says on-removal: leave-running",
                if entry.started { "running" } else { "enabled" }
            ));
        }
        let mut said = Vec::new();
        if entry.enabled {
            if self.applying() {
                self.paths.system.systemctl("disable", unit)?;
            }
            said.push(format!(
                "{} again, as the host found it",
                self.said("disabled", "disable")
            ));
        } else if entry.disabled {
            if self.applying() {
                self.paths.system.systemctl("enable", unit)?;
            }
            said.push(format!(
                "{} again, as the host found it",
                self.said("enabled", "enable")
            ));
        }
        if entry.started {
            if self.applying() {
                self.paths.system.systemctl("stop", unit)?;
            }
            said.push(format!(
                "{} again, as the host found it",
                self.said("stopped", "stop")
            ));
        } else if entry.stopped {
            said.push("left stopped: the mesh never starts a unit on its way out".into());
        } else {
            said.push(match entry.found_running {
                Some(true) => "left running: it was running before the mesh".into(),
                Some(false) => "left as it is: it was not running before the mesh".into(),
                None => "left alone: the state it was found in is not known".into(),
            });
        }
        Ok(format!("{unit}: {}", said.join("; ")))
    }
}

impl Kind for ServiceSpec {
    const PHASE: Phase = Phase::Units;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_service(resource, self, record)
    }

    fn unit(&self) -> Option<String> {
        Some(self.unit.clone())
    }

    fn stopped_unit(&self) -> Option<&str> {
        (self.running == Some(false)).then_some(self.unit.as_str())
    }

    fn adopt(&self, adopt: &mut Adopt<'_>, id: &str) {
        let entry = Entry::Service(ServiceEntry {
            unit: self.unit.clone(),
            found_running: None,
            found_enabled: None,
            started: false,
            stopped: false,
            enabled: false,
            disabled: false,
            stop_runs: Vec::new(),
            leave_running: false,
        });
        adopt.take(id, entry, format!("{}: taken as it is", self.unit));
        adopt.lost(format!(
            "{}: the state the host had it in is lost; undeclaring leaves it as it is",
            self.unit
        ));
    }

    fn touches(&self, _paths: &Paths) -> Touches {
        Touches {
            units: vec![self.unit.clone()],
            ..Touches::default()
        }
    }
}

impl GiveBack for ServiceEntry {
    const KIND: &'static str = "service";
    const PHASE: Phase = Phase::Units;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_service(self)
    }

    /// the unit it gives back to the state found
    fn touches(&self) -> Touches {
        Touches {
            units: vec![self.unit.clone()],
            ..Touches::default()
        }
    }
}
