//! Contracts: what a provision promises, shared by its providers and its consumers rather than
//! spelled by each (design 27, "A contract is shared, not per module").
//!
//! A contract is `contracts/NAME.json` in a catalogue folder (the built-in one ships
//! `catalogue/contracts/`), for the provision NAME:
//!
//! ```json
//! {"description": "…", "fields": {"password": {"type": "string", "secret": true, "min-length": 32}}}
//! ```
//!
//! - every provider of NAME answers every field, with its type and secrecy, and nothing beyond;
//!   a generated secret honours `min-length`;
//! - a consumer reads only fields of the contract, with their type and secrecy, and may narrow a
//!   string's `min-length` (ask for more), never widen it (ask for less); resolution refuses a
//!   provider whose answer is shorter than the consumer asks;
//! - a field that names a directory (`"directory": {"owner": …}`) may promise its owner, which
//!   every provider honours; a consumer may narrow one left open to an owner of its own, never
//!   name another than the contract promises (see [`super::owner`]).
//!
//! A provision without a contract is checked between each provider and consumer, as before.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::requirement::{Field, Provision};
use super::setting::SettingType;
use super::{CatalogueError, Module, Need};

/// How long a secret the mesh generates is (see `inventory::answers`).
pub const GENERATED_LENGTH: usize = 32;

