//! Owners by name, answered by the machine's own NSS through `getent`.
//!
//! The helper is linked statically, and glibc's `getpwnam` from a static binary would load the
//! NSS modules of the glibc it was built with. `getent` is the machine's own program, so LDAP,
//! sssd or plain `/etc/passwd` answer exactly as they do for everything else there.

use std::process::Command;

use crate::child::{self, Bounded as _};

/// The uid and gid a resource's owner and group name.
pub(crate) fn ids(owner: &str, group: &str) -> Result<(u32, u32), String> {
    Ok((id_of("passwd", owner)?, id_of("group", group)?))
}

/// The uid of a user a process runs as: a unit for a user the machine does not have would fail
/// at every start (217/USER), so it is refused before the unit is written.
pub(crate) fn user(name: &str) -> Result<u32, String> {
    id_of("passwd", name)
}

/// Resolves a user (`passwd`) or group (`group`) name, or a number, to its id.
fn id_of(database: &str, name: &str) -> Result<u32, String> {
    if let Ok(id) = name.parse::<u32>() {
        return Ok(id);
    }
    let out = Command::new("getent")
        .arg(database)
        .arg(name)
        .output_within(child::LOOKUP)
        .map_err(|e| format!("cannot run getent to look up {database} {name:?}: {e}"))?;
    if !out.status.success() {
        let what = if database == "passwd" {
            "user"
        } else {
            "group"
        };
        return Err(format!("no {what} {name:?} on this machine"));
    }
    // name:password:id:...
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .and_then(|line| line.split(':').nth(2))
        .and_then(|id| id.parse().ok())
        .ok_or_else(|| format!("getent {database} {name} gave an answer this helper cannot read"))
}

/// The name of a user (`passwd`) or group (`group`) id, for messages; the number when the
/// machine has no name for it.
pub(crate) fn name_of(database: &str, id: u32) -> String {
    Command::new("getent")
        .arg(database)
        .arg(id.to_string())
        .output_within(child::LOOKUP)
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| {
            String::from_utf8_lossy(&out.stdout)
                .split(':')
                .next()
                .map(str::to_string)
        })
        .filter(|name| !name.is_empty())
        .map_or_else(|| id.to_string(), |name| format!("{name} ({id})"))
}
