//! A unit as a push awaiting confirmation found it, and putting it back so.

use std::io;

use mesh_wire::Reverted;
use serde::{Deserialize, Serialize};

use crate::units;

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct KeptUnit {
    pub(super) unit: String,
    running: Option<bool>,
    enabled: Option<bool>,
    /// systemd knew it (a process the push creates did not exist): one that did not is stopped
    /// and disabled before its files go.
    #[serde(default = "known")]
    pub(super) exists: bool,
}

fn known() -> bool {
    true
}

impl KeptUnit {
    /// The unit as systemd has it now.
    pub(super) fn now(unit: &str) -> io::Result<KeptUnit> {
        let now = units::state(unit).map_err(io::Error::other)?;
        Ok(KeptUnit {
            unit: unit.to_string(),
            running: now.running,
            enabled: now.enabled,
            exists: now.exists,
        })
    }
}

/// Stops and disables a unit the push made (at boot, only disables it: it has not started).
pub(super) fn put_back_made_unit(unit: &KeptUnit, at_boot: bool, done: &mut Reverted) {
    let now = match units::state(&unit.unit) {
        Ok(now) => now,
        Err(e) => return done.failed.push(e),
    };
    let steps = [
        (!at_boot && now.running != Some(false), "stop", "stopped"),
        (now.enabled == Some(true), "disable", "disabled"),
    ];
    for (needed, verb, said) in steps {
        if !needed {
            continue;
        }
        match units::systemctl(verb, &unit.unit) {
            Ok(()) => done
                .restored
                .push(format!("{}: {said} (the push made it)", unit.unit)),
            Err(e) => done.failed.push(e),
        }
    }
}

pub(super) fn put_back_unit(unit: &KeptUnit, at_boot: bool, done: &mut Reverted) {
    let now = match units::state(&unit.unit) {
        Ok(now) => now,
        Err(e) => return done.failed.push(e),
    };
    let mut step = |verb: &str, said: &str| match units::systemctl(verb, &unit.unit) {
        Ok(()) => done
            .restored
            .push(format!("{}: {said} again, as it was", unit.unit)),
        Err(e) => done.failed.push(e),
    };
    match (unit.enabled, now.enabled) {
        (Some(true), Some(false)) => step("enable", "enabled"),
        (Some(false), Some(true)) => step("disable", "disabled"),
        _ => {}
    }
    if at_boot {
        return;
    }
    match (unit.running, now.running) {
        (Some(true), Some(false)) => step("start", "started"),
        (Some(false), Some(true)) => step("stop", "stopped"),
        _ => {}
    }
}
