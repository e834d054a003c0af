//! The record's entries for what runs and what is installed: a service put in a state, a
//! process the mesh made, a container, a package.

use std::collections::BTreeMap;

use mesh_wire::Undo;
use serde::{Deserialize, Serialize};

use super::Written;

/// A unit the mesh has put in a state: what it first found, recorded once and never overwritten,
/// and what the mesh itself did, so undeclaring undoes exactly that.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ServiceEntry {
    pub(crate) unit: String,
    /// Running when first found; `None`: its state could not be told.
    pub(crate) found_running: Option<bool>,
    /// Enabled when first found; `None`: neither (static, generated) or unknown.
    pub(crate) found_enabled: Option<bool>,
    /// The mesh started it (it was not running).
    #[serde(default)]
    pub(crate) started: bool,
    /// The mesh stopped it (it was running).
    #[serde(default)]
    pub(crate) stopped: bool,
    /// The mesh enabled it (it was disabled).
    #[serde(default)]
    pub(crate) enabled: bool,
    /// The mesh disabled it (it was enabled).
    #[serde(default)]
    pub(crate) disabled: bool,
    /// What stopping it runs (its `ExecStop=` and `ExecStopPost=`), as systemd said at the last
    /// run that declared it: the plan shows it beside a stop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) stop_runs: Vec<String>,
    /// The module, as last declared, says to leave it running when it is undeclared.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) leave_running: bool,
}

impl ServiceEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut Undo) {
        if self.started && self.leave_running {
            undo.leaves_running.push(self.unit.clone());
        } else if self.started {
            undo.stops.push(self.unit.clone());
            if !self.stop_runs.is_empty() {
                undo.stop_runs
                    .insert(self.unit.clone(), self.stop_runs.clone());
            }
        }
    }
}

/// A unit the mesh created: its unit file and its bundle.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ProcessEntry {
    pub(crate) unit: String,
    pub(crate) unit_file: String,
    pub(crate) bundle_dir: String,
    /// Its environment file (root's only), when it has an environment; records written before
    /// environment files have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) env_file: Option<String>,
    /// sha256 of the unit file, environment and bundle last written: a change restarts the unit.
    pub(crate) digest: Option<String>,
    /// What it was last made from, for the cost of the next change; `None` (an older record, an
    /// adopted process): the next change restarts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) made_from: Option<ProcessMade>,
}

impl ProcessEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut Undo) {
        undo.stops.push(self.unit.clone());
        undo.deletes.push(self.unit_file.clone());
        undo.deletes.push(self.bundle_dir.clone());
        undo.deletes.extend(self.env_file.iter().cloned());
    }
}

/// What a process was last made from: a change of its frame (unit file, environment, the
/// bundle's names and modes) restarts it; a bundle file that moved costs what moved in it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ProcessMade {
    /// sha256 of the unit file, the environment and the bundle's names and modes.
    pub(crate) frame: String,
    /// Each bundle file by its path in the bundle.
    pub(crate) bundle: BTreeMap<String, Written>,
}

/// A container the mesh runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ContainerEntry {
    pub(crate) name: String,
    /// The spec it runs, once it does (to name what changed, and the host directories kept).
    pub(crate) spec: Option<mesh_wire::ContainerSpec>,
}

impl ContainerEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut Undo) {
        undo.stops.push(format!("container {}", self.name));
    }
}

/// A package the mesh asked for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PackageEntry {
    pub(crate) name: String,
    /// The mesh installed it (it was not there before).
    pub(crate) installed: bool,
    /// The version installed when the mesh first saw it; `None`: it was not installed.
    #[serde(default)]
    pub(crate) found: Option<String>,
    /// The mesh removed it or moved its version: undeclaring it installs `found` again.
    #[serde(default)]
    pub(crate) changed: bool,
}

impl PackageEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut Undo) {
        if let (true, Some(found)) = (self.changed, &self.found) {
            undo.restores.push(format!("package {}={found}", self.name));
        }
    }
}
