//! A unit the mesh creates: its unit file under /etc/systemd/system and the bundle of files it
//! runs under /var/lib/mesh/bundles/<unit>. Enabled and started; restarted when its unit or its
//! bundle changes; stopped, disabled and removed with its bundle when undeclared.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use mesh_wire::{Cost, Outcome, ProcessSpec, Resource, State};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, access, env, on_disk, outcome};
use crate::adopt::Adopt;
use crate::files;
use crate::owners;
use crate::record::{Entry, Paths, ProcessEntry, ProcessMade, Record, Written};
use crate::units;

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
        let bundle_dir = PathBuf::from(&spec.bundle_dir);
        spec.check().map_err(|e| e.to_string())?;
        // a user the machine does not have fails here, before anything is written
        owners::user(self.paths.system.as_ref(), &spec.user)?;
        access::present(&self.paths.machine, &spec.access)?;
        let unit_file = Path::new(units::UNIT_DIR).join(&spec.unit);
        let (env_file, env_text, unit_text) = unit_and_environment(self.paths, spec);
        let digest = digest(&unit_text, env_text.as_deref(), spec);

        let mut entry = match record.resources.get(&resource.id) {
            Some(Entry::Process(e)) => e.clone(),
            _ => {
                if self
                    .paths
                    .machine
                    .exists(&unit_file)
                    .map_err(|e| e.to_string())?
                {
                    return Err(format!(
                        "{} exists and the mesh did not make it; it is left alone",
                        unit_file.display()
                    )
                    .into());
                }
                // a unit of that name from a package (/lib/systemd/system) or a drop-in is the
                // machine's: a process of the mesh would shadow it, and removing the process
                // would stop and disable what the host had running
                if self
                    .paths
                    .system
                    .unit_state(&spec.unit)
                    .is_ok_and(|s| s.exists)
                {
                    return Err(format!(
                        "the machine already has a unit {} (from a package or the host); the mesh \
                         creates its processes under names of their own: assign the module under \
                         another instance name (--as)",
                        spec.unit
                    )
                    .into());
                }
                ProcessEntry {
                    unit: spec.unit.clone(),
                    unit_file: unit_file.display().to_string(),
                    bundle_dir: spec.bundle_dir.clone(),
                    env_file: None,
                    digest: None,
                    made_from: None,
                }
            }
        };
        // What was sent is only a digest in the record: the files themselves are compared too, so
        // a hand edit, a deleted script or a chmod is seen and written back. Only when nothing
        // was declared to change: otherwise the files differ because they are to, and what moved
        // in them decides the cost.
        let drift = if entry.digest.as_deref() == Some(digest.as_str()) {
            on_disk::compare(
                &self.paths.machine,
                &wanted(&unit_file, &unit_text, &env_file, env_text.as_deref(), spec),
                &bundle_dir,
            )?
        } else {
            on_disk::Drift::default()
        };
        let changed = entry.digest.as_deref() != Some(digest.as_str()) || !drift.is_empty();
        let now = self.paths.system.unit_state(&spec.unit).ok();
        let running = now.as_ref().and_then(|s| s.running) == Some(true);
        let enabled = now.as_ref().and_then(|s| s.enabled) == Some(true);
        if !changed && running && enabled {
            // it does not move: what the files it reads owe is paid now; restarted for them, it
            // must serve again
            self.pay_left(&spec.unit, record);
            if let Some(how) = self.paid.get(&spec.unit)
                && let Some(e) = self.not_ready(true, spec.ready.as_ref())
            {
                return Ok(outcome(
                    &resource.id,
                    State::Failed,
                    format!("{} {how} for the files it reads, but {e}", spec.unit),
                ));
            }
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{} runs as declared", spec.unit),
            ));
        }
        let first = entry.digest.is_none();
        let owed = self.owed_to(&spec.unit).filter(|c| *c > Cost::None);
        let mut not_running = None;
        let frame = frame(&unit_text, env_text.as_deref(), spec);
        // a file changed on the machine is not what the process was started with: whatever
        // moved, it restarts, as a hand edit of a file costs the file's declared cost
        let cost = if !drift.is_empty() {
            Cost::Restart
        } else if changed {
            change_cost(&entry, &frame, spec)
        } else {
            Cost::None
        };
        if self.applying() {
            // recorded before it is written, so an interrupted run still removes it
            if env_text.is_some() {
                entry.env_file = Some(env_file.display().to_string());
            }
            // the record names the unit before it exists, so an interrupted run is undone too
            record
                .resources
                .insert(resource.id.clone(), Entry::Process(entry.clone()));
            record.save(self.paths).map_err(Failure::Record)?;
            if changed {
                write_bundle(&self.paths.machine, &bundle_dir, spec)?;
                match &env_text {
                    Some(text) => env::write(self.paths, &env_file, text)?,
                    None => {
                        if let Some(old) = entry.env_file.take() {
                            env::remove(Path::new(&old))?;
                        }
                    }
                }
                self.paths
                    .machine
                    .write_atomically(
                        &unit_file,
                        unit_text.as_bytes(),
                        Some(files::root_ids()),
                        0o644,
                    )
                    .map_err(|e| format!("{}: {e}", unit_file.display()))?;
                self.paths.system.daemon_reload()?;
            }
            if !enabled {
                self.paths.system.systemctl("enable", &spec.unit)?;
            }
            // one restart or start, after every file of the run is written, pays what its
            // files owe too (`once`)
            if running && cost > Cost::None {
                self.paths
                    .system
                    .systemctl("restart", &spec.unit)
                    .inspect_err(|e| self.not_paid_by_process(&spec.unit, e, record))?;
                self.restarted_by_process(&spec.unit, record);
            } else if !running {
                let _ = self.paths.system.systemctl("reset-failed", &spec.unit);
                self.paths
                    .system
                    .systemctl("start", &spec.unit)
                    .inspect_err(|e| self.not_paid_by_process(&spec.unit, e, record))?;
                self.started_by_process(&spec.unit, record);
            } else {
                self.pay_left(&spec.unit, record);
            }
            // its files are as declared whether or not it runs: the record says so
            entry.digest = Some(digest);
            entry.made_from = Some(ProcessMade {
                frame,
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
            record
                .resources
                .insert(resource.id.clone(), Entry::Process(entry));
            // a command that cannot run is not "started": systemctl returns before it fails
            not_running = self.paths.system.settled(&spec.unit).err();
            // it runs; whether it serves is what its probe says
            if not_running.is_none()
                && let Some(ready) = &spec.ready
            {
                not_running = super::ready::wait(ready).err();
            }
        } else if !running {
            // started, it would read every change: nothing is owed for them
            self.started_by_process(&spec.unit, record);
        } else if cost > Cost::None {
            self.restarted_by_process(&spec.unit, record);
        }
        let what = if first {
            self.said("created, enabled and started", "create, enable and start")
        } else {
            let mut did = Vec::new();
            if changed {
                did.push(self.said("rewrote", "rewrite"));
            }
            if !enabled {
                did.push(self.said("enabled", "enable"));
            }
            match (running, cost) {
                (true, Cost::Restart | Cost::Reload) => did.push(self.said("restarted", "restart")),
                // what the files it reads owe is said on its unit's line
                (true, Cost::None) if changed && owed.is_none() => {
                    did.push(self.said(
                        "left running (only what it reads on every use moved)",
                        "leave running (only what it reads on every use moved)",
                    ));
                }
                (false, _) => did.push(self.said("started", "start")),
                (true, Cost::None) => {}
            }
            did.join(" and ")
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
        let mut done = outcome(
            &resource.id,
            state,
            format!("{what} {}{drifted}{failure}", spec.unit),
        );
        if !self.applying() {
            done.seen = drift.seen;
        }
        Ok(done)
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

/// The unit file. Every value is checked (`mesh_wire::unit`: no control character can start a
/// line of its own) and quoted for systemd (which splits ExecStart= on spaces, expands `$VAR` and
/// `%` specifiers): the declaration's words reach the process as they are. The environment is not
/// in it: a unit file is world-readable, so it names the root-only `env_file` instead.
pub(super) fn unit_file_text(spec: &ProcessSpec, env_file: Option<&Path>) -> String {
    let mut out = String::new();
    out.push_str(crate::signs::MARK);
    out.push_str(": it is removed when the process is no longer declared.\n");
    out.push_str("[Unit]\n");
    out.push_str(&format!("Description={}\n", escape(&spec.description)));
    out.push_str("\n[Service]\n");
    let argv: Vec<String> = spec.command.iter().map(|a| quote(a)).collect();
    out.push_str(&format!("ExecStart={}\n", argv.join(" ")));
    out.push_str(&format!("User={}\n", escape(&spec.user)));
    let dir = spec
        .working_directory
        .clone()
        .unwrap_or_else(|| spec.bundle_dir.clone());
    out.push_str(&format!("WorkingDirectory={}\n", escape(&dir)));
    if let Some(file) = env_file {
        out.push_str(&format!(
            "EnvironmentFile={}\n",
            escape(&file.display().to_string())
        ));
    }
    out.push_str(&access::unit_lines(&spec.access));
    out.push_str(&format!("Restart={}\n", spec.restart));
    out.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    out
}

/// `%` is a specifier in every unit setting.
pub(super) fn escape(text: &str) -> String {
    text.replace('%', "%%")
}

/// One word for ExecStart=: double-quoted, with `\`, `"`, `$` and `%` escaped.
pub(super) fn quote(word: &str) -> String {
    let mut out = String::from("\"");
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '$' => out.push_str("$$"),
            '%' => out.push_str("%%"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What a process writes besides its bundle: its environment file's path and text (none when
/// it has no environment) and its unit file's text.
fn unit_and_environment(paths: &Paths, spec: &ProcessSpec) -> (PathBuf, Option<String>, String) {
    let env_file = env::path(paths, &spec.unit, false);
    let env_text = (!spec.environment.is_empty()).then(|| env::systemd_text(&spec.environment));
    let unit_text = unit_file_text(spec, env_text.as_ref().map(|_| env_file.as_path()));
    (env_file, env_text, unit_text)
}

/// Every file a process spec writes (its unit file, its environment file, its bundle's files),
/// whether or not it has them now: what a revert keeps.
pub(crate) fn files_of(paths: &Paths, spec: &ProcessSpec) -> Vec<PathBuf> {
    let bundle = Path::new(&spec.bundle_dir);
    [
        Path::new(units::UNIT_DIR).join(&spec.unit),
        env::path(paths, &spec.unit, false),
    ]
    .into_iter()
    .chain(spec.bundle.iter().map(|f| bundle.join(&f.path)))
    .collect()
}

/// The environment file a process's record names: where it is, when the process has an
/// environment and the file is there.
pub(crate) fn env_file_of(paths: &Paths, spec: &ProcessSpec) -> Option<String> {
    if spec.environment.is_empty() {
        return None;
    }
    env_file_there(paths, &spec.unit)
}

/// The environment file of the process unit `unit`, if it is on the machine.
pub(crate) fn env_file_there(paths: &Paths, unit: &str) -> Option<String> {
    let env_file = env::path(paths, unit, false);
    files::HOST
        .exists(&env_file)
        .unwrap_or(false)
        .then(|| env_file.display().to_string())
}

/// The digest the record keeps for `spec`, if its unit file, environment file and bundle on the
/// machine are exactly what the spec writes (an adopted process then needs no restart).
pub(crate) fn on_disk_digest(
    paths: &Paths,
    spec: &ProcessSpec,
    unit_file: &Path,
) -> Option<String> {
    let (env_file, env_text, unit_text) = unit_and_environment(paths, spec);
    let wanted = wanted(unit_file, &unit_text, &env_file, env_text.as_deref(), spec);
    on_disk::compare(&paths.machine, &wanted, Path::new(&spec.bundle_dir))
        .ok()
        .filter(on_disk::Drift::is_empty)
        .map(|_| digest(&unit_text, env_text.as_deref(), spec))
}

/// Every file a process writes, with the owner and mode it gets: what [`write_bundle`], the
/// environment file and the unit file put on the machine.
fn wanted<'a>(
    unit_file: &Path,
    unit_text: &'a str,
    env_file: &Path,
    env_text: Option<&'a str>,
    spec: &'a ProcessSpec,
) -> Vec<on_disk::Wanted<'a>> {
    let root =
        |path: PathBuf, bytes: &'a [u8], mode: u32, name: String, shown: bool| on_disk::Wanted {
            path,
            bytes,
            uid: files::root_ids().0,
            gid: files::root_ids().1,
            mode,
            name,
            shown,
        };
    let mut all = vec![root(
        unit_file.to_path_buf(),
        unit_text.as_bytes(),
        0o644,
        "unit file".into(),
        true,
    )];
    if let Some(text) = env_text {
        all.push(root(
            env_file.to_path_buf(),
            text.as_bytes(),
            0o600,
            "environment file".into(),
            false,
        ));
    }
    for f in &spec.bundle {
        all.push(root(
            Path::new(&spec.bundle_dir).join(&f.path),
            f.content.as_bytes(),
            f.mode,
            format!("bundle file {}", f.path),
            true,
        ));
    }
    all
}

/// What a change from what `entry` was made from costs the unit: its frame moved (or is not
/// known), a restart; else the strongest cost among its bundle files that moved
/// ([`mesh_wire::BundleFile::cost`]). A change nothing here explains restarts it.
fn change_cost(entry: &ProcessEntry, frame: &str, spec: &ProcessSpec) -> Cost {
    let Some(made) = entry.made_from.as_ref().filter(|m| m.frame == frame) else {
        return Cost::Restart;
    };
    spec.bundle
        .iter()
        .filter_map(|f| {
            let was = made.bundle.get(&f.path);
            let moved = was.is_none_or(|w| w.sha256 != files::sha256(f.content.as_bytes()));
            moved.then(|| f.cost(was.map(|w| (w.source.as_str(), &w.settings))))
        })
        .max()
        .unwrap_or(Cost::Restart)
}

/// What a process is besides its bundle files' contents: its unit file, its environment and
/// the names and modes of its bundle files.
fn frame(unit_text: &str, env_text: Option<&str>, spec: &ProcessSpec) -> String {
    hashed(unit_text, env_text, spec, false)
}

/// What the unit runs from: a change of any of it restarts the unit.
fn digest(unit_text: &str, env_text: Option<&str>, spec: &ProcessSpec) -> String {
    hashed(unit_text, env_text, spec, true)
}

/// The sha256 of a process's unit file, environment and bundle files (their contents too when
/// `contents`).
fn hashed(unit_text: &str, env_text: Option<&str>, spec: &ProcessSpec, contents: bool) -> String {
    let mut all = unit_text.as_bytes().to_vec();
    if let Some(env) = env_text {
        all.extend_from_slice(b"\0environment\0");
        all.extend_from_slice(env.as_bytes());
    }
    for f in &spec.bundle {
        all.extend_from_slice(format!("\0{}\0{:o}\0", f.path, f.mode).as_bytes());
        if contents {
            all.extend_from_slice(f.content.as_bytes());
        }
    }
    files::sha256(&all)
}

/// Writes the bundle and removes any file in it the declaration no longer names.
fn write_bundle(root: &files::Root, dir: &Path, spec: &ProcessSpec) -> Result<(), Failure> {
    root.make_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut wanted = BTreeSet::new();
    for f in &spec.bundle {
        let rel = Path::new(&f.path);
        if f.path.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(format!("bundle file {:?} is not a plain relative path", f.path).into());
        }
        let at = dir.join(rel);
        if let Some(parent) = at.parent() {
            root.make_dir(parent)
                .map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        root.write_atomically(&at, f.content.as_bytes(), Some(files::root_ids()), f.mode)
            .map_err(|e| format!("{}: {e}", at.display()))?;
        wanted.insert(at);
    }
    root.prune(dir, &wanted)
        .map_err(|e| format!("{}: {e}", dir.display()))
        .map_err(Failure::from)
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
}

impl GiveBack for ProcessEntry {
    const KIND: &'static str = "process";
    const PHASE: Phase = Phase::Units;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_process(self)
    }
}
