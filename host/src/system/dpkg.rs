//! The real machine's packages: dpkg's database read once per run (what `dpkg-query` reads, so
//! a no-op push runs no command for its packages), and `apt-get` to change them.

use std::process::Command;
use std::sync::Mutex;

use super::{Call, SystemError};
use crate::child::{self, Bounded as _};

/// dpkg's database of what is installed, as `dpkg-query` reads it.
const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// The database as read in this run; emptied by an install, which changes it.
static STATUS: Mutex<Option<String>> = Mutex::new(None);

/// The version dpkg says is installed, `None` if it is not: from its database, else (a machine
/// whose database is not where Debian keeps it) by asking `dpkg-query`.
pub(super) fn installed(name: &str) -> Result<Option<String>, SystemError> {
    let mut status = STATUS.lock().unwrap_or_else(|p| p.into_inner());
    if status.is_none() {
        *status = std::fs::read_to_string(DPKG_STATUS).ok();
    }
    match status.as_deref() {
        Some(db) => Ok(installed_in(db, name)),
        None => ask_dpkg(name),
    }
}

/// The version `db` (dpkg's status file: one paragraph per package and architecture) has of
/// `name` installed, as `dpkg-query -W -f='${Status}'` ending in ` installed` says.
fn installed_in(db: &str, name: &str) -> Option<String> {
    db.split("\n\n").find_map(|paragraph| {
        let field = |key: &str| {
            paragraph
                .lines()
                .find_map(|l| l.strip_prefix(key).map(str::trim))
        };
        (field("Package:") == Some(name)
            && field("Status:").is_some_and(|s| s.ends_with(" installed")))
        .then(|| field("Version:").unwrap_or_default().to_string())
    })
}

/// A machine without dpkg has no package manager mesh knows, and is refused rather than
/// guessed at.
fn ask_dpkg(name: &str) -> Result<Option<String>, SystemError> {
    let call = Call::Dpkg {
        package: name.to_string(),
    };
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}\t${Version}", "--", name])
        .output_within(child::LOOKUP);
    let out = SystemError::ran(&call, out)?;
    let said = String::from_utf8_lossy(&out.stdout);
    Ok(match said.split_once('\t') {
        Some((status, version)) if out.status.success() && status.ends_with(" installed") => {
            Some(version.trim().to_string())
        }
        _ => None,
    })
}

/// What `apt-get -s remove PACKAGE` says it would remove (its `Remv NAME [VERSION]` lines), by
/// name; nothing is changed.
pub(super) fn removal_takes(package: &str) -> Result<Vec<String>, SystemError> {
    let call = Call::AptGet {
        verb: "-s remove".into(),
        arg: package.to_string(),
    };
    let out = Command::new("apt-get")
        .args(["-s", "-q", "remove", "--", package])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .env("LC_ALL", "C")
        .output_within(child::LOOKUP);
    let out = SystemError::ran(&call, out)?;
    SystemError::check(call, &out)?;
    Ok(removed_in(&String::from_utf8_lossy(&out.stdout)))
}

fn removed_in(simulation: &str) -> Vec<String> {
    simulation
        .lines()
        .filter_map(|l| l.strip_prefix("Remv "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(|name| name.split(':').next().unwrap_or(name).to_string())
        .collect()
}

/// `apt-get install` (up or down to a version: `--allow-downgrades`) or `apt-get remove` of
/// one checked argument, data argv, never through a shell.
pub(super) fn apt(verb: &str, arg: &str) -> Result<(), SystemError> {
    *STATUS.lock().unwrap_or_else(|p| p.into_inner()) = None;
    let call = Call::AptGet {
        verb: verb.to_string(),
        arg: arg.to_string(),
    };
    let out = Command::new("apt-get")
        .args([
            verb,
            "-y",
            "-q",
            "--no-install-recommends",
            "--allow-downgrades",
            "-o",
            "Dpkg::Options::=--force-confold",
            "--",
            arg,
        ])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output_within(child::PACKAGES);
    SystemError::check(call.clone(), &SystemError::ran(&call, out)?)
}

/// `apt-get update` run: whether it exited 0, and its lines that warn or err (`W:`, `E:`),
/// where apt names each repository it refused by its uri.
pub(super) fn apt_get_update() -> Result<(bool, Vec<String>), SystemError> {
    let call = Call::AptGet {
        verb: "update".into(),
        arg: String::new(),
    };
    let out = Command::new("apt-get")
        .args(["update", "-q"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .env("LC_ALL", "C")
        .output_within(child::APT_UPDATE);
    let out = SystemError::ran(&call, out)?;
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let said = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("W:") || l.starts_with("E:"))
        .map(String::from)
        .collect();
    Ok((out.status.success(), said))
}

#[cfg(test)]
mod tests {
    use super::{DPKG_STATUS, ask_dpkg, installed_in, removed_in};

    #[test]
    fn a_simulated_removal_names_every_package_it_takes() {
        let said = "Reading package lists...\nThe following packages will be REMOVED:\n  \
            redis-server redis-tools\n0 upgraded, 0 newly installed, 2 to remove.\n\
            Remv redis-server [5:7.0.15-1~deb12u1]\nRemv redis-tools:amd64 [5:7.0.15-1~deb12u1]\n";
        assert_eq!(removed_in(said), ["redis-server", "redis-tools"]);
        assert!(removed_in("Package 'x' is not installed, so not removed\n").is_empty());
    }

    const DB: &str = "Package: redis-tools\nStatus: install ok installed\nPriority: optional\n\n\
        Package: nginx\nStatus: deinstall ok config-files\nVersion: 1.22\n\n\
        Package: curl\nStatus: install ok installed\nVersion: 7.88.1-10+deb12u5\n\n\
        Package: libc6\nStatus: hold ok installed\nArchitecture: amd64\n\n\
        Package: redis\nStatus: install ok half-installed\n";

    #[test]
    fn installed_is_what_dpkg_query_calls_installed() {
        assert!(installed_in(DB, "redis-tools").is_some());
        assert!(installed_in(DB, "libc6").is_some(), "held is installed");
        assert_eq!(
            installed_in(DB, "curl").as_deref(),
            Some("7.88.1-10+deb12u5"),
            "its version"
        );
        assert_eq!(
            installed_in(DB, "nginx"),
            None,
            "removed, its configuration kept"
        );
        assert_eq!(
            installed_in(DB, "redis"),
            None,
            "half-installed is not installed"
        );
        assert_eq!(installed_in(DB, "redis-server"), None, "absent");
        assert_eq!(
            installed_in(DB, "redis-tool"),
            None,
            "a name is matched whole"
        );
    }

    /// On this machine's own database, the answer is dpkg-query's for every package it lists
    /// (and a few it does not).
    #[test]
    fn the_database_agrees_with_dpkg_query_here() {
        let Ok(db) = std::fs::read_to_string(DPKG_STATUS) else {
            return;
        };
        let names: Vec<&str> = db
            .lines()
            .filter_map(|l| l.strip_prefix("Package: "))
            .take(40)
            .chain(["no-such-package-here", "libc"])
            .collect();
        for name in names {
            assert_eq!(Ok(installed_in(&db, name)), ask_dpkg(name), "{name}");
        }
    }
}
