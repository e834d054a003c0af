//! A machine of the tests' own: a small model of systemd's units, dpkg's packages, the accounts
//! and Docker's containers, kept in a directory (`model.json`), and every call the helper made,
//! in order, one line each (`calls`), so a test asserts "restarted x once, reloaded nothing".
//!
//! A unit is known to it when the model has it or its unit file is under the root
//! (`/etc/systemd/system`, `/usr/lib/systemd/system`, `/lib/systemd/system`), as systemd knows a
//! unit once its file is there and it reloaded. Starting a unit it does not know fails, as
//! systemd's would; everything else succeeds and changes the model as the real command would.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Call, System, SystemError};
use crate::files::Root;
use crate::units::UnitState;

/// The model the recording machine keeps between runs.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(crate) struct Model {
    #[serde(default)]
    pub(crate) units: BTreeMap<String, Unit>,
    /// Installed packages and their versions.
    #[serde(default)]
    pub(crate) packages: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) users: BTreeMap<String, User>,
    /// Groups and their gids.
    #[serde(default)]
    pub(crate) groups: BTreeMap<String, u32>,
    #[serde(default)]
    pub(crate) containers: BTreeMap<String, Container>,
    /// What each installed package depends on, by name: removing one removes those that
    /// depend on it, as apt does.
    #[serde(default)]
    pub(crate) depends: BTreeMap<String, Vec<String>>,
    /// Calls (as the log writes them) that fail, as a test's machine that refuses them: a
    /// fault is a behaviour of the fake, not a switch in the helper.
    #[serde(default)]
    pub(crate) failing: Vec<String>,
}