/// What a provision promises.
#[derive(Debug, Clone)]
pub struct Contract {
    pub name: String,
    /// Where it was read from, for messages.
    pub file: String,
    pub description: String,
    pub fields: BTreeMap<String, Field>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContract {
    description: Option<String>,
    #[serde(default)]
    fields: BTreeMap<String, RawContractField>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContractField {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    secret: bool,
    #[serde(rename = "min-length")]
    min_length: Option<usize>,
    directory: Option<super::owner::RawDirectory>,
}

/// Parses the contract `name` read from `file`.
pub fn parse(file: &str, name: &str, json: &[u8]) -> Result<Contract, CatalogueError> {
    let invalid = |field: &str, message: String| CatalogueError::Invalid {
        file: file.to_string(),
        field: field.to_string(),
        message,
    };
    let raw: RawContract = serde_json::from_slice(json).map_err(|source| CatalogueError::Json {
        file: file.to_string(),
        source,
    })?;
    let description = raw
        .description
        .ok_or_else(|| invalid("description", "missing: one sentence of what it is".into()))?;
    if raw.fields.is_empty() {
        return Err(invalid("fields", "missing: the fields it promises".into()));
    }
    let mut fields = BTreeMap::new();
    for (f, rf) in raw.fields {
        let at = format!("fields.{f}");
        let types = SettingType::ALL.map(SettingType::as_str).join(", ");
        let kind = match &rf.kind {
            None => return Err(invalid(&format!("{at}.type"), format!("missing ({types})"))),
            Some(k) => SettingType::parse(k).ok_or_else(|| {
                invalid(
                    &format!("{at}.type"),
                    format!("{k:?} is not a type; use one of {types}"),
                )
            })?,
        };
        if rf.min_length.is_some() && kind != SettingType::String {
            return Err(invalid(
                &format!("{at}.min-length"),
                "only a string has a length".into(),
            ));
        }
        let directory = super::owner::parse(&at, kind, rf.directory.as_ref())
            .map_err(|(field, m)| invalid(&field, m))?;
        fields.insert(
            f.clone(),
            Field {
                name: f,
                kind,
                secret: rf.secret,
                min_length: rf.min_length,
                directory,
            },
        );
    }
    Ok(Contract {
        name: name.to_string(),
        file: file.to_string(),
        description,
        fields,
    })
}

/// The contracts of a catalogue folder: `DIR/contracts/*.json` (none when it has no such folder).
pub fn load_dir(dir: &Path) -> Result<Vec<Contract>, CatalogueError> {
    let folder = dir.join("contracts");
    if !folder.is_dir() {
        return Ok(Vec::new());
    }
    let io = |source| CatalogueError::Io {
        path: folder.clone(),
        source,
    };
    let mut paths: Vec<_> = std::fs::read_dir(&folder)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let name = p
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let json = std::fs::read(&p).map_err(|source| CatalogueError::Io {
            path: p.clone(),
            source,
        })?;
        out.push(parse(&p.display().to_string(), &name, &json)?);
    }
    Ok(out)
}

/// `module` checked against the contracts of the provisions it provides and requires; the
/// error names the module's file and field, and the contract's file.
pub fn check(
    module: &Module,
    file: &str,
    contracts: &BTreeMap<String, Contract>,
) -> Result<(), CatalogueError> {
    let invalid = |(field, message): (String, String)| CatalogueError::Invalid {
        file: file.to_string(),
        field,
        message,
    };
    for (i, p) in module.provides.iter().enumerate() {
        if let Some(c) = contracts.get(&p.name) {
            provider_keeps(i, p, c).map_err(invalid)?;
        }
    }
    for (i, r) in module.requires.iter().enumerate() {
        let Need::Module { provision, fields } = &r.need else {
            continue;
        };
        if let Some(c) = contracts.get(provision) {
            consumer_keeps(i, fields, c).map_err(invalid)?;
        }
    }
    Ok(())
}

/// A refusal: the field of module.json and what is wrong there.
type Refusal = (String, String);

/// `provides[i]` answers every field of its contract `c`, with its type, secrecy and directory
/// owner, a generated one as long as promised, and nothing beyond.
fn provider_keeps(i: usize, p: &Provision, c: &Contract) -> Result<(), Refusal> {
    for (name, want) in &c.fields {
        let at = format!("provides[{i}].fields.{name}");
        let Some(given) = p.fields.iter().find(|f| &f.field.name == name) else {
            return Err((
                format!("provides[{i}].fields"),
                format!(
                    "misses {name:?}, which the contract {} ({}) promises",
                    c.name, c.file
                ),
            ));
        };
        if (given.field.kind, given.field.secret) != (want.kind, want.secret) {
            return Err((
                at,
                format!(
                    "{}, the contract {} ({}) says {}",
                    shape(&given.field),
                    c.name,
                    c.file,
                    shape(want)
                ),
            ));
        }
        if let Err(m) =
            super::owner::honours(given.field.directory.as_ref(), want.directory.as_ref())
        {
            return Err((
                format!("{at}.directory"),
                format!("{m} (the contract {}, {})", c.name, c.file),
            ));
        }
        if given.value.is_none()
            && let Some(n) = want.min_length
            && n > GENERATED_LENGTH
        {
            return Err((
                at,
                format!(
                    "is generated with {GENERATED_LENGTH} characters, the contract {} ({}) promises at least {n}",
                    c.name, c.file
                ),
            ));
        }
    }
    if let Some(extra) = p
        .fields
        .iter()
        .find(|f| !c.fields.contains_key(&f.field.name))
    {
        return Err((
            format!("provides[{i}].fields.{}", extra.field.name),
            format!(
                "is not in the contract {} ({}); add it there, so every provider answers it",
                c.name, c.file
            ),
        ));
    }
    Ok(())
}

/// `requires[i]` reads only fields of its contract `c`, with their type, secrecy and directory
/// owner, and asks for no shorter a string than promised.
fn consumer_keeps(i: usize, fields: &[Field], c: &Contract) -> Result<(), Refusal> {
    for f in fields {
        let at = format!("requires[{i}].fields.{}", f.name);
        let Some(want) = c.fields.get(&f.name) else {
            return Err((
                at,
                format!(
                    "widens the contract {} ({}), which has no such field (its fields: {})",
                    c.name,
                    c.file,
                    c.fields.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        if (f.kind, f.secret) != (want.kind, want.secret) {
            return Err((
                at,
                format!(
                    "{}, the contract {} ({}) says {}",
                    shape(f),
                    c.name,
                    c.file,
                    shape(want)
                ),
            ));
        }
        if let Err(m) = super::owner::narrows(f.directory.as_ref(), want.directory.as_ref()) {
            return Err((
                format!("{at}.directory"),
                format!("{m} (the contract {}, {})", c.name, c.file),
            ));
        }
        if let (Some(asked), Some(promised)) = (f.min_length, want.min_length)
            && asked < promised
        {
            return Err((
                format!("{at}.min-length"),
                format!(
                    "{asked} widens the contract {} ({}), which promises at least {promised}; a consumer may only ask for more",
                    c.name, c.file
                ),
            ));
        }
    }
    Ok(())
}

fn shape(f: &Field) -> String {
    format!(
        "{}{}",
        f.kind.as_str(),
        if f.secret { " (secret)" } else { "" }
    )
}
