//! The machine's accounts, read with its own `getent` and `id` (never glibc's NSS from this
//! static helper: see `owners`) and changed with `useradd`, `usermod`, `userdel`, `groupadd`
//! and `groupdel`, each run from an argv under the accounts deadline, never through a shell.

use std::process::Command;

use crate::child::{self, Bounded as _};

/// A user as `getent passwd` answers for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Passwd {
    pub(super) uid: u32,
    pub(super) gid: u32,
    pub(super) home: String,
    pub(super) shell: String,
}

/// `getent`'s exit status for a key its database does not have.
const NOT_FOUND: i32 = 2;

/// The line `getent DATABASE NAME` answers, or `None` when the machine has no such name.
fn getent(database: &str, name: &str) -> Result<Option<String>, String> {
    let out = Command::new("getent")
        .arg(database)
        .arg(name)
        .output_within(child::LOOKUP)
        .map_err(|e| format!("cannot run getent {database} {name}: {e}"))?;
    match out.status.code() {
        Some(0) => Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .map(str::to_string)),
        Some(NOT_FOUND) => Ok(None),
        _ => Err(format!(
            "getent {database} {name} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// The user `name`, if the machine has it.
pub(super) fn passwd(name: &str) -> Result<Option<Passwd>, String> {
    let Some(line) = getent("passwd", name)? else {
        return Ok(None);
    };
    // name:password:uid:gid:gecos:home:shell
    let fields: Vec<&str> = line.split(':').collect();
    let unreadable = || format!("getent passwd {name} gave an answer this helper cannot read");
    if fields.len() != 7 {
        return Err(unreadable());
    }
    Ok(Some(Passwd {
        uid: fields[2].parse().map_err(|_| unreadable())?,
        gid: fields[3].parse().map_err(|_| unreadable())?,
        home: fields[5].to_string(),
        shell: fields[6].to_string(),
    }))
}

/// The gid of the group `name`, if the machine has it.
pub(super) fn group(name: &str) -> Result<Option<u32>, String> {
    let Some(line) = getent("group", name)? else {
        return Ok(None);
    };
    line.split(':')
        .nth(2)
        .and_then(|gid| gid.parse().ok())
        .map(Some)
        .ok_or_else(|| format!("getent group {name} gave an answer this helper cannot read"))
}

/// The supplementary groups of the user `name`, sorted: `id -Gn` less its first (the primary).
pub(super) fn supplementary(name: &str) -> Result<Vec<String>, String> {
    let out = Command::new("id")
        .arg("-Gn")
        .arg("--")
        .arg(name)
        .output_within(child::LOOKUP)
        .map_err(|e| format!("cannot run id -Gn {name}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "id -Gn {name} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut groups: Vec<String> = text.split_whitespace().skip(1).map(String::from).collect();
    groups.sort();
    groups.dedup();
    Ok(groups)
}

/// Stops the systemd user manager of `uid`, if it runs: logind keeps one for some seconds after
/// its last session ends (`UserStopDelaySec=`), and `userdel` refuses a user any process runs
/// as. A session still open is not ended here: `userdel` then fails, saying so.
pub(super) fn stop_user_manager(uid: u32) {
    let _ = Command::new("systemctl")
        .arg("stop")
        .arg(format!("user@{uid}.service"))
        .output_within(child::SYSTEMCTL);
}

/// Runs one of the accounts commands (`useradd` …) with `args`, the account's name last after
/// `--`; its error output is the failure's reason.
pub(super) fn change(program: &str, args: &[String], name: &str) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .arg("--")
        .arg(name)
        .output_within(child::ACCOUNTS)
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        let mut argv = vec![program];
        argv.extend(args.iter().map(String::as_str));
        argv.extend(["--", name]);
        return Err(format!(
            "{} failed: {}",
            argv.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    crate::owners::forget(name);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn root_is_read_from_getent_and_a_missing_name_is_none() {
        let root = super::passwd("root").unwrap().unwrap();
        assert_eq!((root.uid, root.gid), (0, 0));
        assert_eq!(super::group("root").unwrap(), Some(0));
        assert_eq!(super::passwd("mesh-no-such-user-x").unwrap(), None);
        assert_eq!(super::group("mesh-no-such-group-x").unwrap(), None);
    }
}
