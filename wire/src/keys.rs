//! Keys merged into a shared JSON file, and the units a change to them costs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::path::{ModeOf, Place};
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

impl SpecKind for KeysSpec {
    const KIND: &'static str = "keys";

    fn at(&self) -> &str {
        &self.path
    }

    fn paths(&self) -> Vec<(String, &str, Place)> {
        vec![("path".into(), self.path.as_str(), Place::Machine)]
    }

    fn modes(&self) -> Vec<(String, u32, ModeOf)> {
        vec![("mode".into(), self.mode, ModeOf::File)]
    }

    fn claims(&self) -> Vec<(String, &'static str)> {
        vec![(self.path.clone(), "keys")]
    }

    fn made(&self) -> Option<(&str, &'static str)> {
        Some((&self.path, "keys file"))
    }

    fn costing(&self) -> Option<&Costing> {
        Some(&self.costing)
    }

    /// Each key whose value moved, and each given back, by its dotted path.
    fn fields_differing(&self, old: &Self) -> Vec<String> {
        let before: BTreeMap<String, &Value> =
            old.keys.iter().map(|k| (k.dotted(), &k.value)).collect();
        let after: BTreeMap<String, &Value> =
            self.keys.iter().map(|k| (k.dotted(), &k.value)).collect();
        let mut out = Vec::new();
        for (k, v) in &after {
            if before.get(k) != Some(v) {
                out.push(k.clone());
            }
        }
        for k in before.keys() {
            if !after.contains_key(k) {
                out.push(format!("{k} (given back)"));
            }
        }
        out
    }

    // the keys it owns, `key = value`, one a line
    fn plan_text(&self) -> String {
        self.keys
            .iter()
            .map(|key| format!("{} = {}\n", key.dotted(), key.value))
            .collect()
    }

    fn removal(&self) -> String {
        format!(
            "{}: its keys given back (previous values restored, absent ones removed)",
            self.path
        )
    }
}
