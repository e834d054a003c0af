//! A package from the machine's package manager: installed if missing, left installed when
//! undeclared (other software may have come to need it).
//!
//! Whether a package is installed is read from dpkg's own database (`/var/lib/dpkg/status`,
//! what `dpkg-query` reads) once per run: a no-op push runs no command for its packages.

use std::process::Command;
use std::sync::Mutex;

use mesh_wire::{Outcome, PackageSpec, Resource, State};

use super::{Run, outcome};
use crate::child::{self, Bounded as _};
use crate::record::{Entry, PackageEntry, Record};

impl Run<'_> {
    pub(super) fn try_package(
        &mut self,
        resource: &Resource,
        spec: &PackageSpec,
        record: &mut Record,
    ) -> Result<Outcome, String> {
        if !mesh_wire::valid_package(&spec.name) {
            return Err("not a Debian package name".into());
        }
        let there = installed(&spec.name)?;
        let known = matches!(record.resources.get(&resource.id), Some(Entry::Package(_)));
        if there {
            if !known {
                record.resources.insert(
                    resource.id.clone(),
                    Entry::Package(PackageEntry {
                        name: spec.name.clone(),
                        installed: false,
                    }),
                );
            }
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{} is installed", spec.name),
            ));
        }
        record.resources.insert(
            resource.id.clone(),
            Entry::Package(PackageEntry {
                name: spec.name.clone(),
                installed: true,
            }),
        );
        if self.applying() {
            record
                .save(self.paths)
                .map_err(|e| format!("cannot save the record: {e}"))?;
            install(&spec.name)?;
        }
        Ok(outcome(
            &resource.id,
            State::Created,
            format!("{} {}", self.said("installed", "install"), spec.name),
        ))
    }
}

/// dpkg's database of what is installed, as `dpkg-query` reads it.
const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// The database as read in this run; emptied by an install, which changes it.
static STATUS: Mutex<Option<String>> = Mutex::new(None);

/// Whether dpkg says the package is installed: from its database, else (a machine whose
/// database is not where Debian keeps it) by asking `dpkg-query`.
fn installed(name: &str) -> Result<bool, String> {
    let mut status = STATUS.lock().unwrap_or_else(|p| p.into_inner());
    if status.is_none() {
        *status = std::fs::read_to_string(DPKG_STATUS).ok();
    }
    match status.as_deref() {
        Some(db) => Ok(installed_in(db, name)),
        None => ask_dpkg(name),
    }
}

/// Whether `db` (dpkg's status file: one paragraph per package and architecture) has `name`
/// installed, as `dpkg-query -W -f='${Status}'` ending in ` installed` says.
fn installed_in(db: &str, name: &str) -> bool {
    db.split("\n\n").any(|paragraph| {
        let field = |key: &str| {
            paragraph
                .lines()
                .find_map(|l| l.strip_prefix(key).map(str::trim))
        };
        field("Package:") == Some(name)
            && field("Status:").is_some_and(|s| s.ends_with(" installed"))
    })
}

/// A machine without dpkg has no package manager mesh knows, and is refused rather than
/// guessed at.
fn ask_dpkg(name: &str) -> Result<bool, String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", "--", name])
        .output_within(child::LOOKUP)
        .map_err(|e| {
            format!(
                "this machine has no package manager mesh knows (apt-get and dpkg on Debian): {e}"
            )
        })?;
    Ok(out.status.success() && String::from_utf8_lossy(&out.stdout).ends_with(" installed"))
}

fn install(name: &str) -> Result<(), String> {
    *STATUS.lock().unwrap_or_else(|p| p.into_inner()) = None;
    let out = Command::new("apt-get")
        .args([
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
            "-o",
            "Dpkg::Options::=--force-confold",
            "--",
            name,
        ])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output_within(child::PACKAGES)
        .map_err(|e| format!("cannot run apt-get install {name}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
    Err(format!(
        "apt-get install failed: {}",
        last[last.len().saturating_sub(3)..].join(" / ")
    ))
}

#[cfg(test)]
mod tests {
    use super::{DPKG_STATUS, ask_dpkg, installed_in};

    const DB: &str = "Package: redis-tools\nStatus: install ok installed\nPriority: optional\n\n\
        Package: nginx\nStatus: deinstall ok config-files\nVersion: 1.22\n\n\
        Package: libc6\nStatus: hold ok installed\nArchitecture: amd64\n\n\
        Package: redis\nStatus: install ok half-installed\n";

    #[test]
    fn installed_is_what_dpkg_query_calls_installed() {
        assert!(installed_in(DB, "redis-tools"));
        assert!(installed_in(DB, "libc6"), "held is installed");
        assert!(
            !installed_in(DB, "nginx"),
            "removed, its configuration kept"
        );
        assert!(
            !installed_in(DB, "redis"),
            "half-installed is not installed"
        );
        assert!(!installed_in(DB, "redis-server"), "absent");
        assert!(!installed_in(DB, "redis-tool"), "a name is matched whole");
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
