//! A container run with the machine's Docker, through the `docker` command line (data as
//! arguments, never a shell; its environment through a root-only env-file, never on the command
//! line `ps` shows). The mesh labels what it makes, recreates a container only when its
//! spec changed, and never touches a container it did not make.

use std::path::Path;

use mesh_wire::{ContainerSpec, Outcome, Resource, State};
use serde_json::Value;

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, access, env, outcome};
use crate::confirm::Touches;
use crate::files;
use crate::record::{ContainerEntry, Entry, Paths, Record};

/// The label holding the digest of the spec a container was made from.
const SPEC_LABEL: &str = "mesh.spec";
/// The label naming the instance that declared it.
pub(crate) const INSTANCE_LABEL: &str = "mesh.instance";

impl Run<'_> {
    pub(super) fn try_container(
        &mut self,
        resource: &Resource,
        spec: &ContainerSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        spec.check().map_err(|e| e.to_string())?;
        // the operator's data is never made: one not there fails the container before it runs
        access::present(&self.paths.machine, &spec.access)?;
        // the probe is not what the container is made from: adding or changing one recreates
        // nothing, and a container made before probes existed keeps its digest
        let made_from = ContainerSpec {
            ready: None,
            ..spec.clone()
        };
        let digest = files::sha256(&serde_json::to_vec(&made_from).map_err(|e| e.to_string())?);
        let found = inspect(self.paths, &spec.name)?;
        let Some((state, detail)) =
            self.change_container(resource, spec, record, found.as_ref(), &digest)?
        else {
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("container {} runs as declared", spec.name),
            ));
        };
        if self.applying() {
            self.remember(resource, spec, record, true)?;
        }
        // it was run, recreated or started: whether it serves is what its probe says
        if let Some(e) = self.not_ready(true, spec.ready.as_ref(), None) {
            return Ok(outcome(
                &resource.id,
                State::Failed,
                format!("{detail}, but {e}"),
            ));
        }
        Ok(outcome(&resource.id, state, detail))
    }

    /// Runs, recreates or starts the container as `found` (its state on the machine) calls
    /// for; what was done, or `None` when it runs as declared.
    fn change_container(
        &mut self,
        resource: &Resource,
        spec: &ContainerSpec,
        record: &mut Record,
        found: Option<&Found>,
        digest: &str,
    ) -> Result<Option<(State, String)>, Failure> {
        // what a container the mesh made no longer runs with, changed by hand
        let by_hand = found.map(|c| c.differing(spec)).unwrap_or_default();
        let said = match found {
            Some(c) if c.spec.is_none() => {
                return Err(
                    "a container of this name exists and the mesh did not make it; it is left alone"
                        .into(),
                );
            }
            Some(c) if c.spec.as_deref() == Some(digest) && !by_hand.is_empty() => {
                let fields = by_hand.join(", ");
                if self.applying() {
                    self.recreate(resource, spec, record, digest)?;
                }
                (
                    State::Changed,
                    format!(
                        "{} container {} ({fields} changed on the machine)",
                        self.said("recreated", "recreate"),
                        spec.name
                    ),
                )
            }
            Some(c) if c.spec.as_deref() == Some(digest) && c.running => return Ok(None),
            Some(c) if c.spec.as_deref() == Some(digest) => {
                if self.applying() {
                    self.paths.system.docker(&["start", &spec.name])?;
                }
                (
                    State::Changed,
                    format!(
                        "{} container {} (it was stopped)",
                        self.said("started", "start"),
                        spec.name
                    ),
                )
            }
            Some(_) => {
                let fields = changed_fields(record, resource, spec);
                if self.applying() {
                    self.recreate(resource, spec, record, digest)?;
                }
                (
                    State::Changed,
                    format!(
                        "{} container {} ({fields} changed)",
                        self.said("recreated", "recreate"),
                        spec.name
                    ),
                )
            }
            None => {
                if self.applying() {
                    self.remember(resource, spec, record, false)?;
                    make_sources(&self.paths.machine, spec)?;
                    self.run_container(resource, spec, digest)?;
                }
                (
                    State::Created,
                    format!("{} container {}", self.said("ran", "run"), spec.name),
                )
            }
        };
        Ok(Some(said))
    }

    /// Removes the container and runs it again from `spec`, recorded first.
    fn recreate(
        &self,
        resource: &Resource,
        spec: &ContainerSpec,
        record: &mut Record,
        digest: &str,
    ) -> Result<(), Failure> {
        self.remember(resource, spec, record, false)?;
        make_sources(&self.paths.machine, spec)?;
        self.paths.system.docker(&["rm", "-f", &spec.name])?;
        self.run_container(resource, spec, digest)
    }

    /// `docker run`, its environment read from a root-only env-file that is gone again once
    /// Docker has it: nothing of it is on the command line.
    fn run_container(
        &self,
        resource: &Resource,
        spec: &ContainerSpec,
        digest: &str,
    ) -> Result<(), Failure> {
        if spec.environment.is_empty() {
            return docker_run(self.paths, &run_args(resource, spec, digest, None));
        }
        let at = env::path(self.paths, &spec.name, true);
        env::write(self.paths, &at, &env::docker_text(&spec.environment))?;
        let ran = docker_run(self.paths, &run_args(resource, spec, digest, Some(&at)));
        let removed = env::remove(&at);
        ran.and(removed)
    }

    /// Records the container before Docker is asked to make it, so an interrupted run still
    /// knows to remove it; `made` records the spec it now runs.
    fn remember(
        &self,
        resource: &Resource,
        spec: &ContainerSpec,
        record: &mut Record,
        made: bool,
    ) -> Result<(), Failure> {
        let previous = match record.resources.get(&resource.id) {
            Some(Entry::Container(e)) => e.spec.clone(),
            _ => None,
        };
        record.resources.insert(
            resource.id.clone(),
            Entry::Container(ContainerEntry {
                name: spec.name.clone(),
                spec: if made { Some(spec.clone()) } else { previous },
            }),
        );
        if made {
            Ok(())
        } else {
            record.save(self.paths).map_err(Failure::Record)
        }
    }

    pub(super) fn give_back_container(
        &mut self,
        entry: &ContainerEntry,
    ) -> Result<String, Failure> {
        match inspect(self.paths, &entry.name)? {
            None => Ok(format!("container {} is already gone", entry.name)),
            Some(c) if c.spec.is_none() => Ok(format!(
                "left container {} alone: the mesh did not make it",
                entry.name
            )),
            Some(_) => {
                if self.applying() {
                    self.paths.system.docker(&["rm", "-f", &entry.name])?;
                }
                let kept: Vec<&str> = entry
                    .spec
                    .iter()
                    .flat_map(|s| s.mounts.iter().map(|m| m.source.as_str()))
                    .collect();
                Ok(format!(
                    "{} container {}{}",
                    self.said("stopped and removed", "stop and remove"),
                    entry.name,
                    if kept.is_empty() {
                        String::new()
                    } else {
                        format!("; its host directories kept: {}", kept.join(", "))
                    }
                ))
            }
        }
    }
}