impl Model {
    /// What removing `package` takes, as apt would: it, and every installed package that
    /// depends on one it takes, in order.
    pub(crate) fn removal_takes(&self, package: &str) -> Vec<String> {
        let mut takes = Vec::new();
        if self.packages.contains_key(package) {
            takes.push(package.to_string());
        }
        let mut i = 0;
        while let Some(gone) = takes.get(i).cloned() {
            for (p, on) in &self.depends {
                if self.packages.contains_key(p) && on.contains(&gone) && !takes.contains(p) {
                    takes.push(p.clone());
                }
            }
            i += 1;
        }
        takes
    }
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(crate) struct Unit {
    pub(crate) active: bool,
    pub(crate) enabled: bool,
    #[serde(default)]
    pub(crate) failed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct User {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) home: String,
    pub(crate) shell: String,
    /// Supplementary groups.
    #[serde(default)]
    pub(crate) groups: Vec<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(crate) struct Container {
    pub(crate) running: bool,
    pub(crate) labels: BTreeMap<String, String>,
}

/// The recording machine: its model and calls kept in `dir`, unit files looked for under `root`.
pub(crate) struct Recording {
    dir: PathBuf,
    root: Root,
    model: Mutex<Model>,
}

impl Recording {
    /// The model's file in the recording's directory.
    pub(crate) const MODEL: &'static str = "model.json";
    /// The calls' file: one line per call, appended.
    pub(crate) const LOG: &'static str = "calls";

    /// The recording machine kept in `dir` (what an earlier run left there, or an empty one).
    pub(crate) fn at(dir: PathBuf, root: Root) -> Recording {
        let model = std::fs::read(dir.join(Self::MODEL))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Recording {
            dir,
            root,
            model: Mutex::new(model),
        }
    }

    /// Every call recorded in `dir`, in order.
    #[cfg(test)]
    pub(crate) fn calls_in(dir: &Path) -> Vec<String> {
        std::fs::read_to_string(dir.join(Self::LOG))
            .map(|text| text.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// The model as it is now.
    pub(crate) fn model(&self) -> Model {
        self.model
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Sets the model (a test's machine as it was before the helper came).
    #[cfg(test)]
    pub(crate) fn set(&self, change: impl FnOnce(&mut Model)) {
        self.change(change);
    }

    /// Notes one call (`line`, as the log writes it, of `call`); a log that cannot be written
    /// fails the call, so no test reads a partial one, and so does a call the model says fails.
    fn record(&self, line: String, call: Call) -> Result<(), SystemError> {
        if self.model().failing.contains(&line) {
            self.append(&format!("{line} (failed)"), &call)?;
            return Err(SystemError::Exit {
                call,
                code: Some(1),
                said: "the recording machine fails it".into(),
            });
        }
        self.append(&line, &call)
    }

    fn append(&self, line: &str, call: &Call) -> Result<(), SystemError> {
        std::fs::create_dir_all(&self.dir)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.dir.join(Self::LOG))
            })
            .and_then(|mut f| writeln!(f, "{line}"))
            .map_err(|e| SystemError::Start {
                call: call.clone(),
                why: format!("the recording machine cannot note it: {e}"),
            })
    }

    /// Changes the model and keeps it.
    fn change<T>(&self, change: impl FnOnce(&mut Model) -> T) -> T {
        let mut model = self
            .model
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let out = change(&mut model);
        if let Ok(json) = serde_json::to_vec_pretty(&*model) {
            let _ = std::fs::create_dir_all(&self.dir)
                .and_then(|()| std::fs::write(self.dir.join(Self::MODEL), json));
        }
        out
    }

    /// Whether systemd would know `unit`: the model has it, or its unit file is there.
    fn knows(&self, model: &Model, unit: &str) -> bool {
        model.units.contains_key(unit)
            || [
                "/etc/systemd/system",
                "/usr/lib/systemd/system",
                "/lib/systemd/system",
            ]
            .iter()
            .any(|dir| {
                self.root
                    .real(&Path::new(dir).join(unit))
                    .symlink_metadata()
                    .is_ok()
            })
    }
}

impl System for Recording {
    fn prefetch(&self, _: &[&str]) {}

    fn unit_state(&self, unit: &str) -> Result<UnitState, SystemError> {
        self.record(
            format!("systemctl show {unit}"),
            Call::systemctl("show", unit),
        )?;
        let model = self.model();
        let exists = self.knows(&model, unit);
        let u = model.units.get(unit).cloned().unwrap_or_default();
        Ok(UnitState {
            exists,
            running: Some(u.active),
            enabled: exists.then_some(u.enabled),
            failed: u.failed,
            stop_runs: Vec::new(),
        })
    }

    fn systemctl(&self, verb: &str, unit: &str) -> Result<(), SystemError> {
        let call = Call::systemctl(verb, unit);
        self.record(format!("systemctl {verb} {unit}"), call.clone())?;
        let model = self.model();
        // systemctl's own exit statuses: 5 for a unit it does not know, 1 for the rest
        if !self.knows(&model, unit) && verb != "stop" && verb != "reset-failed" {
            return Err(SystemError::Exit {
                call,
                code: Some(5),
                said: format!("Unit {unit} not found."),
            });
        }
        if verb == "reload" && !model.units.get(unit).is_some_and(|u| u.active) {
            return Err(SystemError::Exit {
                call,
                code: Some(1),
                said: format!("{unit} is not active, cannot reload."),
            });
        }
        self.change(|m| {
            let u = m.units.entry(unit.to_string()).or_default();
            match verb {
                "start" | "restart" => {
                    u.active = true;
                    u.failed = false;
                }
                "stop" => u.active = false,
                "enable" => u.enabled = true,
                "disable" => u.enabled = false,
                "reset-failed" => u.failed = false,
                _ => {}
            }
        });
        Ok(())
    }

    fn daemon_reload(&self) -> Result<(), SystemError> {
        self.record("systemctl daemon-reload".into(), Call::DaemonReload)
    }

    fn settled(&self, unit: &str) -> Result<(), SystemError> {
        if self.model().units.get(unit).is_some_and(|u| u.active) {
            Ok(())
        } else {
            Err(SystemError::NotRunning {
                unit: unit.to_string(),
                why: "the recording machine says inactive".into(),
            })
        }
    }

    fn check_schedule(&self, schedule: &str) -> Result<(), SystemError> {
        self.record(
            format!("systemd-analyze calendar {schedule}"),
            Call::Calendar {
                schedule: schedule.to_string(),
            },
        )
    }

    fn run_detached(&self, settings: &[String], argv: &[String]) -> Result<(), SystemError> {
        let unit = settings
            .iter()
            .find_map(|s| s.strip_prefix("--unit="))
            .map(str::to_string);
        self.record(
            format!("systemd-run {} -- {}", settings.join(" "), argv.join(" ")),
            Call::SystemdRun { unit },
        )
    }

    fn docker(&self, args: &[&str]) -> Result<(), SystemError> {
        self.record(format!("docker {}", args.join(" ")), Call::docker(args))?;
        match args {
            ["run", rest @ ..] => {
                let mut container = Container {
                    running: true,
                    labels: BTreeMap::new(),
                };
                let mut name = None;
                let mut words = rest.iter();
                while let Some(word) = words.next() {
                    match *word {
                        "--name" => name = words.next().map(|n| (*n).to_string()),
                        "--label" => {
                            if let Some((k, v)) = words.next().and_then(|l| l.split_once('=')) {
                                container.labels.insert(k.into(), v.into());
                            }
                        }
                        _ => {}
                    }
                }
                if let Some(name) = name {
                    self.change(|m| m.containers.insert(name, container));
                }
            }
            ["start", name] => self.change(|m| {
                if let Some(c) = m.containers.get_mut(*name) {
                    c.running = true;
                }
            }),
            ["stop", name] => self.change(|m| {
                if let Some(c) = m.containers.get_mut(*name) {
                    c.running = false;
                }
            }),
            ["rm", "-f", name] => {
                self.change(|m| m.containers.remove(*name));
            }
            _ => {}
        }
        Ok(())
    }

    fn inspect_container(&self, name: &str) -> Result<Option<Value>, SystemError> {
        self.record(
            format!("docker container inspect {name}"),
            Call::Docker {
                verb: "container inspect".into(),
                container: name.to_string(),
            },
        )?;
        Ok(self.model().containers.get(name).map(|c| {
            json!({
                "Name": format!("/{name}"),
                "Config": {"Labels": c.labels},
                "State": {"Running": c.running},
            })
        }))
    }

    fn labelled_containers(&self, label: &str) -> Vec<String> {
        let _ = self.record(
            format!("docker ps --filter label={label}"),
            Call::Docker {
                verb: "ps --filter".into(),
                container: format!("label={label}"),
            },
        );
        self.model()
            .containers
            .iter()
            .filter(|(_, c)| c.labels.contains_key(label))
            .map(|(name, _)| name.clone())
            .collect()
    }

    fn installed(&self, package: &str) -> Result<Option<String>, SystemError> {
        Ok(self.model().packages.get(package).cloned())
    }

    fn removal_takes(&self, package: &str) -> Result<Vec<String>, SystemError> {
        Ok(self.model().removal_takes(package))
    }

    fn apt_get(&self, verb: &str, arg: &str) -> Result<(), SystemError> {
        self.record(
            format!("apt-get {verb} {arg}"),
            Call::AptGet {
                verb: verb.to_string(),
                arg: arg.to_string(),
            },
        )?;
        let (name, version) = arg.split_once('=').unwrap_or((arg, ""));
        self.change(|m| match verb {
            "install" => {
                let now = m.packages.get(name).cloned();
                let version = match (version, now) {
                    ("", Some(now)) => now,
                    ("", None) => "1.0".to_string(),
                    (v, _) => v.to_string(),
                };
                m.packages.insert(name.to_string(), version);
            }
            "remove" => {
                for gone in m.removal_takes(name) {
                    m.packages.remove(&gone);
                }
            }
            _ => {}
        });
        Ok(())
    }

    fn apt_update(&self) -> Result<(bool, Vec<String>), SystemError> {
        self.record(
            "apt-get update".into(),
            Call::AptGet {
                verb: "update".into(),
                arg: String::new(),
            },
        )?;
        Ok((true, Vec::new()))
    }

    fn getent(&self, database: &str, key: &str) -> Result<Option<String>, SystemError> {
        let model = self.model();
        // getent takes a number for a name, as the real one does
        let id: Option<u32> = key.parse().ok();
        Ok(match database {
            "passwd" if key == "root" || id == Some(0) => {
                Some("root:x:0:0:root:/root:/bin/sh".into())
            }
            "group" if key == "root" || id == Some(0) => Some("root:x:0:".into()),
            "passwd" => model
                .users
                .iter()
                .find(|(name, u)| name.as_str() == key || Some(u.uid) == id)
                .map(|(name, u)| format!("{name}:x:{}:{}::{}:{}", u.uid, u.gid, u.home, u.shell)),
            "group" => model
                .groups
                .iter()
                .find(|(name, gid)| name.as_str() == key || Some(**gid) == id)
                .map(|(name, gid)| format!("{name}:x:{gid}:")),
            _ => None,
        })
    }

    fn supplementary(&self, user: &str) -> Result<Vec<String>, SystemError> {
        let model = self.model();
        let u = model.users.get(user).ok_or_else(|| SystemError::Exit {
            call: Call::Groups {
                user: user.to_string(),
            },
            code: Some(1),
            said: format!("id: '{user}': no such user"),
        })?;
        let mut groups = u.groups.clone();
        groups.sort();
        groups.dedup();
        Ok(groups)
    }

    fn change_account(
        &self,
        program: &str,
        args: &[String],
        name: &str,
    ) -> Result<(), SystemError> {
        let call = Call::Account {
            program: program.to_string(),
            args: args.to_vec(),
            name: name.to_string(),
        };
        self.record(
            format!("{program} {} -- {name}", args.join(" ")),
            call.clone(),
        )?;
        let mut model = self.model();
        super::accounts::apply(&mut model, program, args, name).map_err(|refused| {
            SystemError::Exit {
                call,
                code: Some(1),
                said: refused.to_string(),
            }
        })?;
        self.change(|m| *m = model);
        Ok(())
    }
}
