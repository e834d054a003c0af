//! Keys merged into a shared JSON file: their definition, their values (every string a
//! template) and their check.

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ResourceDef, default_mode, parse_cost, root};
use crate::CatalogueError;
use crate::module::digest;
use crate::scope::Reading;
use crate::setting;
use crate::template::{Template, TemplateError};
use mesh_wire::Cost;

/// Keys the module owns in a shared JSON file.
#[derive(Debug, Clone)]
pub struct KeysDef {
    /// Absolute path of the JSON file.
    pub path: String,
    /// Owner, group and mode if the mesh has to create the file.
    pub owner: String,
    pub group: String,
    pub mode: u32,
    /// Each owned key (its path of object keys) and the value it gets, strings read as templates.
    pub keys: Vec<(Vec<String>, KeyValue)>,
    /// Digest of the keys as defined and the module's version.
    pub source: String,
    /// What a change costs when not from settings alone.
    pub cost: Cost,
    /// Units that read the file.
    pub units: Vec<String>,
    /// A change to it can cut the operator off: it is reverted unless confirmed over a new
    /// connection (`"confirm": true`).
    pub confirm: bool,
}

impl Definition for KeysDef {
    const KIND: &'static str = "keys";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.keys(i, value)
    }

    fn confirm(&self) -> bool {
        self.confirm
    }

    fn describe(&self) -> String {
        let keys: Vec<String> = self.keys.iter().map(|(p, _)| p.join(".")).collect();
        format!(
            "{} in {} (a shared file: other keys are left alone), costs {}{}",
            keys.join(", "),
            self.path,
            self.cost.as_str(),
            super::read_by(&self.units)
        )
    }
}

/// A value in a keys resource, with every string a template.
#[derive(Debug, Clone)]
pub enum KeyValue {
    /// A string: a lone `${name}` keeps the setting's type, anything else is text.
    Text(Template),
    /// A number, boolean or null, as written.
    Literal(Value),
    List(Vec<KeyValue>),
    Object(Vec<(String, KeyValue)>),
}

impl KeyValue {
    fn parse(value: &Value) -> Result<KeyValue, TemplateError> {
        Ok(match value {
            Value::String(s) => KeyValue::Text(Template::parse(s)?),
            Value::Array(items) => KeyValue::List(
                items
                    .iter()
                    .map(KeyValue::parse)
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => KeyValue::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), KeyValue::parse(v)?)))
                    .collect::<Result<_, TemplateError>>()?,
            ),
            other => KeyValue::Literal(other.clone()),
        })
    }

    /// Every setting the value reads.
    pub fn references(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            KeyValue::Text(t) => {
                for r in t.references() {
                    if !out.contains(&r) {
                        out.push(r);
                    }
                }
            }
            KeyValue::Literal(_) => {}
            KeyValue::List(items) => items.iter().for_each(|i| i.collect(out)),
            KeyValue::Object(fields) => fields.iter().for_each(|(_, v)| v.collect(out)),
        }
    }

    /// The value with every setting filled in; `lookup` answers each name it reads.
    pub fn render(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Value {
        match self {
            KeyValue::Text(t) => match t.lone_reference() {
                Some(name) => lookup(name).unwrap_or(Value::Null),
                None => Value::String(t.render(|name| {
                    lookup(name)
                        .map(|v| setting::as_text(&v))
                        .unwrap_or_default()
                })),
            },
            KeyValue::Literal(v) => v.clone(),
            KeyValue::List(items) => Value::Array(items.iter().map(|i| i.render(lookup)).collect()),
            KeyValue::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.render(lookup)))
                    .collect(),
            ),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKeys {
    #[allow(dead_code)]
    kind: String,
    path: Option<String>,
    #[serde(default = "root")]
    owner: String,
    #[serde(default = "root")]
    group: String,
    #[serde(default = "default_mode")]
    mode: String,
    keys: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    cost: Option<String>,
    #[serde(default)]
    units: Vec<String>,
    /// A change to it is reverted unless the operator confirms it over a new connection.
    #[serde(default)]
    confirm: bool,
}

impl Parser<'_> {
    pub(super) fn keys(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        let k: RawKeys = self.raw(i, value)?;
        let path = self.claim_path(i, k.path)?;
        if path.contains("${") {
            return Err(self.invalid(
                &at("path"),
                format!("{path:?}: a shared file's path is written as it is, without ${{…}}"),
            ));
        }
        let mode = self.parse_mode(i, "mode", &k.mode)?;
        let object = k.keys.filter(|o| !o.is_empty()).ok_or_else(|| {
            self.invalid(
                &at("keys"),
                "missing: an object of the keys the module writes into the file".into(),
            )
        })?;
        let canonical = Value::Object(object.clone()).to_string();
        let mut keys = Vec::new();
        flatten_keys(&mut Vec::new(), &object, &mut keys)
            .map_err(|m| self.invalid(&at("keys"), m.to_string()))?;
        for (key_path, v) in &keys {
            self.reads_declared(
                i,
                "keys",
                &key_path.join("."),
                v.references(),
                Reading::Plain,
            )?;
        }
        self.check_units(i, &k.units)?;
        let cost =
            parse_cost(k.cost.as_deref()).map_err(|m| self.invalid(&at("cost"), m.to_string()))?;
        let source = digest(&[
            self.module.as_bytes(),
            self.version.as_bytes(),
            canonical.as_bytes(),
        ]);
        Ok(ResourceDef::from(KeysDef {
            path,
            owner: k.owner,
            group: k.group,
            mode,
            keys,
            source,
            cost,
            units: k.units,
            confirm: k.confirm,
        }))
    }
}

/// A key whose value is refused: its template does not parse. Named by its dotted path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {why}")]
pub(super) struct KeyError {
    key: String,
    why: TemplateError,
}

/// Splits a keys object into the keys the module owns: an object is followed into, anything else
/// (a string, a list, a number) is one owned key. An empty object is owned whole.
fn flatten_keys(
    prefix: &mut Vec<String>,
    object: &serde_json::Map<String, Value>,
    out: &mut Vec<(Vec<String>, KeyValue)>,
) -> Result<(), KeyError> {
    for (k, v) in object {
        prefix.push(k.clone());
        match v {
            Value::Object(inner) if !inner.is_empty() => flatten_keys(prefix, inner, out)?,
            _ => out.push((
                prefix.clone(),
                KeyValue::parse(v).map_err(|why| KeyError {
                    key: prefix.join("."),
                    why,
                })?,
            )),
        }
        prefix.pop();
    }
    Ok(())
}
