//! Keys merged into a shared JSON file, and the units a change to them costs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::*;

/// Keys merged into a shared JSON file. Keys the mesh does not own are left as they are; the
/// helper remembers what each owned key replaced (or that it was absent) to give it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeysSpec {
    /// Absolute path of the JSON file.
    pub path: String,
    /// Owner, group and mode used only when the mesh creates the file.
    pub owner: String,
    pub group: String,
    pub mode: u32,
    /// Every owned key: its path of object keys from the top, and its value.
    pub keys: Vec<Key>,
    #[serde(flatten)]
    pub costing: Costing,
}

/// One owned key of a JSON file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// Object keys from the top of the document, e.g. `["log-opts", "max-size"]`.
    pub path: Vec<String>,
    /// The value the mesh puts there.
    pub value: Value,
}

impl Key {
    /// The path as operators read it: `log-opts.max-size`.
    pub fn dotted(&self) -> String {
        self.path.join(".")
    }
}

/// An existing systemd unit and the state the mesh wants it in. What is not said is left alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceSpec {
    /// The unit, e.g. `docker.service`.
    pub unit: String,
    /// `Some(true)` running, `Some(false)` stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<bool>,
    /// Enabled at boot or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// What undeclaring it does to a unit the mesh started.
    #[serde(default, skip_serializing_if = "OnRemoval::is_give_back")]
    pub on_removal: OnRemoval,
    /// What says it serves, probed after every start, restart or reload the helper made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<Ready>,
}

/// A service's wanted state in words: `running`/`stopped`, then `enabled`/`disabled`; what is not
/// said is left as it is.
pub fn wanted_state(running: Option<bool>, enabled: Option<bool>) -> Vec<&'static str> {
    let mut out = Vec::new();
    if let Some(r) = running {
        out.push(if r { "running" } else { "stopped" });
    }
    if let Some(e) = enabled {
        out.push(if e { "enabled" } else { "disabled" });
    }
    out
}

/// What undeclaring a service does to a unit the mesh moved (module.json's `"on-removal"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnRemoval {
    /// Put back as the mesh found it: stopped again if the mesh started it, disabled again if
    /// the mesh enabled it. A unit's stop runs its `ExecStop=`, which may undo more than the
    /// mesh did (Debian's nftables flushes every rule), so the plan shows what it runs.
    #[default]
    GiveBack,
    /// Left as it is, running (and enabled) as the mesh left it: for a unit others come to
    /// depend on (a firewall whose stop would flush rules other software made).
    LeaveRunning,
}

impl OnRemoval {
    /// Every value, as module.json spells it.
    pub const NAMES: &'static str = "give-back, leave-running";

    /// The value module.json names, if it is one.
    pub fn parse(name: &str) -> Option<OnRemoval> {
        match name {
            "give-back" => Some(OnRemoval::GiveBack),
            "leave-running" => Some(OnRemoval::LeaveRunning),
            _ => None,
        }
    }

    /// As module.json spells it.
    pub fn name(self) -> &'static str {
        match self {
            OnRemoval::GiveBack => "give-back",
            OnRemoval::LeaveRunning => "leave-running",
        }
    }

    /// The default: serialized as nothing, so a declaration without it reads as before.
    pub fn is_give_back(&self) -> bool {
        *self == OnRemoval::GiveBack
    }
}
