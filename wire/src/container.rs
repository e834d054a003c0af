//! A container the mesh runs with the machine's Docker.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::path::Place;
use crate::process::unsealed_variable;
use crate::unit::{UnitError, environment_text};
use crate::*;

/// A container the mesh runs. It carries the labels `mesh.instance` and `mesh.spec` (a digest of
/// this spec): it is recreated only when the spec changes, and a container without the labels is
/// never touched. Undeclared: stopped and removed; its host directories are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerSpec {
    /// The container's name: `<instance>-<name>`.
    pub name: String,
    pub image: String,
    /// The command and its arguments; empty runs the image's own.
    pub command: Vec<String>,
    pub environment: BTreeMap<String, String>,
    /// The variables among them that carry a secret: their values are never shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_environment: Vec<String>,
    /// The values of the secret variables, sealed to the machine's host key: each one's value in
    /// `environment` is then empty, and only the helper on that machine opens it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sealed_environment: BTreeMap<String, Sealed>,
    pub mounts: Vec<Mount>,
    pub ports: Vec<Port>,
    /// Docker's restart policy: `no`, `on-failure`, `always`, `unless-stopped`.
    pub restart: String,
    /// The operator's data it may reach, as a process may: each seen at the same path inside,
    /// read-only when only reading was asked; never created, owned or removed, and one not on
    /// the machine fails the container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access: Vec<Access>,
    /// What says it serves, probed after every run, recreation or start the helper made; not
    /// part of what the container is made from (a probe added or changed recreates nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<Ready>,
}

impl ContainerSpec {
    /// Every directory of the machine it sees: its mounts, then the operator's data it may reach
    /// (at the same path inside).
    pub fn binds(&self) -> Vec<Mount> {
        let access = self.access.iter().map(|a| Mount {
            source: a.path.clone(),
            target: a.path.clone(),
            read_only: !a.write,
        });
        self.mounts.iter().cloned().chain(access).collect()
    }

    /// The fields in which `self` differs from `other`, by name.
    pub fn differing(&self, other: &ContainerSpec) -> Vec<&'static str> {
        [
            ("image", self.image != other.image),
            ("command", self.command != other.command),
            (
                "environment",
                self.environment != other.environment
                    || self.sealed_environment != other.sealed_environment,
            ),
            (
                "mounts",
                self.mounts != other.mounts || self.access != other.access,
            ),
            ("ports", self.ports != other.ports),
            ("restart", self.restart != other.restart),
        ]
        .into_iter()
        .filter(|(_, d)| *d)
        .map(|(f, _)| f)
        .collect()
    }
}

/// A directory of the machine seen inside a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    /// The directory on the machine.
    pub source: String,
    /// Where the container sees it.
    pub target: String,
    #[serde(default)]
    pub read_only: bool,
}

/// A port of the machine forwarded into a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub host: u16,
    pub container: u16,
    /// `tcp` or `udp`.
    pub protocol: String,
}

impl SpecKind for ContainerSpec {
    const KIND: &'static str = "container";

    fn at(&self) -> &str {
        &self.name
    }

    fn paths(&self) -> Vec<(String, &str, Place)> {
        let mounts = self.mounts.iter().enumerate().flat_map(|(m, mount)| {
            [
                (
                    format!("mounts[{m}].source"),
                    mount.source.as_str(),
                    Place::Machine,
                ),
                (
                    format!("mounts[{m}].target"),
                    mount.target.as_str(),
                    Place::Container,
                ),
            ]
        });
        let access = self.access.iter().flat_map(|a| {
            [
                (a.name.clone(), a.path.as_str(), Place::Machine),
                (a.name.clone(), a.path.as_str(), Place::Container),
            ]
        });
        mounts.chain(access).collect()
    }

    fn check_unit(&self) -> Result<(), UnitError> {
        self.check()
    }

    fn access(&self) -> &[Access] {
        &self.access
    }

    fn access_mut(&mut self) -> Option<&mut Vec<Access>> {
        Some(&mut self.access)
    }

    fn environment_mut(&mut self) -> Option<Environment<'_>> {
        Some(Environment {
            secret: &self.secret_environment,
            values: &mut self.environment,
            sealed: &mut self.sealed_environment,
        })
    }

    fn sealed(&self) -> Vec<&Sealed> {
        self.sealed_environment.values().collect()
    }

    fn sealed_mut(&mut self) -> Vec<&mut Sealed> {
        self.sealed_environment.values_mut().collect()
    }

    fn unsealed_secret(&self) -> bool {
        unsealed_variable(&self.secret_environment, &self.sealed_environment)
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        self.differing(old).into_iter().map(String::from).collect()
    }

    // its image, command, environment, mounts and ports
    fn plan_text(&self) -> String {
        let mut out = format!("image: {}\nrestart: {}\n", self.image, self.restart);
        if !self.command.is_empty() {
            out.push_str(&format!(
                "command: {}\n",
                serde_json::to_string(&self.command).unwrap_or_default()
            ));
        }
        out.push_str(&environment_text(
            &self.environment,
            &self.secret_environment,
        ));
        // the operator's data it reaches, too: a `mesh place` elsewhere shows as a mount
        for m in &self.binds() {
            out.push_str(&format!(
                "mount {} -> {}{}\n",
                m.source,
                m.target,
                if m.read_only { " (read-only)" } else { "" }
            ));
        }
        for p in &self.ports {
            out.push_str(&format!("port {}:{}/{}\n", p.host, p.container, p.protocol));
        }
        out
    }

    fn removal(&self) -> String {
        format!(
            "container {}: stopped and removed, its host directories kept",
            self.name
        )
    }
}
