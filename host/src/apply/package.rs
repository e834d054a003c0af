//! A package from the machine's package manager: installed if missing, left installed when
//! undeclared (other software may have come to need it).
//!
//! Whether a package is installed, and installing or removing one, is asked of the machine's
//! `System` (on a real machine, dpkg's own database read once per run: `system::dpkg`).

use mesh_wire::{Outcome, PackageSpec, Resource, State};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, outcome};
use crate::confirm::Touches;
use crate::record::{Entry, PackageEntry, Paths, Record};

impl Run<'_> {
    pub(super) fn try_package(
        &mut self,
        resource: &Resource,
        spec: &PackageSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        spec.check().map_err(|r| r.to_string())?;
        let there = self.paths.system.installed(&spec.name)?;
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
                let with = self.removal_with(&spec.name, record)?;
                entry.changed = true;
                (
                    State::Changed,
                    format!("{} {} {v}{with}", self.said("removed", "remove"), spec.name),
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
            record.save(self.paths).map_err(Failure::Record)?;
            if spec.absent {
                self.paths.system.apt_get("remove", &spec.name)?;
            } else {
                self.paths
                    .system
                    .apt_get("install", &wanted(&spec.name, spec.version.as_deref()))?;
            }
        }
        Ok(outcome(&resource.id, state, done))
    }

    /// What else removing `name` takes, in words; refused (in the plan as in the push, before
    /// anything is removed) when apt would also remove a package that is not declared absent:
    /// apt removes every package that depends on the one removed, and the plan names them all.
    /// Those it takes are recorded as found before they go, as if removed by their own resource.
    fn removal_with(&self, name: &str, record: &mut Record) -> Result<String, Failure> {
        let takes = self.paths.system.removal_takes(name)?;
        let others: Vec<&String> = takes.iter().filter(|p| *p != name).collect();
        let undeclared: Vec<&str> = others
            .iter()
            .filter(|p| !self.absent.contains_key(p.as_str()))
            .map(|p| p.as_str())
            .collect();
        if !undeclared.is_empty() {
            return Err(format!(
                "removing {name} would also remove {} (apt removes every package that depends \
                 on it): nothing was removed; declare each of them absent too, or keep {name}",
                undeclared.join(", ")
            )
            .into());
        }
        if others.is_empty() {
            return Ok(String::new());
        }
        for other in &others {
            let id = &self.absent[other.as_str()];
            if !record.resources.contains_key(id) {
                let found = self.paths.system.installed(other)?;
                let entry = PackageEntry {
                    name: other.to_string(),
                    installed: false,
                    changed: found.is_some(),
                    found,
                };
                record.resources.insert(id.clone(), Entry::Package(entry));
            }
        }
        let others: Vec<&str> = others.iter().map(|p| p.as_str()).collect();
        Ok(format!(
            " and with it {} (declared absent too)",
            others.join(", ")
        ))
    }

    /// Undeclared: one the mesh removed or moved goes back to the version found (if the
    /// archive still has it); one the mesh installed, or left as found, stays as it is.
    pub(super) fn give_back_package(&mut self, p: &PackageEntry) -> Result<String, Failure> {
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
            return Err(format!("the record's package {} is not a package", p.name).into());
        }
        if self.paths.system.installed(&p.name)?.as_deref() == Some(found.as_str()) {
            return Ok(format!("{} {found} is installed, as found", p.name));
        }
        if self.applying() {
            self.paths
                .system
                .apt_get("install", &wanted(&p.name, Some(found)))
                .map_err(|e| {
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

impl Kind for PackageSpec {
    const PHASE: Phase = Phase::Packages;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_package(resource, self, record)
    }

    /// nothing: a revert leaves packages as the push made them (docs/guide.md says why), and
    /// the record put back keeps them the mesh's
    fn touches(&self, _paths: &Paths) -> Touches {
        Touches::default()
    }
}

impl GiveBack for PackageEntry {
    const KIND: &'static str = "package";
    const PHASE: Phase = Phase::Packages;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_package(self)
    }

    fn touches(&self) -> Touches {
        Touches::default()
    }

    const REVERTED: bool = false;
}
