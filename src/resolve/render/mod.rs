//! One resource definition of a module made into the resource a node is sent: every template
//! filled with the assignment's answers, and what each setting it reads costs. Each kind renders
//! in its own file here (`file.rs`, `process.rs`, ...): a new kind adds one file (its
//! [`Render`]), dispatched by the catalogue's `each_def!`; what every kind shares (filling a template, a probe, unit names, the settings
//! read and their costs, an account's name) is [`Filling`].

mod apt_repository;
mod container;
mod file;
mod group;
mod keys;
mod package;
mod process;
mod service;
mod symlink;
mod sysctl;
mod timer;
mod user;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::{Module, ResourceDef, Template, digest};
use crate::wire::{self, Cost, Resource, SettingUse};

/// What every kind's rendering reads: the instance, its module and the answers its templates
/// are filled with.
pub(super) struct Filling<'a> {
    instance: &'a str,
    module: &'a Module,
    values: &'a BTreeMap<String, Value>,
}

/// What a kind's definition is made into, implemented in the kind's own file here.
trait Render {
    /// The resource's id and what the node is sent.
    fn render(&self, fill: &Filling<'_>) -> Result<(String, wire::Spec), RenderError>;
}

/// What a definition's templates read as, filled in with an assignment's answers, that the
/// resource cannot be: each names the template as written and what it read as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum RenderError {
    #[error(transparent)]
    Probe(#[from] crate::catalogue::ProbeError),
    #[error("{written} reads as {name:?}, which is not a unit name")]
    NotAUnit { written: String, name: String },
    #[error(
        "module {module}: service unit {written} reads as {unit:?}, which is not a systemd unit name"
    )]
    NotAService {
        module: String,
        written: String,
        unit: String,
    },
    #[error("module {module}: an account's name, filled in: {why}")]
    Account {
        module: String,
        why: crate::catalogue::AccountError,
    },
    #[error("the host port {written} reads as {text:?}, not a port")]
    HostPort { written: String, text: String },
    /// A value a unit or an environment cannot hold (a control character, a newline).
    #[error("{kind} {target}, as its settings fill it in: {why}")]
    UnitValue {
        kind: &'static str,
        target: String,
        why: wire::unit::UnitError,
    },
}

/// `def` of `instance` made into the resource its node is sent, `values` filled in.
pub(super) fn resource(
    instance: &str,
    module: &Module,
    def: &ResourceDef,
    values: &BTreeMap<String, Value>,
) -> Result<Resource, RenderError> {
    let fill = Filling {
        instance,
        module,
        values,
    };
    let (id, spec) = crate::catalogue::each_def!(def, d => d.render(&fill))?;
    // settings filled in may hold what a unit or an environment cannot: refused before anything
    // is sent
    spec.check_unit_values()
        .map_err(|why| RenderError::UnitValue {
            kind: spec.kind(),
            target: spec.target().to_string(),
            why,
        })?;
    Ok(Resource {
        id,
        instance: instance.to_string(),
        module: format!("{}@{}", module.name, module.version),
        confirm: def.confirm(),
        spec,
    })
}

impl Filling<'_> {
    /// A template as the answers fill it in: every string of a definition reads settings as
    /// text.
    fn text(&self, template: &Template) -> String {
        template.fill(self.values)
    }

    /// A unit's probe with the node's answers filled in.
    fn ready(
        &self,
        def: Option<&crate::catalogue::ReadyDef>,
    ) -> Result<Option<wire::Ready>, RenderError> {
        Ok(def.map(|r| r.render(self.values)).transpose()?)
    }

    /// A resource's unit names, rendered (`${me.instance}.service`) and checked.
    fn units(&self, units: &[String]) -> Result<Vec<String>, RenderError> {
        units
            .iter()
            .map(|u| {
                let name = Template::parse(u)
                    .map(|t| self.text(&t))
                    .unwrap_or_else(|_| u.clone());
                if crate::catalogue::valid_unit(&name) {
                    Ok(name)
                } else {
                    Err(RenderError::NotAUnit {
                        written: u.clone(),
                        name,
                    })
                }
            })
            .collect()
    }

    /// The settings and requirement fields a resource reads, each with a digest of its value (never
    /// the value) and what its change costs: a setting's declared cost; for a requirement's field (a
    /// provider's host, a port, a placed directory: `db.host`), `cost`, the resource's own, since a
    /// requirement declares none.
    fn used(&self, references: Vec<&str>, cost: Cost) -> BTreeMap<String, SettingUse> {
        references
            .into_iter()
            .filter_map(|name| {
                let value = self.values.get(name)?;
                let cost = match self.module.setting(name) {
                    Some(decl) => decl.cost,
                    None => cost,
                };
                Some((
                    name.to_string(),
                    SettingUse {
                        digest: digest(&[name.as_bytes(), value.to_string().as_bytes()]),
                        cost,
                    },
                ))
            })
            .collect()
    }

    /// An account's name as its settings fill it in, held to the rule the helper applies.
    fn account(&self, name: &str) -> Result<String, RenderError> {
        crate::catalogue::check_account(name).map_err(|why| RenderError::Account {
            module: self.module.name.clone(),
            why,
        })?;
        Ok(name.to_string())
    }
}
