//! A process made and measured: the helper's side of [`Kind`] for a process, its unit file,
//! environment and bundle written by the free functions of `process` (its record entry is given
//! back in `give_back.rs`).

use std::path::{Path, PathBuf};

use mesh_wire::{Cost, Outcome, ProcessSpec, Resource, State};

use super::super::kind::{Kind, Phase};
use super::super::{Failure, Run, access, env, on_disk, outcome};
use super::{
    change_cost, digest, env_file_of, frame, on_disk_digest, unit_and_environment, wanted,
    write_bundle,
};
use crate::adopt::Adopt;
use crate::confirm::Touches;
use crate::files;
use crate::owners;
use crate::record::{Entry, Paths, ProcessEntry, ProcessMade, Record, Written};
use crate::units;

/// What a process is made of this run: its unit file and environment, and their digests.
struct Made {
    unit_file: PathBuf,
    unit_text: String,
    env_file: PathBuf,
    env_text: Option<String>,
    /// What it runs from, contents and all: a change restarts it.
    digest: String,
    /// Its frame (`process::frame`): what the cost of a change is measured against.
    frame: String,
}

/// How the process stood when the run found it, and what this run changes of it.
struct Found {
    /// Its files are to change, declared or changed on the machine.
    changed: bool,
    running: bool,
    enabled: bool,
    /// The cost of the change to it.
    cost: Cost,
}

