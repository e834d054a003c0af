//! A process the mesh writes, runs and removes: its unit, environment and bundle.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::*;

/// A service unit the mesh writes, enables and starts; restarted when its unit or bundle changes;
/// stopped, disabled and removed with its bundle when undeclared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSpec {
    /// The unit's name, e.g. `web-server.service`.
    pub unit: String,
    /// One sentence for the unit's Description.
    pub description: String,
    /// The command and its arguments (written to ExecStart quoted, never through a shell).
    pub command: Vec<String>,
    /// The user it runs as (a name or a uid).
    pub user: String,
    /// Environment variables.
    pub environment: BTreeMap<String, String>,
    /// The variables among them that carry a secret (a definition's declared exception): their
    /// values are never shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_environment: Vec<String>,
    /// The values of the secret variables, sealed to the machine's host key: each one's value in
    /// `environment` is then empty, and only the helper on that machine opens it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sealed_environment: BTreeMap<String, Sealed>,
    /// The working directory; the bundle's directory when not said.
    pub working_directory: Option<String>,
    /// systemd's Restart= policy: `no`, `on-failure`, `always`.
    pub restart: String,
    /// Where the bundle goes: `/var/lib/mesh/bundles/<unit>`.
    pub bundle_dir: String,
    /// The files it runs, relative to the bundle directory.
    pub bundle: Vec<BundleFile>,
    /// The operator's data it may reach: paths the mesh never creates, owns or removes; one not
    /// on the machine fails the process, and one read-only is mounted so for it alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access: Vec<Access>,
    /// What says it serves, probed after every start or restart the helper made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<Ready>,
}

/// Access to a path the operator named (`mesh place`): the mesh only checks that it is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// The requirement's name, for messages.
    pub name: String,
    /// Absolute path on the machine.
    pub path: String,
    /// Read-write; otherwise the process sees it read-only (systemd `BindReadOnlyPaths=`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub write: bool,
}

/// One file of a process's bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFile {
    /// Relative to the bundle directory, no `..`.
    pub path: String,
    pub content: String,
    pub mode: u32,
    /// The template's digest: a change of it restarts the process.
    #[serde(default)]
    pub source: String,
    /// The settings and requirement fields it reads: a change of only these costs what they
    /// declare (a `none` setting read in a bundle file does not restart the process).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, SettingUse>,
}

impl BundleFile {
    /// What a change of this bundle file's content costs its process, from what it was last
    /// made from (`None`: a new file, or one whose making is unknown). A process the mesh writes
    /// has no ExecReload: what would reload it restarts it.
    pub fn cost(&self, previous: Option<(&str, &BTreeMap<String, SettingUse>)>) -> Cost {
        match made_cost(previous, &self.source, &self.settings, Cost::Restart, false) {
            Cost::Reload => Cost::Restart,
            cost => cost,
        }
    }
}

impl ProcessSpec {
    /// What going from `old` to `self` costs the unit: anything but a bundle file's content
    /// (its command, user, environment, unit, the bundle's files and modes) restarts it; a bundle
    /// file whose content moved costs what [`BundleFile::cost`] says. `None` when nothing moved.
    pub fn change_cost(&self, old: &ProcessSpec) -> Cost {
        let same_frame = (&self.unit, &self.description, &self.command, &self.user)
            == (&old.unit, &old.description, &old.command, &old.user)
            && (&self.environment, &self.working_directory, &self.restart)
                == (&old.environment, &old.working_directory, &old.restart)
            && self.bundle_dir == old.bundle_dir
            && self
                .bundle
                .iter()
                .map(|f| (&f.path, f.mode))
                .eq(old.bundle.iter().map(|f| (&f.path, f.mode)));
        if !same_frame {
            return Cost::Restart;
        }
        self.bundle
            .iter()
            .zip(&old.bundle)
            .filter(|(now, was)| now.content != was.content)
            .map(|(now, was)| now.cost(Some((was.source.as_str(), &was.settings))))
            .max()
            .unwrap_or(Cost::None)
    }
}