/// A container as Docker reports it.
struct Found {
    /// The mesh's spec label; `None`: not made by the mesh.
    spec: Option<String>,
    running: bool,
    /// Docker's whole account of it (`docker container inspect`).
    inspected: Value,
}

impl Found {
    /// The fields of `spec` the container does not run with, as Docker reports it: a container
    /// changed by hand (`docker update`, or made again with the mesh's labels) keeps its label
    /// and no longer runs its spec. An environment value is compared, never shown.
    fn differing(&self, spec: &ContainerSpec) -> Vec<&'static str> {
        let config = &self.inspected["Config"];
        let host = &self.inspected["HostConfig"];
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let env = strings(&config["Env"]);
        let mut mounts: Vec<(String, String, bool)> = host["Mounts"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| {
                        (
                            m["Source"].as_str().unwrap_or_default().to_string(),
                            m["Target"].as_str().unwrap_or_default().to_string(),
                            m["ReadOnly"].as_bool().unwrap_or(false),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        mounts.sort();
        let mut wanted_mounts: Vec<(String, String, bool)> = spec
            .binds()
            .iter()
            .map(|m| (m.source.clone(), m.target.clone(), m.read_only))
            .collect();
        wanted_mounts.sort();
        let mut ports: Vec<String> = host["PortBindings"]
            .as_object()
            .map(|o| {
                o.iter()
                    .flat_map(|(inside, out)| {
                        out.as_array().into_iter().flatten().map(move |b| {
                            format!("{}:{inside}", b["HostPort"].as_str().unwrap_or_default())
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        ports.sort();
        let mut wanted_ports: Vec<String> = spec
            .ports
            .iter()
            .map(|p| format!("{}:{}/{}", p.host, p.container, p.protocol))
            .collect();
        wanted_ports.sort();
        [
            (
                "image",
                config["Image"].as_str() != Some(spec.image.as_str()),
            ),
            (
                "command",
                !spec.command.is_empty() && strings(&config["Cmd"]) != spec.command,
            ),
            (
                "environment",
                spec.environment
                    .iter()
                    .any(|(k, v)| !env.contains(&format!("{k}={v}"))),
            ),
            ("mounts", mounts != wanted_mounts),
            ("ports", ports != wanted_ports),
            (
                "restart",
                host["RestartPolicy"]["Name"].as_str() != Some(spec.restart.as_str()),
            ),
        ]
        .into_iter()
        .filter(|(_, d)| *d)
        .map(|(f, _)| f)
        .collect()
    }
}

/// The container `name` as Docker has it, `None` when there is none.
fn inspect(paths: &Paths, name: &str) -> Result<Option<Found>, crate::system::SystemError> {
    let Some(inspected) = paths.system.inspect_container(name)? else {
        return Ok(None);
    };
    let label = inspected["Config"]["Labels"][SPEC_LABEL].as_str();
    Ok(Some(Found {
        spec: label.filter(|l| !l.is_empty()).map(str::to_string),
        running: inspected["State"]["Running"].as_bool() == Some(true),
        inspected,
    }))
}

/// What changed in the container's spec since the record's, said for the recreate.
fn changed_fields(record: &Record, resource: &Resource, spec: &ContainerSpec) -> String {
    let previous = match record.resources.get(&resource.id) {
        Some(Entry::Container(e)) => e.spec.clone(),
        _ => None,
    };
    previous
        .as_ref()
        .map(|p| spec.differing(p).join(", "))
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| "its spec".into())
}

/// A mount's directory on the machine is made if it is missing (Docker refuses a bind mount of
/// nothing); it is data, so it is kept when the container goes.
fn make_sources(root: &crate::files::Root, spec: &ContainerSpec) -> Result<(), Failure> {
    for m in &spec.mounts {
        if !m.source.starts_with('/') {
            return Err(format!("mount source {:?} is not an absolute path", m.source).into());
        }
        root.make_dir(std::path::Path::new(&m.source))
            .map_err(|e| format!("{}: {e}", m.source))?;
    }
    Ok(())
}

/// `docker run` with `args` (made by [`run_args`]).
fn docker_run(paths: &Paths, args: &[String]) -> Result<(), Failure> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    paths.system.docker(&args).map_err(Failure::from)
}

fn run_args(
    resource: &Resource,
    spec: &ContainerSpec,
    digest: &str,
    env_file: Option<&Path>,
) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "run".into(),
        "--detach".into(),
        "--name".into(),
        spec.name.clone(),
        "--label".into(),
        format!("{INSTANCE_LABEL}={}", resource.instance),
        "--label".into(),
        format!("{SPEC_LABEL}={digest}"),
        "--restart".into(),
        spec.restart.clone(),
    ];
    if let Some(file) = env_file {
        args.push("--env-file".into());
        args.push(file.display().to_string());
    }
    for m in &spec.binds() {
        args.push("--mount".into());
        args.push(format!(
            "type=bind,source={},target={}{}",
            m.source,
            m.target,
            if m.read_only { ",readonly" } else { "" }
        ));
    }
    for p in &spec.ports {
        args.push("--publish".into());
        args.push(format!("{}:{}/{}", p.host, p.container, p.protocol));
    }
    args.push("--".into());
    args.push(spec.image.clone());
    args.extend(spec.command.iter().cloned());
    args
}

impl Kind for ContainerSpec {
    const PHASE: Phase = Phase::Units;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_container(resource, self, record)
    }

    /// nothing: a revert leaves containers as the push made them (docs/guide.md says why), and
    /// the record put back keeps them the mesh's
    fn touches(&self, _paths: &Paths) -> Touches {
        Touches::default()
    }
}

impl GiveBack for ContainerEntry {
    const KIND: &'static str = "container";
    const PHASE: Phase = Phase::Units;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_container(self)
    }

    fn touches(&self) -> Touches {
        Touches::default()
    }

    const REVERTED: bool = false;
}

#[cfg(test)]
mod tests;
