//! A package installed (at a version, or removed) with the machine's package manager.

use serde::{Deserialize, Serialize};

use crate::SpecKind;

/// A package by name: installed (at `version` when one is given, apt's `name=version`) or, with
/// `absent`, removed. Both fields are left out of the wire when unset, so that a declaration
/// written before them reads and compares the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
}

impl PackageSpec {
    /// What it wants, as a plan says it: `absent`, `1.2-1` or `present`.
    pub fn wanted(&self) -> &str {
        match (&self.version, self.absent) {
            (_, true) => "absent",
            (Some(v), false) => v,
            (None, false) => "present",
        }
    }

    /// Its name and version checked, as the helper checks them before apt-get sees them.
    pub fn check(&self) -> Result<(), crate::path::Refusal> {
        if !crate::valid_package(&self.name) {
            return Err(crate::path::Refusal {
                field: "name".into(),
                value: self.name.clone(),
                reason: "it is not a Debian package name".into(),
            });
        }
        match &self.version {
            Some(v) if !crate::valid_package_version(v) => Err(crate::path::Refusal {
                field: "version".into(),
                value: v.clone(),
                reason: "it is not a Debian version like 1.2.3-1".into(),
            }),
            Some(_) if self.absent => Err(crate::path::Refusal {
                field: "version".into(),
                value: self.wanted().into(),
                reason: "an absent package has no version".into(),
            }),
            _ => Ok(()),
        }
    }
}

impl SpecKind for PackageSpec {
    const KIND: &'static str = "package";

    fn at(&self) -> &str {
        &self.name
    }

    fn check_fields(&self) -> Result<(), crate::path::Refusal> {
        self.check()
    }

    // a package is installed once, whoever asks for it, and never removed
    fn single_as(&self) -> Option<&'static str> {
        None
    }

    // the move itself, as the plan line shows it: `(1.2 -> 1.3)`, `(present -> absent)`
    fn fields_differing(&self, old: &Self) -> Vec<String> {
        if old.wanted() != self.wanted() {
            vec![format!("{} -> {}", old.wanted(), self.wanted())]
        } else {
            Vec::new()
        }
    }

    fn plan_text(&self) -> String {
        if self.absent {
            return format!("removed {}\n", self.name);
        }
        match &self.version {
            Some(v) => format!("installed {} at {v}\n", self.name),
            None => format!("installed {}\n", self.name),
        }
    }

    fn removal(&self) -> String {
        if self.absent || self.version.is_some() {
            format!(
                "{}: given back at the version found (reinstalled if the mesh removed it; left \
                 installed if the mesh installed it)",
                self.name
            )
        } else {
            format!("{}: left installed", self.name)
        }
    }
}
