//! A container run with the machine's Docker: its definition and its check.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ReadyDef, ResourceDef};
use crate::CatalogueError;
use crate::scope::Reading;
use crate::template::Template;
use mesh_wire::path::{self as wire_path, Place};
use mesh_wire::unit;

/// A container: every string a template, so settings can say the image, the environment and
/// where its data lives.
#[derive(Debug, Clone)]
pub struct ContainerDef {
    /// Its name within the instance; the container is `<instance>-<name>`, or `<instance>`.
    pub name: Option<String>,
    pub image: Template,
    pub command: Vec<Template>,
    pub environment: Vec<(String, Template)>,
    /// The variables that carry a secret (the definition said why): never shown.
    pub secret_environment: Vec<String>,
    /// Source (on the machine) and target (inside), and read-only.
    pub mounts: Vec<(Template, String, bool)>,
    /// Host port (a number, or `${web.port}` from a host requirement), container port, protocol.
    pub ports: Vec<(Template, u16, String)>,
    pub restart: String,
    /// What says it serves, probed after every run, recreation or start.
    pub ready: Option<ReadyDef>,
}

impl Definition for ContainerDef {
    const KIND: &'static str = "container";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.container(i, value)
    }

    fn describe(&self) -> String {
        let mounts: Vec<String> = self
            .mounts
            .iter()
            .map(|(source, target, _)| format!("{} → {target}", source.source_text()))
            .collect();
        format!(
            "{} from image {}, restart {}{}{}",
            self.name
                .as_deref()
                .unwrap_or("(the instance's own container)"),
            self.image.source_text(),
            self.restart,
            if mounts.is_empty() {
                String::new()
            } else {
                format!(", mounts {}", mounts.join(", "))
            },
            super::ready_when(self.ready.as_ref())
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContainer {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
    image: Option<String>,
    #[serde(default)]
    command: Vec<String>,
    #[serde(default)]
    environment: BTreeMap<String, String>,
    #[serde(default)]
    mounts: Vec<RawMount>,
    #[serde(default)]
    ports: Vec<RawPort>,
    #[serde(default = "default_container_restart")]
    restart: String,
    /// Why a secret must reach this container as an environment variable (ADR 0086's exception).
    #[serde(rename = "secret-environment")]
    secret_environment: Option<String>,
    /// A probe that says it serves.
    ready: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawMount {
    source: String,
    target: String,
    #[serde(default)]
    read_only: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPort {
    host: Value,
    container: u16,
    #[serde(default = "tcp")]
    protocol: String,
}

fn default_container_restart() -> String {
    "unless-stopped".to_string()
}
fn tcp() -> String {
    "tcp".to_string()
}

impl Parser<'_> {
    pub(super) fn container(
        &mut self,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        let c: RawContainer = self.raw(i, value)?;
        self.claim_name(i, "container", c.name.as_deref())?;
        let image_text = c
            .image
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| self.invalid(&at("image"), "missing: the image it runs".into()))?;
        let image = self.template(i, "image", &image_text, Reading::Plain)?;
        let (command, environment, secret_environment) = self.command_and_environment(
            i,
            &c.command,
            &c.environment,
            c.secret_environment.as_deref(),
            false,
        )?;
        let mut mounts = Vec::new();
        for (m, mount) in c.mounts.iter().enumerate() {
            wire_path::check(&mount.target, Place::Container).map_err(|e| {
                self.invalid(
                    &at(&format!("mounts[{m}].target")),
                    format!("{:?}, a path inside the container: {e}", mount.target),
                )
            })?;
            if c.mounts[..m].iter().any(|o| o.target == mount.target) {
                return Err(self.invalid(
                    &at(&format!("mounts[{m}].target")),
                    format!("{} is mounted twice", mount.target),
                ));
            }
            let source = self.host_path(i, &format!("mounts[{m}].source"), &mount.source)?;
            mounts.push((source, mount.target.clone(), mount.read_only));
        }
        let mut ports = Vec::new();
        for (p, port) in c.ports.iter().enumerate() {
            if !matches!(port.protocol.as_str(), "tcp" | "udp") {
                return Err(self.invalid(
                    &at(&format!("ports[{p}].protocol")),
                    format!("{:?} is not tcp or udp", port.protocol),
                ));
            }
            let host_text = match &port.host {
                Value::Number(n) => n.to_string(),
                Value::String(t) => t.clone(),
                other => {
                    return Err(self.invalid(
                        &at(&format!("ports[{p}].host")),
                        format!("{other} is not a port number or \"${{name.port}}\""),
                    ));
                }
            };
            let host = self.template(i, &format!("ports[{p}].host"), &host_text, Reading::Plain)?;
            ports.push((host, port.container, port.protocol.clone()));
        }
        self.unit_rule(
            i,
            "restart",
            unit::check_restart(&c.restart, &unit::CONTAINER_RESTARTS),
        )?;
        let ready = self.ready(i, c.ready)?;
        Ok(ResourceDef::from(ContainerDef {
            name: c.name,
            image,
            command,
            environment,
            secret_environment,
            mounts,
            ports,
            restart: c.restart,
            ready,
        }))
    }
}
