//! A container the mesh runs with the machine's Docker.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
