//! A job on a schedule: the helper writes `<name>.service` (oneshot, the command quoted as a
//! process's is) and `<name>.timer` (`OnCalendar=`), both marked as the mesh's, checks the
//! schedule with `systemd-analyze calendar` before anything is written, then enables and
//! starts the timer in the same push (the first one included: there is no found state to
//! record, the mesh made both units). Undeclared: stopped, disabled, both files removed.

use std::path::{Path, PathBuf};

use mesh_wire::{Cost, Outcome, Resource, State, TimerSpec};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::process::{escape, quote};
use super::{Run, outcome};
use crate::confirm::Touches;
use crate::files;
use crate::record::{Entry, Paths, Record, TimerEntry};

/// The service's unit file: the command run once as its user.
fn service_text(spec: &TimerSpec) -> String {
    let argv: Vec<String> = spec.command.iter().map(|a| quote(a)).collect();
    format!(
        "{}: it is removed when the timer is no longer declared.\n[Unit]\nDescription={}\n\n\
         [Service]\nType=oneshot\nExecStart={}\nUser={}\n",
        crate::signs::MARK,
        escape(&spec.description),
        argv.join(" "),
        escape(&spec.user)
    )
}

/// The timer's unit file.
fn timer_text(spec: &TimerSpec) -> String {
    format!(
        "{}: it is removed when the timer is no longer declared.\n[Unit]\nDescription={}\n\n\
         [Timer]\nOnCalendar={}\nUnit={}\n\n[Install]\nWantedBy=timers.target\n",
        crate::signs::MARK,
        escape(&spec.description),
        escape(&spec.schedule),
        spec.service_unit()
    )
}

impl Run<'_> {
    pub(super) fn try_timer(
        &mut self,
        resource: &Resource,
        spec: &TimerSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        spec.check().map_err(|e| e.to_string())?;
        self.paths.system.check_schedule(&spec.schedule)?;
        let dir = crate::signs::units_dir(self.paths);
        let timer_file = dir.join(spec.timer_unit());
        let service_file = dir.join(spec.service_unit());
        let (timer, service) = (timer_text(spec), service_text(spec));
        let digest = files::sha256(format!("{timer}\0{service}").as_bytes());
        let on_disk = |path: &Path| {
            self.paths
                .machine
                .read(path)
                .ok()
                .flatten()
                .map(|f| f.bytes)
        };
        let same = on_disk(&timer_file).as_deref() == Some(timer.as_bytes())
            && on_disk(&service_file).as_deref() == Some(service.as_bytes());
        let known = matches!(record.resources.get(&resource.id), Some(Entry::Timer(_)));
        let running = self.applying()
            && self
                .paths
                .system
                .unit_state(&spec.timer_unit())
                .is_ok_and(|s| s.running == Some(true));
        if same && known && (running || !self.applying()) {
            // the timer does not move: what its files owe is paid now
            self.pay_left(&spec.timer_unit(), record);
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{} is as declared", spec.timer_unit()),
            ));
        }
        let state = if known {
            State::Changed
        } else {
            State::Created
        };
        if !self.applying() {
            if known {
                self.restarted_by_process(&spec.timer_unit(), record);
            } else {
                self.started_by_process(&spec.timer_unit(), record);
            }
            return Ok(outcome(
                &resource.id,
                state,
                format!(
                    "would write and start {} at {}",
                    spec.timer_unit(),
                    spec.schedule
                ),
            ));
        }
        let files = [(timer_file, timer), (service_file, service)];
        self.write_timer(resource, spec, record, &files, digest)?;
        if running {
            self.restarted_by_process(&spec.timer_unit(), record);
        } else {
            self.started_by_process(&spec.timer_unit(), record);
        }
        Ok(outcome(
            &resource.id,
            state,
            format!(
                "wrote and started {} at {} (runs {} as {})",
                spec.timer_unit(),
                spec.schedule,
                spec.service_unit(),
                spec.user
            ),
        ))
    }

    /// Writes the timer's two unit files (`files`: the timer's, then the service's), recorded
    /// first so a helper killed halfway still removes them, enables the timer and starts it
    /// again: a timer reads a new schedule when it is started again, and what its files owe is
    /// paid with it, once.
    fn write_timer(
        &mut self,
        resource: &Resource,
        spec: &TimerSpec,
        record: &mut Record,
        files: &[(PathBuf, String); 2],
        digest: String,
    ) -> Result<(), Failure> {
        // recorded before anything is written, so a helper killed halfway still removes it
        record.resources.insert(
            resource.id.clone(),
            Entry::Timer(TimerEntry {
                timer_unit: spec.timer_unit(),
                timer_file: files[0].0.display().to_string(),
                service_file: files[1].0.display().to_string(),
                digest: Some(digest),
            }),
        );
        record.save(self.paths).map_err(Failure::Record)?;
        for (path, text) in [&files[1], &files[0]] {
            self.paths
                .machine
                .write_atomically(path, text.as_bytes(), None, 0o644)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        self.paths.system.daemon_reload()?;
        self.paths.system.systemctl("enable", &spec.timer_unit())?;
        self.paths
            .system
            .systemctl("restart", &spec.timer_unit())
            .inspect_err(|e| self.not_paid_by_process(&spec.timer_unit(), e, record))?;
        Ok(())
    }

    pub(super) fn give_back_timer(&mut self, entry: &TimerEntry) -> Result<String, Failure> {
        if self.applying() {
            // a unit already stopped or gone is fine: what matters is that nothing is left
            let _ = self.paths.system.systemctl("stop", &entry.timer_unit);
            let _ = self.paths.system.systemctl("disable", &entry.timer_unit);
            for file in [&entry.timer_file, &entry.service_file] {
                self.paths
                    .machine
                    .remove(Path::new(file))
                    .map_err(|e| format!("{file}: cannot remove it: {e}"))?;
            }
            self.paths.system.daemon_reload()?;
        }
        self.gone.extend(
            [&entry.timer_file, &entry.service_file]
                .into_iter()
                .map(std::path::PathBuf::from),
        );
        Ok(format!(
            "{} {}, removed its timer and service unit files",
            self.said("stopped and disabled", "stop and disable"),
            entry.timer_unit
        ))
    }
}

