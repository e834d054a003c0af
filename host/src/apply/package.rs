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
        spec.check().map_err(|r| r.to_string())?;
        let there = installed(&spec.name)?;
        let mut entry = match record.resources.get(&resource.id) {
            Some(Entry::Package(p)) => p.clone(),
            // first seen: what was there is what undeclaring gives back
            _ => PackageEntry {
                name: spec.name.clone(),
                installed: false,
                found: there.clone(),
                changed: false,
            },
        };
        let (state, done) = match (&there, spec.absent, &spec.version) {
            (None, true, _) => (State::Unchanged, format!("{} is absent", spec.name)),
            (Some(v), false, Some(want)) if v == want => {
                (State::Unchanged, format!("{} {v} is installed", spec.name))
            }
            (Some(v), false, None) => (State::Unchanged, format!("{} {v} is installed", spec.name)),
            (Some(v), true, _) => {
                entry.changed = true;
                (
                    State::Changed,
                    format!("{} {} {v}", self.said("removed", "remove"), spec.name),
                )
            }
            (Some(v), false, Some(want)) => {
                entry.changed = true;
                (
                    State::Changed,
                    format!("{} {} {v} -> {want}", self.said("moved", "move"), spec.name),
                )
            }
            (None, false, want) => {
                entry.installed = entry.found.is_none();
                entry.changed = entry.found.is_some();
                let at = want.as_ref().map(|w| format!(" {w}")).unwrap_or_default();
                (
                    State::Created,
                    format!("{} {}{at}", self.said("installed", "install"), spec.name),
                )
            }
        };
        record
            .resources
            .insert(resource.id.clone(), Entry::Package(entry));
        if state != State::Unchanged && self.applying() {
            // recorded before the change: an interrupted push still gives back what it found
            record
                .save(self.paths)
                .map_err(|e| format!("cannot save the record: {e}"))?;
            if spec.absent {
                apt("remove", &spec.name)?;
            } else {
                apt("install", &wanted(&spec.name, spec.version.as_deref()))?;
            }
        }
        Ok(outcome(&resource.id, state, done))
    }

    /// Undeclared: one the mesh removed or moved goes back to the version found (if the
    /// archive still has it); one the mesh installed, or left as found, stays as it is.
    pub(super) fn give_back_package(&mut self, p: &PackageEntry) -> Result<String, String> {
        let found = match (&p.found, p.changed) {
            (Some(found), true) => found,
            _ if p.installed => {
                return Ok(format!(
                    "left {} installed: a package the mesh installed is not removed (other \
                     software may need it)",
                    p.name
                ));
            }
            _ => return Ok(format!("left {} as found", p.name)),
        };
        if !mesh_wire::valid_package(&p.name) || !mesh_wire::valid_package_version(found) {
            return Err(format!("the record's package {} is not a package", p.name));
        }
        if installed(&p.name)?.as_deref() == Some(found.as_str()) {
            return Ok(format!("{} {found} is installed, as found", p.name));
        }
        if self.applying() {
            apt("install", &wanted(&p.name, Some(found))).map_err(|e| {
                format!(
                    "cannot give {} {found} back (the archive may no longer have it): {e}",
                    p.name
                )
            })?;
        }
        Ok(format!(
            "{} {} {found}, as found",
            self.said("put back", "put back"),
            p.name
        ))
    }
}

/// apt's `name=version`, or the name alone.
fn wanted(name: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("{name}={v}"),
        None => name.to_string(),
    }
}

/// dpkg's database of what is installed, as `dpkg-query` reads it.
const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// The database as read in this run; emptied by an install, which changes it.
static STATUS: Mutex<Option<String>> = Mutex::new(None);

/// The version dpkg says is installed, `None` if it is not: from its database, else (a machine
/// whose database is not where Debian keeps it) by asking `dpkg-query`.
fn installed(name: &str) -> Result<Option<String>, String> {
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
fn ask_dpkg(name: &str) -> Result<Option<String>, String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}\t${Version}", "--", name])
        .output_within(child::LOOKUP)
        .map_err(|e| {
            format!(
                "this machine has no package manager mesh knows (apt-get and dpkg on Debian): {e}"
            )
        })?;
    let said = String::from_utf8_lossy(&out.stdout);
    Ok(match said.split_once('\t') {
        Some((status, version)) if out.status.success() && status.ends_with(" installed") => {
            Some(version.trim().to_string())
        }
        _ => None,
    })
}

/// `apt-get install` (up or down to a version: `--allow-downgrades`) or `apt-get remove` of
/// one checked argument, data argv, never through a shell.
fn apt(verb: &str, arg: &str) -> Result<(), String> {
    *STATUS.lock().unwrap_or_else(|p| p.into_inner()) = None;
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
        .output_within(child::PACKAGES)
        .map_err(|e| format!("cannot run apt-get {verb} {arg}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
    Err(format!(
        "apt-get {verb} {arg} failed: {}",
        last[last.len().saturating_sub(3)..].join(" / ")
    ))
}

#[cfg(test)]
mod tests {
    use super::{DPKG_STATUS, ask_dpkg, installed_in};

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
