//! Requirements and provisions (design 27): everything a module needs is a requirement answered
//! by one of four providers, and a module may provide something others require.
//!
//! | kind       | answers                                                  | fields                     |
//! |------------|----------------------------------------------------------|----------------------------|
//! | `operator` | a value a person chooses: the module's **settings**      | `${name}`                  |
//! | `host`     | a `directory`, a `port` or a `fact` of the module's node | `path` / `port` / `name`, `address`, `nodes` |
//! | `mesh`     | the instance's identity                                  | `instance`, `node`, `login` |
//! | `module`   | a provision of another module, by its contract's fields  | the contract's             |
//!
//! A definition reads any of them with one form, `${requirement.field}` (a setting is `${name}`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::setting::{self, SettingType};
use super::template::Template;

/// What a module requires, by name.
#[derive(Debug, Clone)]
pub struct Requirement {
    pub name: String,
    pub need: Need,
}

/// The kinds of requirement besides settings (the operator's), and what each asks for.
#[derive(Debug, Clone)]
pub enum Need {
    /// A provision of another module, read through the fields of its contract.
    Module {
        provision: String,
        fields: Vec<Field>,
    },
    /// A directory on the module's own node, made by the host with this owner and mode.
    Directory {
        owner: String,
        group: String,
        mode: u32,
    },
    /// A port on the module's own node, allocated once per node and instance.
    Port,
    /// What the module's own node is: its name and address, and the names of the mesh's nodes.
    Fact,
    /// The instance's identity: its name, its node and a login of at most 20 characters.
    Mesh,
    /// Access to the operator's own data: a path the operator names on the assignment (`mesh
    /// place`), never created, owned or removed by the mesh; a process gets it read-only unless
    /// `write`.
    Access { write: bool },
}

impl Need {
    /// The provider kind as module.json spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            Need::Module { .. } => "module",
            Need::Directory { .. } | Need::Port | Need::Fact => "host",
            Need::Mesh => "mesh",
            Need::Access { .. } => "operator",
        }
    }

    /// What it asks for, in words, for `mesh module show`.
    pub fn describe(&self) -> String {
        match self {
            Need::Module { provision, .. } => format!("a provision {provision}"),
            Need::Directory { owner, group, mode } => {
                format!("a directory ({owner}:{group} {mode:04o})")
            }
            Need::Port => "a port".to_string(),
            Need::Fact => "facts of its node".to_string(),
            Need::Mesh => "its identity".to_string(),
            Need::Access { write: false } => "read access to a path the operator names".into(),
            Need::Access { write: true } => "read-write access to a path the operator names".into(),
        }
    }

    /// The fields a definition may read, with their types and whether they are secret.
    pub fn fields(&self) -> Vec<Field> {
        let plain = |name: &str, kind| Field {
            name: name.to_string(),
            kind,
            secret: false,
            min_length: None,
            directory: None,
        };
        match self {
            Need::Module { fields, .. } => fields.clone(),
            Need::Directory { .. } | Need::Access { .. } => {
                vec![plain("path", SettingType::String)]
            }
            Need::Port => vec![plain("port", SettingType::Integer)],
            Need::Fact => {
                let mut fields = vec![
                    plain("name", SettingType::String),
                    plain("address", SettingType::String),
                    plain("nodes", SettingType::List),
                ];
                fields.extend(mesh_wire::FIELDS.iter().map(|f| {
                    plain(
                        f.name,
                        match f.kind {
                            mesh_wire::FactKind::Text => SettingType::String,
                            mesh_wire::FactKind::Number => SettingType::Integer,
                            mesh_wire::FactKind::List => SettingType::List,
                        },
                    )
                }));
                fields
            }
            Need::Mesh => vec![
                plain("instance", SettingType::String),
                plain("node", SettingType::String),
                plain("login", SettingType::String),
            ],
        }
    }
}

/// One field of a contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub kind: SettingType,
    /// A secret reaches a process only as a file, and is never printed.
    pub secret: bool,
    /// The fewest characters a string must have: a consumer narrowing its contract.
    pub min_length: Option<usize>,
    /// It names a directory, and who owns it (see [`super::owner`]).
    pub directory: Option<super::owner::Directory>,
}

/// What a module provides to others.
#[derive(Debug, Clone)]
pub struct Provision {
    /// The provision's name: what consumers ask for, and the seat that may deliver it.
    pub name: String,
    /// Delivered by a mesh seat: consumers are answered by whoever holds the seat of this name.
    pub seat: bool,
    pub fields: Vec<ProvidedField>,
    /// Answered once per consumer, with what the provider makes for each (see
    /// [`super::per_consumer`]).
    pub per_consumer: Option<super::per_consumer::PerConsumer>,
}

