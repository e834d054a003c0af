//! A symbolic link the module makes: its definition, its check and its description. Both the
//! link's path and its target are machine paths, held to the rule a file's path is
//! (`wire::path`); either may read settings and requirements (`${data.path}/current`).

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ResourceDef};
use crate::rules;
use crate::scope::Reading;
use crate::{CatalogueError, Template};
use mesh_wire::path::Place;

/// A link at `path` pointing at `target`.
#[derive(Debug, Clone)]
pub struct SymlinkDef {
    pub path: Template,
    pub target: Template,
}

impl Definition for SymlinkDef {
    const KIND: &'static str = "symlink";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.symlink(i, value)
    }

    fn describe(&self) -> String {
        format!(
            "{} -> {} (what was there is given back when undeclared)",
            self.path.source_text(),
            self.target.source_text()
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSymlink {
    #[allow(dead_code)]
    kind: String,
    path: Option<String>,
    target: Option<String>,
}

impl Parser<'_> {
    pub(super) fn symlink(
        &mut self,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        let l: RawSymlink = self.raw(i, value)?;
        let path_text = self.claim_path(i, l.path)?;
        let path = self.template(i, "path", &path_text, Reading::Plain)?;
        let field = format!("resources[{i}].target");
        let target_text = l
            .target
            .ok_or_else(|| self.invalid(&field, "missing: name the path it points at".into()))?;
        let target = self.template(i, "target", &target_text, Reading::Plain)?;
        rules::literal_path(&target_text, &target, Place::Machine)
            .map_err(|m| self.invalid(&field, m.to_string()))?;
        Ok(ResourceDef::from(SymlinkDef { path, target }))
    }
}