impl Kind for TimerSpec {
    const PHASE: Phase = Phase::Units;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_timer(resource, self, record)
    }

    fn unit(&self) -> Option<String> {
        Some(self.timer_unit())
    }

    /// a timer restarts itself when it changes: it pays what its files owe with that
    fn pays_its_files(&self) -> bool {
        true
    }

    /// its two unit files, and the timer's state
    fn touches(&self, paths: &Paths) -> Touches {
        let dir = crate::signs::units_dir(paths);
        let files = [self.timer_unit(), self.service_unit()].map(|unit| dir.join(unit));
        unit_files(&files, &self.timer_unit())
    }
}

/// A timer's unit files, which the timer reads (a change restarts it), and its state.
fn unit_files(files: &[PathBuf], timer: &str) -> Touches {
    Touches {
        files: files
            .iter()
            .map(|f| {
                (
                    f.display().to_string(),
                    vec![timer.to_string()],
                    Cost::Restart,
                )
            })
            .collect(),
        units: vec![timer.to_string()],
        ..Touches::default()
    }
}

impl GiveBack for TimerEntry {
    const KIND: &'static str = "timer";
    const PHASE: Phase = Phase::Units;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_timer(self)
    }

    fn touches(&self) -> Touches {
        let files = [&self.timer_file, &self.service_file].map(PathBuf::from);
        unit_files(&files, &self.timer_unit)
    }
}

#[cfg(test)]
mod tests {
    use mesh_wire::TimerSpec;

    #[test]
    fn the_units_run_the_command_quoted_as_its_user_at_the_schedule() {
        let spec = TimerSpec {
            name: "job-nightly".into(),
            description: "Backs up 100% (job, by mesh)".into(),
            command: vec!["/usr/bin/backup".into(), "$HOME dir".into()],
            user: "backup".into(),
            schedule: "*-*-* 03:00:00".into(),
        };
        let service = super::service_text(&spec);
        assert!(service.contains("Description=Backs up 100%% (job, by mesh)\n"));
        assert!(
            service.contains(
                "Type=oneshot\nExecStart=\"/usr/bin/backup\" \"$$HOME dir\"\nUser=backup\n"
            )
        );
        let timer = super::timer_text(&spec);
        assert!(timer.contains("[Timer]\nOnCalendar=*-*-* 03:00:00\nUnit=job-nightly.service\n"));
        assert!(timer.ends_with("[Install]\nWantedBy=timers.target\n"));
    }
}
