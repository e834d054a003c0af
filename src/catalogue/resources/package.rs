//! A package from the machine's package manager, left installed when undeclared.

use serde::Deserialize;
use serde_json::Value;

use super::ResourceDef;
use super::parser::Parser;
use crate::catalogue::CatalogueError;

/// What `mesh module show` says of a package.
pub(super) fn describe(name: &str) -> String {
    format!("{name} (left installed when undeclared)")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPackage {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
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
            crate::wire::valid_package,
            "a Debian package name",
        )?;
        Ok(ResourceDef::Package(name))
    }
}
