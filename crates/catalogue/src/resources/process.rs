//! A unit the mesh writes and runs, with the files it runs: its definition and its check.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ReadyDef, ResourceDef, default_mode, root};
use crate::CatalogueError;
use crate::module::digest;
use crate::scope::Reading;
use crate::template::Template;
use mesh_wire::path::{self as wire_path, Place};
use mesh_wire::unit;

/// A process: a unit the mesh writes, with the files it runs.
#[derive(Debug, Clone)]
pub struct ProcessDef {
    /// Its name within the instance; the unit is `<instance>-<name>.service`, or
    /// `<instance>.service` without one.
    pub name: Option<String>,
    pub description: String,
    /// The command's words, each a template.
    pub command: Vec<Template>,
    pub user: String,
    /// Environment variables, each value a template.
    pub environment: Vec<(String, Template)>,
    /// The variables that carry a secret (the definition said why): never shown.
    pub secret_environment: Vec<String>,
    pub working_directory: Option<Template>,
    pub restart: String,
    /// Bundle files: relative path, template, mode.
    pub bundle: Vec<(String, Template, u32)>,
    /// Digest of everything shipped and the module's version.
    pub source: String,
    /// What says it serves, probed after every start or restart.
    pub ready: Option<ReadyDef>,
}

impl Definition for ProcessDef {
    const KIND: &'static str = "process";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.process(i, value)
    }

    fn describe(&self) -> String {
        format!(
            "{}: {} as {}, restart {}{}{}",
            self.name.as_deref().unwrap_or("(the instance's own unit)"),
            self.description,
            self.user,
            self.restart,
            if self.bundle.is_empty() {
                String::new()
            } else {
                format!(
                    ", bundle {}",
                    self.bundle
                        .iter()
                        .map(|(path, _, _)| path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            super::ready_when(self.ready.as_ref())
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawProcess {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
    description: Option<String>,
    command: Option<Vec<String>>,
    #[serde(default = "root")]
    user: String,
    #[serde(default)]
    environment: BTreeMap<String, String>,
    working_directory: Option<String>,
    #[serde(default = "default_restart")]
    restart: String,
    #[serde(default)]
    bundle: Vec<RawBundleFile>,
    /// Why a secret must reach this process as an environment variable (ADR 0086's exception).
    secret_environment: Option<String>,
    /// A probe that says it serves (`ready`).
    ready: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBundleFile {
    path: String,
    template: String,
    #[serde(default = "default_mode")]
    mode: String,
}

fn default_restart() -> String {
    "on-failure".to_string()
}

impl Parser<'_> {
    pub(super) fn process(
        &mut self,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        let p: RawProcess = self.raw(i, value)?;
        let (description, words) =
            self.described_command(i, p.name.as_deref(), p.description, p.command)?;
        let (command, environment, secret_environment) = self.command_and_environment(
            i,
            &words,
            &p.environment,
            p.secret_environment.as_deref(),
            true,
        )?;
        self.literal(i, "description", &description)?;
        self.unit_rule(
            i,
            "description",
            unit::check_line("description", &description),
        )?;
        self.unit_rule(i, "user", unit::check_user(&p.user))?;
        self.unit_rule(
            i,
            "restart",
            unit::check_restart(&p.restart, &unit::PROCESS_RESTARTS),
        )?;
        if let Some(dir) = &p.working_directory {
            self.unit_rule(
                i,
                "working-directory",
                unit::check_line("working-directory", dir),
            )?;
        }
        let working_directory = p
            .working_directory
            .as_deref()
            .map(|d| self.host_path(i, "working-directory", d))
            .transpose()?;
        let mut bundle = Vec::new();
        let mut shipped_parts: Vec<&[u8]> = vec![self.module.as_bytes(), self.version.as_bytes()];
        for (b, f) in p.bundle.iter().enumerate() {
            let field = format!("bundle[{b}]");
            wire_path::check(&f.path, Place::InBundle).map_err(|e| {
                self.invalid(&at(&format!("{field}.path")), format!("{:?}: {e}", f.path))
            })?;
            let (bytes, t) = self.shipped_template(
                i,
                &format!("{field}.template"),
                &f.template,
                Reading::Plain,
            )?;
            let mode = self.parse_mode(i, &format!("{field}.mode"), &f.mode)?;
            shipped_parts.push(bytes);
            bundle.push((f.path.clone(), t, mode));
        }
        let source = digest(&shipped_parts);
        let ready = self.ready(i, p.ready)?;
        Ok(ResourceDef::from(ProcessDef {
            name: p.name,
            description,
            command,
            user: p.user,
            environment,
            secret_environment,
            working_directory,
            restart: p.restart,
            bundle,
            source,
            ready,
        }))
    }
}
