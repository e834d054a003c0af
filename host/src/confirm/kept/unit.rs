//! A unit as a push awaiting confirmation found it, and putting it back so.

use crate::system::System;
use std::io;

use mesh_wire::Reverted;
use serde::{Deserialize, Serialize};

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
    pub(super) fn now(system: &dyn System, unit: &str) -> io::Result<KeptUnit> {
        let now = system.unit_state(unit).map_err(io::Error::other)?;
        Ok(KeptUnit {
            unit: unit.to_string(),
            running: now.running,
            enabled: now.enabled,
            exists: now.exists,
        })
    }
}

/// Stops and disables a unit the push made (at boot, only disables it: it has not started).
pub(super) fn put_back_made_unit(
    system: &dyn System,
    unit: &KeptUnit,
    at_boot: bool,
    done: &mut Reverted,
) {
    let now = match system.unit_state(&unit.unit) {
        Ok(now) => now,
        Err(e) => return done.failed.push(e.to_string()),
    };
    let steps = [
        (!at_boot && now.running != Some(false), "stop", "stopped"),
        (now.enabled == Some(true), "disable", "disabled"),
    ];
    for (needed, verb, said) in steps {
        if !needed {
            continue;
        }
        match system.systemctl(verb, &unit.unit) {
            Ok(()) => done
                .restored
                .push(format!("{}: {said} (the push made it)", unit.unit)),
            Err(e) => done.failed.push(e.to_string()),
        }
    }
}

/// Puts back whether a unit the push declared is enabled, and stops it if it did not run (one
/// that ran is started by [`run_again`]).
pub(super) fn put_back_unit(
    system: &dyn System,
    unit: &KeptUnit,
    at_boot: bool,
    done: &mut Reverted,
) {
    let now = match system.unit_state(&unit.unit) {
        Ok(now) => now,
        Err(e) => return done.failed.push(e.to_string()),
    };
    let mut step = |verb: &str, said: &str| match system.systemctl(verb, &unit.unit) {
        Ok(()) => done
            .restored
            .push(format!("{}: {said} again, as it was", unit.unit)),
        Err(e) => done.failed.push(e.to_string()),
    };
    match (unit.enabled, now.enabled) {
        (Some(true), Some(false)) => step("enable", "enabled"),
        (Some(false), Some(true)) => step("disable", "disabled"),
        _ => {}
    }
    if !at_boot && unit.running == Some(false) && now.running == Some(true) {
        step("stop", "stopped");
    }
}

/// Starts a unit that ran before the push and does not now (stopped, failed, or in systemd's
/// restart loop: the change made it exit), and says so; `true` when it was not running.
pub(super) fn run_again(system: &dyn System, unit: &KeptUnit, done: &mut Reverted) -> bool {
    if unit.running != Some(true) {
        return false;
    }
    let now = match system.unit_state(&unit.unit) {
        Ok(now) if now.running == Some(true) => return false,
        Ok(now) => now,
        Err(e) => {
            done.failed.push(e.to_string());
            return false;
        }
    };
    let was = if now.failed { "failed" } else { "not running" };
    // a start-rate limit the crash hit must not refuse the start that mends it
    let _ = system.systemctl("reset-failed", &unit.unit);
    match system
        .systemctl("restart", &unit.unit)
        .and_then(|()| system.settled(&unit.unit))
    {
        Ok(()) => done.restored.push(format!(
            "{}: started again (it ran before the push, and was {was} once its files were put \
             back)",
            unit.unit
        )),
        Err(e) => done.failed.push(format!(
            "{}: it ran before the push and does not start again: {e}",
            unit.unit
        )),
    }
    true
}