impl Run<'_> {
    pub(super) fn try_process(
        &mut self,
        resource: &Resource,
        spec: &ProcessSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        if !spec.unit.ends_with(".service") || spec.unit.contains('/') {
            return Err("a process's unit is a .service name".into());
        }
        // its paths passed the one rule (`mesh_wire::path`, checked in `Run::apply`): the bundle
        // is one directory of the helper's bundle area
        spec.check().map_err(|e| e.to_string())?;
        // a user the machine does not have fails here, before anything is written
        owners::user(self.paths.system.as_ref(), &spec.user)?;
        access::present(&self.paths.machine, &spec.access)?;
        let unit_file = Path::new(units::UNIT_DIR).join(&spec.unit);
        let (env_file, env_text, unit_text) = unit_and_environment(self.paths, spec);
        let made = Made {
            digest: digest(&unit_text, env_text.as_deref(), spec),
            frame: frame(&unit_text, env_text.as_deref(), spec),
            unit_file,
            unit_text,
            env_file,
            env_text,
        };
        let mut entry = self.process_entry(resource, spec, &made.unit_file, record)?;
        let drift = self.process_drift(spec, &entry, &made)?;
        let changed = entry.digest.as_deref() != Some(made.digest.as_str()) || !drift.is_empty();
        let now = self.paths.system.unit_state(&spec.unit).ok();
        let running = now.as_ref().and_then(|s| s.running) == Some(true);
        let enabled = now.as_ref().and_then(|s| s.enabled) == Some(true);
        if !changed && running && enabled {
            return Ok(self.process_as_declared(resource, spec, record));
        }
        let first = entry.digest.is_none();
        let owed = self.owed_to(&spec.unit).filter(|c| *c > Cost::None);
        // a file changed on the machine is not what the process was started with: whatever
        // moved, it restarts, as a hand edit of a file costs the file's declared cost
        let cost = if !drift.is_empty() {
            Cost::Restart
        } else if changed {
            change_cost(&entry, &made.frame, spec)
        } else {
            Cost::None
        };
        let found = Found {
            changed,
            running,
            enabled,
            cost,
        };
        let not_running = if self.applying() {
            self.make_process(resource, spec, &mut entry, made, &found, record)?
        } else {
            self.measure_process(spec, &found, record);
            None
        };
        let what = if first {
            self.said("created, enabled and started", "create, enable and start")
        } else {
            self.process_said(&found, owed.is_some())
        };
        let drifted = if drift.is_empty() {
            String::new()
        } else {
            format!(" (changed on the machine: {})", drift.what.join("; "))
        };
        let (state, failure) = match &not_running {
            Some(e) => (State::Failed, format!(", but {e}")),
            None if first => (State::Created, String::new()),
            None => (State::Changed, String::new()),
        };
        let detail = format!("{what} {}{drifted}{failure}", spec.unit);
        let mut done = outcome(&resource.id, state, detail);
        if !self.applying() {
            done.seen = drift.seen;
        }
        Ok(done)
    }

    /// What was sent is only a digest in the record: the files themselves are compared too, so
    /// a hand edit, a deleted script or a chmod is seen and written back. Only when nothing was
    /// declared to change: otherwise the files differ because they are to, and what moved in
    /// them decides the cost.
    fn process_drift(
        &self,
        spec: &ProcessSpec,
        entry: &ProcessEntry,
        made: &Made,
    ) -> Result<on_disk::Drift, Failure> {
        if entry.digest.as_deref() != Some(made.digest.as_str()) {
            return Ok(on_disk::Drift::default());
        }
        let wanted = wanted(
            &made.unit_file,
            &made.unit_text,
            &made.env_file,
            made.env_text.as_deref(),
            spec,
        );
        on_disk::compare(&self.paths.machine, &wanted, Path::new(&spec.bundle_dir))
    }

    /// The record's entry for the process; a new one only where the unit is not the
    /// machine's already.
    fn process_entry(
        &self,
        resource: &Resource,
        spec: &ProcessSpec,
        unit_file: &Path,
        record: &Record,
    ) -> Result<ProcessEntry, Failure> {
        if let Some(Entry::Process(e)) = record.resources.get(&resource.id) {
            return Ok(e.clone());
        }
        if self
            .paths
            .machine
            .exists(unit_file)
            .map_err(|e| e.to_string())?
        {
            return Err(format!(
                "{} exists and the mesh did not make it; it is left alone",
                unit_file.display()
            )
            .into());
        }
        // a unit of that name from a package (/lib/systemd/system) or a drop-in is the
        // machine's: a process of the mesh would shadow it, and removing the process would stop
        // and disable what the host had running
        if self
            .paths
            .system
            .unit_state(&spec.unit)
            .is_ok_and(|s| s.exists)
        {
            return Err(format!(
                "the machine already has a unit {} (from a package or the host); the mesh \
                 creates its processes under names of their own: assign the module under another \
                 instance name (--as)",
                spec.unit
            )
            .into());
        }
        Ok(ProcessEntry {
            unit: spec.unit.clone(),
            unit_file: unit_file.display().to_string(),
            bundle_dir: spec.bundle_dir.clone(),
            env_file: None,
            digest: None,
            made_from: None,
        })
    }

    /// A process that does not move: what the files it reads owe is paid now; restarted for
    /// them, it must serve again.
    fn process_as_declared(
        &mut self,
        resource: &Resource,
        spec: &ProcessSpec,
        record: &mut Record,
    ) -> Outcome {
        self.pay_left(&spec.unit, record);
        if let Some(how) = self.paid.get(&spec.unit)
            && let Some(e) = self.not_ready(true, spec.ready.as_ref(), Some(&spec.unit))
        {
            return outcome(
                &resource.id,
                State::Failed,
                format!("{} {how} for the files it reads, but {e}", spec.unit),
            );
        }
        outcome(
            &resource.id,
            State::Unchanged,
            format!("{} runs as declared", spec.unit),
        )
    }

    /// Writes the process's files if they change, enables it, restarts or starts it once, and
    /// records what it was made from; why it does not run (or serve), if it does not.
    fn make_process(
        &mut self,
        resource: &Resource,
        spec: &ProcessSpec,
        entry: &mut ProcessEntry,
        made: Made,
        found: &Found,
        record: &mut Record,
    ) -> Result<Option<String>, Failure> {
        // recorded before it is written, so an interrupted run still removes it
        if made.env_text.is_some() {
            entry.env_file = Some(made.env_file.display().to_string());
        }
        // the record names the unit before it exists, so an interrupted run is undone too
        record
            .resources
            .insert(resource.id.clone(), Entry::Process(entry.clone()));
        record.save(self.paths).map_err(Failure::Record)?;
        if found.changed {
            self.write_process(spec, entry, &made)?;
        }
        if !found.enabled {
            self.paths.system.systemctl("enable", &spec.unit)?;
        }
        self.start_or_restart(spec, found, record)?;
        // a command that cannot run is not "started": systemctl returns before it fails
        let mut not_running = self
            .paths
            .system
            .settled(&spec.unit)
            .err()
            .map(|e| e.to_string());
        // it runs; whether it serves is what its probe says
        if not_running.is_none()
            && let Some(ready) = &spec.ready
        {
            not_running = self.not_ready(true, Some(ready), Some(&spec.unit));
        }
        // one that does not run or serve is not as declared: the record keeps what it was made
        // from before, so the next run (and the operator's plan, which keeps a failed resource
        // owed) writes, restarts and probes it again
        if not_running.is_none() {
            entry.digest = Some(made.digest);
            entry.made_from = Some(ProcessMade {
                frame: made.frame,
                bundle: spec
                    .bundle
                    .iter()
                    .map(|f| {
                        let made = Written {
                            sha256: files::sha256(f.content.as_bytes()),
                            source: f.source.clone(),
                            settings: f.settings.clone(),
                        };
                        (f.path.clone(), made)
                    })
                    .collect(),
            });
        }
        record
            .resources
            .insert(resource.id.clone(), Entry::Process(entry.clone()));
        Ok(not_running)
    }

    /// In a dry run: started, it would read every change, and nothing is owed for them;
    /// restarted, it would pay what its files owe.
    fn measure_process(&mut self, spec: &ProcessSpec, found: &Found, record: &mut Record) {
        if !found.running {
            self.started_by_process(&spec.unit, record);
        } else if found.cost > Cost::None {
            self.restarted_by_process(&spec.unit, record);
        }
    }

    /// Writes the bundle, the environment file (or removes the old one) and the unit file.
    fn write_process(
        &mut self,
        spec: &ProcessSpec,
        entry: &mut ProcessEntry,
        made: &Made,
    ) -> Result<(), Failure> {
        write_bundle(&self.paths.machine, Path::new(&spec.bundle_dir), spec)?;
        match &made.env_text {
            Some(text) => env::write(self.paths, &made.env_file, text)?,
            None => {
                if let Some(old) = entry.env_file.take() {
                    env::remove(Path::new(&old))?;
                }
            }
        }
        self.paths
            .machine
            .write_atomically(
                &made.unit_file,
                made.unit_text.as_bytes(),
                Some(files::root_ids()),
                0o644,
            )
            .map_err(|e| Failure::path(made.unit_file.display(), e))?;
        self.paths.system.daemon_reload()?;
        Ok(())
    }

    /// One restart or start, after every file of the run is written, pays what its files owe
    /// too (`once`).
    fn start_or_restart(
        &mut self,
        spec: &ProcessSpec,
        found: &Found,
        record: &mut Record,
    ) -> Result<(), Failure> {
        if found.running && found.cost > Cost::None {
            self.paths
                .system
                .systemctl("restart", &spec.unit)
                .inspect_err(|e| self.not_paid_by_process(&spec.unit, e, record))?;
            self.restarted_by_process(&spec.unit, record);
        } else if !found.running {
            let _ = self.paths.system.systemctl("reset-failed", &spec.unit);
            self.paths
                .system
                .systemctl("start", &spec.unit)
                .inspect_err(|e| self.not_paid_by_process(&spec.unit, e, record))?;
            self.started_by_process(&spec.unit, record);
        } else {
            self.pay_left(&spec.unit, record);
        }
        Ok(())
    }

    /// What a change to a process made before did (`owed`: its files owe its unit).
    fn process_said(&self, found: &Found, owed: bool) -> String {
        let mut did = Vec::new();
        if found.changed {
            did.push(self.said("rewrote", "rewrite"));
        }
        if !found.enabled {
            did.push(self.said("enabled", "enable"));
        }
        match (found.running, found.cost) {
            (true, Cost::Restart | Cost::Reload) => did.push(self.said("restarted", "restart")),
            // what the files it reads owe is said on its unit's line
            (true, Cost::None) if found.changed && !owed => {
                did.push(self.said(
                    "left running (only what it reads on every use moved)",
                    "leave running (only what it reads on every use moved)",
                ));
            }
            (false, _) => did.push(self.said("started", "start")),
            (true, Cost::None) => {}
        }
        did.join(" and ")
    }

    pub(super) fn give_back_process(&mut self, entry: &ProcessEntry) -> Result<String, Failure> {
        if self.applying() {
            // a unit already stopped or gone is fine: what matters is that nothing is left
            let _ = self.paths.system.systemctl("stop", &entry.unit);
            let _ = self.paths.system.systemctl("disable", &entry.unit);
            self.paths
                .machine
                .remove(Path::new(&entry.unit_file))
                .map_err(|e| format!("{}: cannot remove it: {e}", entry.unit_file))?;
            self.paths
                .machine
                .remove_tree(Path::new(&entry.bundle_dir))
                .map_err(|e| format!("{}: cannot remove it: {e}", entry.bundle_dir))?;
            if let Some(env_file) = &entry.env_file {
                env::remove(Path::new(env_file))?;
            }
            self.paths.system.daemon_reload()?;
            let _ = self.paths.system.systemctl("reset-failed", &entry.unit);
        }
        self.gone.extend(
            [&entry.unit_file, &entry.bundle_dir]
                .into_iter()
                .chain(&entry.env_file)
                .map(std::path::PathBuf::from),
        );
        Ok(format!(
            "{} {}, removed its unit file{} and its bundle {}",
            self.said("stopped and disabled", "stop and disable"),
            entry.unit,
            if entry.env_file.is_some() {
                ", its environment file"
            } else {
                ""
            },
            entry.bundle_dir
        ))
    }
}

