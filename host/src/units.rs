//! systemd units: what state they are in, putting them in another, and paying what a change
//! costs them. Every call is `systemctl` with the unit as an argument after `--`, never a shell.

use std::process::Command;

use mesh_wire::Cost;

/// A unit as systemd reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnitState {
    /// systemd knows the unit (it has a unit file).
    pub(crate) exists: bool,
    /// `Some(true)` active, `Some(false)` inactive or failed, `None` in between or unknown.
    pub(crate) running: Option<bool>,
    /// `Some(true)` enabled, `Some(false)` disabled, `None` static, generated or unknown.
    pub(crate) enabled: Option<bool>,
    /// The unit is in the failed state (a start or restart did not succeed).
    pub(crate) failed: bool,
}

/// Asks systemd for the unit's state.
pub(crate) fn state(unit: &str) -> Result<UnitState, String> {
    let out = Command::new("systemctl")
        .args([
            "show",
            "--property=LoadState,ActiveState,UnitFileState",
            "--",
            unit,
        ])
        .output()
        .map_err(|e| format!("cannot run systemctl show {unit}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "systemctl show {unit} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
            .unwrap_or("")
            .to_string()
    };
    let active = value("ActiveState");
    Ok(UnitState {
        exists: value("LoadState") != "not-found",
        running: match active.as_str() {
            "active" | "reloading" => Some(true),
            "inactive" | "failed" => Some(false),
            _ => None,
        },
        enabled: match value("UnitFileState").as_str() {
            "enabled" | "enabled-runtime" => Some(true),
            "disabled" => Some(false),
            _ => None,
        },
        failed: active == "failed",
    })
}

/// Runs `systemctl VERB -- UNIT`.
pub(crate) fn systemctl(verb: &str, unit: &str) -> Result<(), String> {
    run(&[verb, "--", unit])
}

/// Makes systemd read unit files again.
pub(crate) fn daemon_reload() -> Result<(), String> {
    run(&["daemon-reload"])
}

fn run(args: &[&str]) -> Result<(), String> {
    let shown = args
        .iter()
        .filter(|a| **a != "--")
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("systemctl")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run systemctl {shown}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "systemctl {shown} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Reloads or restarts a unit that is running. A unit that is not running reads its files when
/// it next starts, so nothing is owed, unless `owed_before` says an earlier restart of it failed:
/// then it is down because of the mesh, and the restart is tried again.
pub(crate) fn pay(unit: &str, cost: Cost, owed_before: bool) -> Result<&'static str, String> {
    if cost == Cost::None {
        return Ok("nothing to do");
    }
    let now = state(unit)?;
    let retry = owed_before && now.failed;
    if now.running != Some(true) && !retry {
        return Ok("not running: it reads the change when it starts");
    }
    if cost == Cost::Reload && !retry {
        systemctl("reload", unit).map(|()| "reloaded")
    } else {
        // A restart the mesh owes is deliberate, not a crash loop: systemd's start-rate limit
        // (docker.service allows 3 starts a minute) must not refuse a few pushes in a row.
        let _ = systemctl("reset-failed", unit);
        systemctl("restart", unit).map(|()| "restarted")
    }
}
