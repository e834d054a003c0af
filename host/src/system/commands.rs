//! The real machine's Docker, accounts and transient units: each a command from an argv, run
//! under its deadline (`child`), never through a shell.

use std::process::Command;

use serde_json::Value;

use super::{Call, SystemError};
use crate::child::{self, Bounded as _};

/// The schedule checked by the machine's systemd, which is what will read it.
pub(super) fn check_schedule(schedule: &str) -> Result<(), SystemError> {
    let out = match Command::new("systemd-analyze")
        .args(["calendar", "--", schedule])
        .output_within(child::SYSTEMCTL)
    {
        Ok(out) => out,
        // no systemd-analyze: systemd says so when the timer is started
        Err(_) => return Ok(()),
    };
    if out.status.success() {
        Ok(())
    } else {
        Err(SystemError::Schedule {
            schedule: schedule.to_string(),
            said: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

pub(super) fn docker<S: AsRef<str>>(args: &[S]) -> Result<(), SystemError> {
    let call = Call::docker(args);
    let out = Command::new("docker")
        .args(args.iter().map(AsRef::as_ref))
        .output_within(child::DOCKER);
    SystemError::check(call.clone(), &SystemError::ran(&call, out)?)
}

/// `getent`'s exit status for a key its database does not have.
const NOT_FOUND: i32 = 2;

/// The line `getent DATABASE NAME` answers, or `None` when the machine has no such name.
pub(super) fn getent(database: &str, name: &str) -> Result<Option<String>, SystemError> {
    let call = Call::Getent {
        database: database.to_string(),
        key: name.to_string(),
    };
    let out = Command::new("getent")
        .arg(database)
        .arg(name)
        .output_within(child::LOOKUP);
    let out = SystemError::ran(&call, out)?;
    match out.status.code() {
        Some(0) => Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .map(str::to_string)),
        Some(NOT_FOUND) => Ok(None),
        _ => Err(SystemError::exited(call, &out)),
    }
}

/// The supplementary groups of the user `name`, sorted: `id -Gn` less its first (the primary).
pub(super) fn supplementary(name: &str) -> Result<Vec<String>, SystemError> {
    let call = Call::Groups {
        user: name.to_string(),
    };
    let out = Command::new("id")
        .arg("-Gn")
        .arg("--")
        .arg(name)
        .output_within(child::LOOKUP);
    let out = SystemError::ran(&call, out)?;
    SystemError::check(call, &out)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut groups: Vec<String> = text.split_whitespace().skip(1).map(String::from).collect();
    groups.sort();
    groups.dedup();
    Ok(groups)
}

/// Runs one of the accounts commands (`useradd` …) with `args`, the account's name last after
/// `--`; its error output is the failure's reason.
pub(super) fn change_account(
    program: &str,
    args: &[String],
    name: &str,
) -> Result<(), SystemError> {
    let call = Call::Account {
        program: program.to_string(),
        args: args.to_vec(),
        name: name.to_string(),
    };
    let out = Command::new(program)
        .args(args)
        .arg("--")
        .arg(name)
        .output_within(child::ACCOUNTS);
    SystemError::check(call.clone(), &SystemError::ran(&call, out)?)
}

/// What `docker container inspect` says of `name`; `None` when Docker has no such container.
pub(super) fn inspect(name: &str) -> Result<Option<Value>, SystemError> {
    let call = Call::Docker {
        verb: "container inspect".into(),
        container: name.to_string(),
    };
    let out = Command::new("docker")
        .args(["container", "inspect", "--", name])
        .output_within(child::LOOKUP);
    let out = SystemError::ran(&call, out)?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        if said.contains("No such container") || said.contains("no such container") {
            return Ok(None);
        }
        return Err(SystemError::exited(call, &out));
    }
    let all: Value = serde_json::from_slice(&out.stdout).map_err(|e| SystemError::Unreadable {
        call,
        why: format!("not JSON: {e}"),
    })?;
    Ok(Some(all.get(0).cloned().unwrap_or(Value::Null)))
}

/// Containers carrying `label`, asked only when a `docker` command is installed: a machine
/// without it has none.
pub(super) fn labelled(label: &str) -> Vec<String> {
    if !docker_installed() {
        return Vec::new();
    }
    let filter = format!("label={label}");
    let out = Command::new("docker")
        .args(["ps", "--all", "--filter", &filter, "--format", "{{.Names}}"])
        .output_within(child::LOOKUP);
    match out {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        // a daemon that does not answer has no containers to show
        _ => Vec::new(),
    }
}

/// Whether a `docker` command is on the PATH (or the usual directories).
fn docker_installed() -> bool {
    let path = std::env::var_os("PATH")
        .unwrap_or_else(|| "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into());
    std::env::split_paths(&path).any(|dir| dir.join("docker").is_file())
}

/// `systemd-run SETTINGS -- ARGV`: a transient unit, detached from this session.
pub(super) fn run_detached(settings: &[String], argv: &[String]) -> Result<(), SystemError> {
    let call = Call::SystemdRun {
        unit: settings
            .iter()
            .find_map(|s| s.strip_prefix("--unit="))
            .map(str::to_string),
    };
    let out = Command::new("systemd-run")
        .args(settings)
        .arg("--")
        .args(argv)
        .output();
    SystemError::check(call.clone(), &SystemError::ran(&call, out)?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_schedule_systemd_cannot_read_is_refused_naming_it() {
        if std::process::Command::new("systemd-analyze")
            .arg("--version")
            .output()
            .is_err()
        {
            return;
        }
        assert!(super::check_schedule("*-*-* 03:00:00").is_ok());
        let said = super::check_schedule("every tuesday-ish")
            .unwrap_err()
            .to_string();
        assert!(
            said.contains("\"every tuesday-ish\" is not in systemd's calendar syntax"),
            "{said}"
        );
    }
}
