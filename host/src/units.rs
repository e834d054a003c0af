//! systemd units: paying what a change costs them.

use std::process::Command;

use mesh_wire::Cost;

/// Whether the unit is running now.
pub(crate) fn is_active(unit: &str) -> bool {
    Command::new("systemctl")
        .args(["is-active", "--quiet", "--", unit])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Reloads or restarts a running unit. A unit that is not running is left alone: it reads its
/// files when it next starts, so nothing is owed.
pub(crate) fn pay(unit: &str, cost: Cost) -> Result<&'static str, String> {
    if cost == Cost::None {
        return Ok("nothing to do");
    }
    if !is_active(unit) {
        return Ok("not running: it reads the change when it starts");
    }
    let verb = match cost {
        Cost::Reload => "reload",
        _ => "restart",
    };
    let out = Command::new("systemctl")
        .args([verb, "--", unit])
        .output()
        .map_err(|e| format!("cannot run systemctl {verb} {unit}: {e}"))?;
    if out.status.success() {
        Ok(if verb == "reload" {
            "reloaded"
        } else {
            "restarted"
        })
    } else {
        Err(format!(
            "systemctl {verb} {unit} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
