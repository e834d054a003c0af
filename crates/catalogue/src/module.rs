//! A module definition (`catalogue/<module>/module.json` and the files it ships), parsed and
//! checked so that every error names the file and the field.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

use super::CatalogueError;
use super::per_consumer;
use super::requirement::{self, Provision, RawProvision, RawRequirement, Requirement};
use super::resources::{Parser, ResourceDef};
use super::scope::{self, Reading, Scope};
use super::setting::{self, RawSetting, Setting};

/// A module: identity, declared settings, and the resources it puts on a machine.
#[derive(Debug, Clone)]
pub struct Module {
    /// Its name, also its folder's name.
    pub name: String,
    /// Its version; a new version's changed content costs what its files declare.
    pub version: String,
    /// One sentence of what it is for.
    pub description: String,
    /// Every setting it takes, in the order declared: the operator's requirements.
    pub settings: Vec<Setting>,
    /// What it requires from a module, its host or the mesh.
    pub requires: Vec<Requirement>,
    /// What it provides to other modules.
    pub provides: Vec<Provision>,
    /// What it puts on a machine.
    pub resources: Vec<ResourceDef>,
    /// Where it was loaded from: `built-in` or a folder.
    pub origin: String,
    /// Every `${…}` its definition reads anywhere: a value no template reads need not be made.
    pub reads: BTreeSet<String>,
    /// How many of its assignments a push may restart at once (`"rollout"`).
    pub rollout: super::rollout::Rollout,
    /// Settings of other modules it needs at a value on the same machine.
    pub wants: Vec<super::wants::Want>,
}

impl Module {
    /// The module.json it was read from, for messages.
    pub fn file(&self) -> String {
        if self.origin == "built-in" {
            format!("catalogue/{}/module.json", self.name)
        } else {
            format!("{}/module.json", self.origin)
        }
    }

