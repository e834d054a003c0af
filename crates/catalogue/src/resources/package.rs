//! A package from the machine's package manager: installed (at a version, when one is given)
//! or, with `"state": "absent"`, removed. Given back as found when undeclared: one the mesh
//! installed stays installed; one it removed is reinstalled at the version found; one whose
//! version it changed goes back to the version found.

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ResourceDef};
use crate::CatalogueError;

/// A package and what the module wants of it.
#[derive(Debug, Clone)]
pub struct PackageDef {
    pub name: String,
    /// apt's `name=version`: installed at exactly this version (up or down).
    pub version: Option<String>,
    /// `"state": "absent"`: removed (its configuration kept, as `apt-get remove` keeps it).
    pub absent: bool,
}

impl Definition for PackageDef {
    const KIND: &'static str = "package";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.package(i, value)
    }

    /// What `mesh module show` says of a package.
    fn describe(&self) -> String {
        match (&self.version, self.absent) {
            (_, true) => format!(
                "{} absent (removed; reinstalled at the version found when undeclared)",
                self.name
            ),
            (Some(v), false) => format!(
                "{} at version {v} (the version found given back when undeclared; left \
                 installed if the mesh installed it)",
                self.name
            ),
            (None, false) => format!("{} (left installed when undeclared)", self.name),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPackage {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
    version: Option<String>,
    /// `present` (the default) or `absent`.
    state: Option<String>,
}

impl Parser<'_> {
    pub(super) fn package(
        &mut self,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        let p: RawPackage = self.raw(i, value)?;
        let name = self.required(
            i,
            "name",
            p.name,
            mesh_wire::valid_package,
            "a Debian package name",
        )?;
        let absent = match p.state.as_deref() {
            None | Some("present") => false,
            Some("absent") => true,
            Some(other) => {
                return Err(self.invalid(
                    &format!("resources[{i}].state"),
                    format!("{other:?} is neither \"present\" nor \"absent\""),
                ));
            }
        };
        let version = match p.version {
            None => None,
            Some(_) if absent => {
                return Err(self.invalid(
                    &format!("resources[{i}].version"),
                    "an absent package has no version".into(),
                ));
            }
            v => Some(self.required(
                i,
                "version",
                v,
                mesh_wire::valid_package_version,
                "a Debian version like 1.2.3-1",
            )?),
        };
        Ok(ResourceDef::from(PackageDef {
            name,
            version,
            absent,
        }))
    }
}
