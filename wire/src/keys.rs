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
}
