//! An existing systemd unit the mesh puts in a state, and what undeclaring it does to it.

use serde::{Deserialize, Serialize};

use crate::*;

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

impl SpecKind for ServiceSpec {
    const KIND: &'static str = "service";

    fn at(&self) -> &str {
        &self.unit
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        named(&[
            ("state", old.running != self.running),
            ("enabled", old.enabled != self.enabled),
        ])
    }

    // its wanted state, one word a line
    fn plan_text(&self) -> String {
        let mut out: String = wanted_state(self.running, self.enabled)
            .iter()
            .map(|w| format!("{w}\n"))
            .collect();
        if !self.on_removal.is_give_back() {
            out.push_str(&format!("on removal: {}\n", self.on_removal.name()));
        }
        out
    }

    fn removal(&self) -> String {
        format!(
            "{}: returned to the state the mesh found it in (stopped if the mesh started it)",
            self.unit
        )
    }
}