impl Kind for ProcessSpec {
    const PHASE: Phase = Phase::Units;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_process(resource, self, record)
    }

    fn unit(&self) -> Option<String> {
        Some(self.unit.clone())
    }

    fn pays_its_files(&self) -> bool {
        true
    }

    /// taken only where the mesh's mark says it wrote the unit
    fn adopt(&self, adopt: &mut Adopt<'_>, id: &str) {
        let paths = adopt.paths;
        let dir = crate::signs::units_dir(paths);
        if !crate::signs::marked_units(&paths.machine, &dir).contains(&self.unit) {
            return;
        }
        let unit_file = dir.join(&self.unit);
        let entry = Entry::Process(ProcessEntry {
            unit: self.unit.clone(),
            unit_file: unit_file.display().to_string(),
            bundle_dir: self.bundle_dir.clone(),
            env_file: env_file_of(paths, self),
            digest: on_disk_digest(paths, self, &unit_file),
            made_from: None,
        });
        adopt.take(
            id,
            entry,
            format!("{}: the mesh wrote it; taken", self.unit),
        );
    }

    /// its unit, and every file it writes with the directories they would make
    fn touches(&self, paths: &Paths) -> Touches {
        let mut touches = Touches {
            units: vec![self.unit.clone()],
            ..Touches::default()
        };
        for path in crate::apply::files_of(paths, self) {
            touches.dirs.extend(paths.machine.missing_ancestors(&path));
            let path = path.display().to_string();
            touches
                .files
                .push((path, vec![self.unit.clone()], Cost::Restart));
        }
        touches
    }
}