/// One field a provider answers with.
#[derive(Debug, Clone)]
pub struct ProvidedField {
    pub field: Field,
    /// Its value from the provider's own settings, host and mesh requirements; `None` for a
    /// secret the mesh generates once for the provider, or that the operator sets.
    pub value: Option<Template>,
    /// A secret the operator delivers (`"from": "operator"`, set with `mesh secret set`), never
    /// generated.
    pub from_operator: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequirement {
    name: Option<String>,
    kind: Option<String>,
    provision: Option<String>,
    #[serde(default)]
    fields: BTreeMap<String, RawField>,
    directory: Option<RawDirectory>,
    port: Option<serde_json::Map<String, Value>>,
    fact: Option<serde_json::Map<String, Value>>,
    access: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDirectory {
    #[serde(default = "root")]
    owner: String,
    #[serde(default = "root")]
    group: String,
    #[serde(default = "dir_mode")]
    mode: String,
}

fn root() -> String {
    "root".into()
}
fn dir_mode() -> String {
    "0755".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawField {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    secret: bool,
    value: Option<String>,
    #[serde(default)]
    generate: bool,
    #[serde(rename = "min-length")]
    min_length: Option<usize>,
    from: Option<String>,
    directory: Option<super::owner::RawDirectory>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProvision {
    name: Option<String>,
    #[serde(default)]
    seat: bool,
    #[serde(default)]
    fields: BTreeMap<String, RawField>,
    #[serde(rename = "per-consumer")]
    pub(super) per_consumer: Option<String>,
}

/// A refusal: the field it names (under `requires[i]` or `provides[i]`) and why.
pub(super) type Refusal = (String, String);

fn field_type(at: &str, raw: &RawField) -> Result<SettingType, Refusal> {
    let types = SettingType::ALL.map(SettingType::as_str).join(", ");
    match &raw.kind {
        None => Err((
            format!("{at}.type"),
            format!("missing: every field declares its type ({types})"),
        )),
        Some(k) => SettingType::parse(k).ok_or_else(|| {
            (
                format!("{at}.type"),
                format!("{k:?} is not a type; use one of {types}"),
            )
        }),
    }
}

/// A requirement's or provision's name: there, and a well-formed name.
fn named(name: Option<String>, at: String) -> Result<String, Refusal> {
    match name {
        None => Err((at, "missing".into())),
        Some(n) if !setting::valid_name(&n) => {
            Err((at, "must be lower case letters, digits and -".into()))
        }
        Some(n) => Ok(n),
    }
}

/// Parses `requires[i]`.
pub(super) fn requirement(i: usize, raw: RawRequirement) -> Result<Requirement, Refusal> {
    let at = |f: &str| format!("requires[{i}].{f}");
    let name = named(raw.name, at("name"))?;
    let kind = raw.kind.unwrap_or_default();
    let need = match kind.as_str() {
        "module" => module_need(&at, raw.provision, &raw.fields)?,
        "host" => host_need(&at, raw.directory, raw.port, raw.fact)?,
        "mesh" => Need::Mesh,
        "operator" => operator_need(&at, raw.access.as_deref())?,
        "" => {
            return Err((
                at("kind"),
                "missing: module, host, mesh (or a setting, the operator's)".into(),
            ));
        }
        other => {
            return Err((
                at("kind"),
                format!(
                    "{other:?} is not a provider; use module, host or mesh (or a setting, the operator's)"
                ),
            ));
        }
    };
    Ok(Requirement { name, need })
}

/// A module requirement: the provision it needs and the contract's fields it reads (each with
/// no value, the provider answers it).
fn module_need(
    at: &dyn Fn(&str) -> String,
    provision: Option<String>,
    raw_fields: &BTreeMap<String, RawField>,
) -> Result<Need, Refusal> {
    let provision = provision.ok_or_else(|| {
        (
            at("provision"),
            "missing: name the provision it needs".to_string(),
        )
    })?;
    if raw_fields.is_empty() {
        return Err((
            at("fields"),
            "missing: the contract's fields the module reads".into(),
        ));
    }
    let mut fields = Vec::new();
    for (f, rf) in raw_fields {
        let here = at(&format!("fields.{f}"));
        if rf.value.is_some() || rf.generate {
            return Err((
                here,
                "a consumer's field has no value: the provider answers it".into(),
            ));
        }
        let kind = field_type(&here, rf)?;
        if rf.min_length.is_some() && kind != SettingType::String {
            return Err((
                format!("{here}.min-length"),
                "only a string has a length".into(),
            ));
        }
        fields.push(Field {
            name: f.clone(),
            kind,
            secret: rf.secret,
            min_length: rf.min_length,
            directory: super::owner::parse(&here, kind, rf.directory.as_ref())?,
        });
    }
    Ok(Need::Module { provision, fields })
}

/// A host requirement: exactly one of a directory, a port or a fact.
fn host_need(
    at: &dyn Fn(&str) -> String,
    directory: Option<RawDirectory>,
    port: Option<serde_json::Map<String, Value>>,
    fact: Option<serde_json::Map<String, Value>>,
) -> Result<Need, Refusal> {
    match (directory, port, fact) {
        (Some(d), None, None) => Ok(Need::Directory {
            mode: super::rules::parse_mode(&d.mode, mesh_wire::path::ModeOf::Directory)
                .map_err(|m| (at("directory.mode"), m.to_string()))?,
            owner: d.owner,
            group: d.group,
        }),
        (None, Some(_), None) => Ok(Need::Port),
        (None, None, Some(_)) => Ok(Need::Fact),
        _ => Err((
            at("kind"),
            "a host requirement is exactly one of \"directory\", \"port\" or \"fact\"".into(),
        )),
    }
}

/// An operator requirement: access to the operator's data, read or read-write (a setting is
/// declared under "settings" instead).
fn operator_need(at: &dyn Fn(&str) -> String, access: Option<&str>) -> Result<Need, Refusal> {
    match access {
        Some("read") => Ok(Need::Access { write: false }),
        Some("read-write") => Ok(Need::Access { write: true }),
        Some(other) => Err((
            at("access"),
            format!("{other:?} is not an access: \"read\" or \"read-write\""),
        )),
        None => Err((
            at("kind"),
            "an operator requirement is a setting (declare it under \"settings\") or \
             access to the operator's data (\"access\": \"read\" or \"read-write\")"
                .into(),
        )),
    }
}

/// Whether a provided field is the operator's secret (`"from": "operator"`): a secret string,
/// with neither a value nor `generate`.
fn operator_field(here: &str, rf: &RawField, kind: SettingType) -> Result<bool, Refusal> {
    match rf.from.as_deref() {
        None => Ok(false),
        Some("operator") if rf.secret && kind == SettingType::String && rf.value.is_none() && !rf.generate => {
            Ok(true)
        }
        Some("operator") => Err((
            here.to_string(),
            "\"from\": \"operator\" is for a secret string the operator sets with `mesh secret set` \
             (\"secret\": true, \"type\": \"string\", and neither \"value\" nor \"generate\")"
                .into(),
        )),
        Some(other) => Err((
            here.to_string(),
            format!("\"from\": {other:?} is not a source; the only one is \"operator\""),
        )),
    }
}

/// Parses `provides[i]`.
pub(super) fn provision(i: usize, raw: RawProvision) -> Result<Provision, Refusal> {
    let at = |f: &str| format!("provides[{i}].{f}");
    let name = named(raw.name, at("name"))?;
    if raw.fields.is_empty() {
        return Err((at("fields"), "missing: the fields it answers with".into()));
    }
    let mut fields = Vec::new();
    for (f, rf) in &raw.fields {
        let here = at(&format!("fields.{f}"));
        let kind = field_type(&here, rf)?;
        if rf.min_length.is_some() {
            return Err((
                format!("{here}.min-length"),
                "a provider honours its contract's lengths (catalogue/contracts/NAME.json); a consumer may narrow them".into(),
            ));
        }
        let from_operator = operator_field(&here, rf, kind)?;
        let value = match (&rf.value, rf.generate) {
            _ if from_operator => None,
            (Some(v), false) => {
                Some(Template::parse(v).map_err(|m| (here.clone(), m.to_string()))?)
            }
            (None, true) if rf.secret && kind == SettingType::String => None,
            (None, true) => {
                return Err((
                    here,
                    "only a secret string is generated (\"secret\": true, \"type\": \"string\")"
                        .into(),
                ));
            }
            (Some(_), true) => {
                return Err((here, "either a value or generate, not both".into()));
            }
            (None, false) => {
                return Err((
                    here,
                    "missing: a \"value\", or for a secret \"generate\": true or \"from\": \"operator\""
                        .into(),
                ));
            }
        };
        fields.push(ProvidedField {
            field: Field {
                name: f.clone(),
                kind,
                secret: rf.secret,
                min_length: None,
                // who owns it is settled with the module's requirements known
                directory: super::owner::parse(&here, kind, rf.directory.as_ref())?,
            },
            value,
            from_operator,
        });
    }
    Ok(Provision {
        name,
        seat: raw.seat,
        fields,
        // read by the module's parser, which has its folder's files
        per_consumer: None,
    })
}

#[cfg(test)]
mod tests;
