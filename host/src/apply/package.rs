//! A package from the machine's package manager: installed if missing, left installed when
//! undeclared (other software may have come to need it).

use std::process::Command;

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

/// Whether dpkg says the package is installed. A machine without dpkg has no package manager
/// mesh knows, and is refused rather than guessed at.
fn installed(name: &str) -> Result<bool, String> {
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