    /// The declared setting called `name`.
    pub fn setting(&self, name: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.name == name)
    }

    /// Whether `key` (`requirement.field`) names a secret field: it is never shown.
    pub fn is_secret(&self, key: &str) -> bool {
        scope::is_secret(&self.requires, &self.provides, key)
    }

    /// The declared settings' names, for messages.
    pub fn setting_names(&self) -> String {
        if self.settings.is_empty() {
            "it declares none".to_string()
        } else {
            self.settings
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModule {
    name: Option<String>,
    version: Option<String>,
    description: Option<String>,
    #[serde(default)]
    settings: Vec<RawSetting>,
    #[serde(default)]
    requires: Vec<RawRequirement>,
    #[serde(default)]
    provides: Vec<RawProvision>,
    #[serde(default)]
    resources: Vec<Value>,
    rollout: Option<Value>,
    #[serde(default)]
    wants: Vec<Value>,
}

/// Parses one module: `file` names module.json in messages, `dir_name` is its folder's name and
/// `shipped` the other files of the folder (path relative to it → bytes).
/// One module from its module.json and the files shipped beside it (by path in its folder), as
/// the loader reads a folder named `name`; nothing is read from disk. The fuzz target `module`
/// runs this on anything.
pub fn parse_bytes(
    name: &str,
    json: &[u8],
    shipped: &BTreeMap<String, Vec<u8>>,
) -> Result<Module, CatalogueError> {
    parse(&format!("{name}/module.json"), name, json, shipped, name)
}

/// What names a field of module.json in a refusal.
type Invalid<'a> = dyn Fn(&str, String) -> CatalogueError + 'a;

pub(super) fn parse(
    file: &str,
    dir_name: &str,
    json: &[u8],
    shipped: &BTreeMap<String, Vec<u8>>,
    origin: &str,
) -> Result<Module, CatalogueError> {
    let invalid = |field: &str, message: String| CatalogueError::Invalid {
        file: file.to_string(),
        field: field.to_string(),
        message,
    };
    let raw: RawModule = serde_json::from_slice(json).map_err(|source| CatalogueError::Json {
        file: file.to_string(),
        source,
    })?;
    let (name, version, description) = identity(&raw, dir_name, &invalid)?;
    let rollout = super::rollout::rollout(raw.rollout).map_err(|(f, m)| invalid(&f, m))?;
    let wants = super::wants::wants(raw.wants, &name).map_err(|(f, m)| invalid(&f, m))?;
    let mut settings: Vec<Setting> = Vec::new();
    for (i, s) in raw.settings.into_iter().enumerate() {
        let setting = setting::declared(i, s, &settings).map_err(|(f, m)| invalid(&f, m))?;
        settings.push(setting);
    }
    let requires = requirements(raw.requires, &settings, &invalid)?;
    let (mut provides, per_consumer) = provisions(raw.provides, &settings, &requires, &invalid)?;
    let read = RefCell::new(BTreeSet::new());
    let scope = Scope {
        settings: &settings,
        requirements: &requires,
        provisions: &provides,
        read: &read,
    };
    let templates = per_consumer_templates(&provides, &per_consumer, shipped, &scope, &invalid)?;
    for (p, t) in provides.iter_mut().zip(templates) {
        p.per_consumer = t;
    }
    let scope = Scope {
        settings: &settings,
        requirements: &requires,
        provisions: &provides,
        read: &read,
    };
    let mut parser = Parser {
        file,
        module: &name,
        version: &version,
        scope,
        shipped,
        paths: Vec::new(),
        units: Vec::new(),
    };
    let mut resources = Vec::new();
    for (i, value) in raw.resources.into_iter().enumerate() {
        resources.push(parser.resource(i, value)?);
    }
    Ok(Module {
        name,
        version,
        description,
        settings,
        requires,
        provides,
        resources,
        origin: origin.to_string(),
        reads: read.into_inner(),
        rollout,
        wants,
    })
}

/// The module's name (its folder's), version and description.
fn identity(
    raw: &RawModule,
    dir_name: &str,
    invalid: &Invalid,
) -> Result<(String, String, String), CatalogueError> {
    let name = raw
        .name
        .clone()
        .ok_or_else(|| invalid("name", "missing".into()))?;
    if name != dir_name {
        return Err(invalid(
            "name",
            format!("{name:?} differs from its folder's name {dir_name:?}"),
        ));
    }
    if !setting::valid_name(&name) {
        return Err(invalid(
            "name",
            "must be lower case letters, digits and -".into(),
        ));
    }
    let version = raw
        .version
        .clone()
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| invalid("version", "missing".into()))?;
    let description = raw
        .description
        .clone()
        .filter(|d| !d.trim().is_empty())
        .ok_or_else(|| {
            invalid(
                "description",
                "missing: say in one sentence what the module is for".into(),
            )
        })?;
    Ok((name, version, description))
}

/// `requires`, each named apart from the settings and the other requirements.
fn requirements(
    raw: Vec<RawRequirement>,
    settings: &[Setting],
    invalid: &Invalid,
) -> Result<Vec<Requirement>, CatalogueError> {
    let mut requires: Vec<Requirement> = Vec::new();
    for (i, r) in raw.into_iter().enumerate() {
        let r = requirement::requirement(i, r).map_err(|(f, m)| invalid(&f, m))?;
        if settings.iter().any(|s| s.name == r.name) || requires.iter().any(|q| q.name == r.name) {
            return Err(invalid(
                &format!("requires[{i}].name"),
                format!("{:?} names a setting or requirement already", r.name),
            ));
        }
        requires.push(r);
    }
    Ok(requires)
}

/// `provides`, each named apart from the settings, requirements and other provisions, its
/// directories' owners checked; with the file each made per consumer is written from.
fn provisions(
    raw: Vec<RawProvision>,
    settings: &[Setting],
    requires: &[Requirement],
    invalid: &Invalid,
) -> Result<(Vec<Provision>, Vec<Option<String>>), CatalogueError> {
    let mut provides: Vec<Provision> = Vec::new();
    let mut per_consumer = Vec::new();
    for (i, mut p) in raw.into_iter().enumerate() {
        let made_per_consumer = p.per_consumer.is_some();
        per_consumer.push(p.per_consumer.take());
        let mut p = requirement::provision(i, p).map_err(|(f, m)| invalid(&f, m))?;
        for f in &mut p.fields {
            f.field.directory = super::owner::provided(
                &format!("provides[{i}].fields.{}", f.field.name),
                f.field.directory.take(),
                f.value.as_ref().and_then(|v| v.lone_reference()),
                requires,
                made_per_consumer,
            )
            .map_err(|(f, m)| invalid(&f, m))?;
        }
        if settings.iter().any(|s| s.name == p.name)
            || requires.iter().any(|q| q.name == p.name)
            || provides.iter().any(|o| o.name == p.name)
        {
            return Err(invalid(
                &format!("provides[{i}].name"),
                format!(
                    "{:?} names a setting, requirement or provision already",
                    p.name
                ),
            ));
        }
        provides.push(p);
    }
    Ok((provides, per_consumer))
}

/// Each provision's values checked against what the module declares (only one made per consumer
/// may read its consumer), and the template it is made from per consumer, if it is.
fn per_consumer_templates(
    provides: &[Provision],
    per_consumer: &[Option<String>],
    shipped: &BTreeMap<String, Vec<u8>>,
    scope: &Scope,
    invalid: &Invalid,
) -> Result<Vec<Option<per_consumer::PerConsumer>>, CatalogueError> {
    let mut templates = Vec::new();
    for (i, (p, file)) in provides.iter().zip(per_consumer).enumerate() {
        for f in &p.fields {
            if let Some(v) = &f.value {
                let at = format!("provides[{i}].fields.{}", f.field.name);
                let mut refs = Vec::new();
                for r in v.references() {
                    let of_consumer =
                        per_consumer::reads_consumer(r).map_err(|m| invalid(&at, m.to_string()))?;
                    if of_consumer && file.is_none() {
                        return Err(invalid(
                            &at,
                            format!(
                                "reads ${{{r}}}: only a provision made per consumer \
                                 (\"per-consumer\": \"FILE\") knows its consumer"
                            ),
                        ));
                    }
                    if !of_consumer {
                        refs.push(r);
                    }
                }
                scope
                    .check(refs, Reading::ProvisionValue)
                    .map_err(|m| invalid(&at, format!("{} {m}", v.source_text())))?;
            }
        }
        templates.push(
            file.as_deref()
                .map(|name| per_consumer::load(i, &p.name, &p.fields, name, shipped, scope))
                .transpose()
                .map_err(|(f, m)| invalid(&f, m))?,
        );
    }
    Ok(templates)
}

/// Lower-case hex sha256 over the parts, each length-prefixed so no two splits collide.
pub fn digest(parts: &[&[u8]]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    mesh_wire::hex(&h.finalize())
}

#[cfg(test)]
mod tests;
