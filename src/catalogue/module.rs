//! A module definition (`catalogue/<module>/module.json` and the files it ships), parsed and
//! checked so that every error names the file and the field.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::CatalogueError;
use super::setting::{self, Setting, SettingType};
use super::template::Template;
use crate::wire::Cost;

/// A module: identity, declared settings, and the resources it puts on a machine.
#[derive(Debug, Clone)]
pub struct Module {
    /// Its name, also its folder's name.
    pub name: String,
    /// Its version; a new version's changed content costs what its files declare.
    pub version: String,
    /// One sentence of what it is for.
    pub description: String,
    /// Every setting it takes, in the order declared.
    pub settings: Vec<Setting>,
    /// What it puts on a machine.
    pub resources: Vec<ResourceDef>,
    /// Where it was loaded from: `built-in` or a folder.
    pub origin: String,
}

/// A resource as a module defines it (before settings are filled in).
#[derive(Debug, Clone)]
pub enum ResourceDef {
    /// A whole file from a shipped template.
    File(FileDef),
    /// Keys merged into a shared JSON file.
    Keys(KeysDef),
    /// An existing unit and the state it should be in.
    Service(ServiceDef),
}

/// The resource kinds module.json may name, for messages.
pub(crate) const KINDS: &str = "file, keys, service";

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
    fn parse(value: &Value) -> Result<KeyValue, String> {
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
                    .collect::<Result<_, String>>()?,
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

/// A unit the module wants in a state.
#[derive(Debug, Clone)]
pub struct ServiceDef {
    /// The unit's name, e.g. `docker.service`.
    pub unit: String,
    /// `Some(true)` running, `Some(false)` stopped, `None` left as it is.
    pub running: Option<bool>,
    /// Enabled at boot, disabled, or left as it is.
    pub enabled: Option<bool>,
}

/// A file resource.
#[derive(Debug, Clone)]
pub struct FileDef {
    /// Absolute path on the machine.
    pub path: String,
    /// Owner name (or uid).
    pub owner: String,
    /// Group name (or gid).
    pub group: String,
    /// Permission bits.
    pub mode: u32,
    /// The shipped file the content comes from.
    pub template_name: String,
    /// The parsed template.
    pub template: Template,
    /// Digest of the template's bytes and the module's version.
    pub source: String,
    /// What a change costs when not from settings alone.
    pub cost: Cost,
    /// Units that read the file.
    pub units: Vec<String>,
    /// A command that checks the machine's configuration with the new content in place.
    pub validate: Vec<String>,
}

impl Module {
    /// The declared setting called `name`.
    pub fn setting(&self, name: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.name == name)
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
    resources: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetting {
    name: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    meaning: Option<String>,
    default: Option<Value>,
    cost: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[allow(dead_code)]
    kind: String,
    path: Option<String>,
    #[serde(default = "root")]
    owner: String,
    #[serde(default = "root")]
    group: String,
    #[serde(default = "default_mode")]
    mode: String,
    template: Option<String>,
    #[serde(default)]
    cost: Option<String>,
    #[serde(default)]
    units: Vec<String>,
    #[serde(default)]
    validate: Vec<String>,
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawService {
    #[allow(dead_code)]
    kind: String,
    unit: Option<String>,
    state: Option<String>,
    enabled: Option<bool>,
}

fn root() -> String {
    "root".to_string()
}
fn default_mode() -> String {
    "0644".to_string()
}

/// Parses one module: `file` names module.json in messages, `dir_name` is its folder's name and
/// `shipped` the other files of the folder (path relative to it → bytes).
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
    let name = raw.name.ok_or_else(|| invalid("name", "missing".into()))?;
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
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| invalid("version", "missing".into()))?;
    let description = raw
        .description
        .filter(|d| !d.trim().is_empty())
        .ok_or_else(|| {
            invalid(
                "description",
                "missing: say in one sentence what the module is for".into(),
            )
        })?;

    let mut settings: Vec<Setting> = Vec::new();
    for (i, s) in raw.settings.into_iter().enumerate() {
        let at = |field: &str| match &s.name {
            Some(n) => format!("settings[{i}] ({n}).{field}"),
            None => format!("settings[{i}].{field}"),
        };
        let sname = s
            .name
            .clone()
            .ok_or_else(|| invalid(&at("name"), "missing".into()))?;
        if !setting::valid_name(&sname) {
            return Err(invalid(
                &at("name"),
                "must be lower case letters, digits and -".into(),
            ));
        }
        if settings.iter().any(|d| d.name == sname) {
            return Err(invalid(&at("name"), "declared twice".into()));
        }
        let types = SettingType::ALL.map(SettingType::as_str).join(", ");
        let kind = match &s.kind {
            None => {
                return Err(invalid(
                    &at("type"),
                    format!("missing: every setting declares its type ({types})"),
                ));
            }
            Some(k) => SettingType::parse(k).ok_or_else(|| {
                invalid(
                    &at("type"),
                    format!("{k:?} is not a type; use one of {types}"),
                )
            })?,
        };
        let meaning = s
            .meaning
            .clone()
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| {
                invalid(
                    &at("meaning"),
                    "missing: every setting says in one sentence what it means".into(),
                )
            })?;
        if let Some(d) = &s.default
            && !kind.admits(d)
        {
            return Err(invalid(
                &at("default"),
                format!("{d} is not {}", kind.expected()),
            ));
        }
        let cost = parse_cost(s.cost.as_deref()).map_err(|m| invalid(&at("cost"), m))?;
        settings.push(Setting {
            name: sname,
            kind,
            meaning,
            default: s.default,
            cost,
        });
    }

    let mut resources = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    let mut units_seen: Vec<String> = Vec::new();
    for (i, value) in raw.resources.into_iter().enumerate() {
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let at = |field: &str| format!("resources[{i}].{field}");
        let whole = format!("resources[{i}]");
        let reads_declared = |field: &str, what: &str, refs: Vec<&str>| {
            for r in refs {
                if !settings.iter().any(|s| s.name == r) {
                    let names = settings
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(invalid(
                        &at(field),
                        format!(
                            "{what} reads ${{{r}}}, which the module does not declare (declared: {names})"
                        ),
                    ));
                }
            }
            Ok(())
        };
        let check_units = |units: &[String]| {
            for (u, unit) in units.iter().enumerate() {
                if !valid_unit(unit) {
                    return Err(invalid(
                        &at(&format!("units[{u}]")),
                        format!("{unit:?} is not a systemd unit name like \"ssh.service\""),
                    ));
                }
            }
            Ok(())
        };
        let mut claim_path = |path: Option<String>| {
            let path = path.ok_or_else(|| invalid(&at("path"), "missing".into()))?;
            if !path.starts_with('/') || path.split('/').any(|c| c == "..") || path.ends_with('/') {
                return Err(invalid(
                    &at("path"),
                    format!("{path:?} must be an absolute path to a file, with no `..`"),
                ));
            }
            if paths.contains(&path) {
                return Err(invalid(&at("path"), format!("{path} is declared twice")));
            }
            paths.push(path.clone());
            Ok(path)
        };
        let parse_mode = |mode: &str| {
            u32::from_str_radix(mode.trim_start_matches("0o"), 8)
                .ok()
                .filter(|m| *m <= 0o7777)
                .ok_or_else(|| {
                    invalid(
                        &at("mode"),
                        format!("{mode:?} is not an octal mode like \"0644\""),
                    )
                })
        };
        match kind.as_str() {
            "file" => {
                let f: RawFile =
                    serde_json::from_value(value).map_err(|e| invalid(&whole, e.to_string()))?;
                let path = claim_path(f.path)?;
                let mode = parse_mode(&f.mode)?;
                let template_name = f.template.ok_or_else(|| {
                    invalid(
                        &at("template"),
                        "missing: name the shipped file the content comes from".into(),
                    )
                })?;
                let bytes = shipped.get(&template_name).ok_or_else(|| {
                    invalid(
                        &at("template"),
                        format!("{template_name:?} is not a file in the module's folder"),
                    )
                })?;
                let text = std::str::from_utf8(bytes).map_err(|_| {
                    invalid(
                        &at("template"),
                        format!("{template_name} is not UTF-8 text"),
                    )
                })?;
                let template = Template::parse(text)
                    .map_err(|m| invalid(&at("template"), format!("{template_name}, {m}")))?;
                reads_declared("template", &template_name, template.references())?;
                check_units(&f.units)?;
                if f.validate.first().is_some_and(|c| c.trim().is_empty()) {
                    return Err(invalid(
                        &at("validate"),
                        "the command's first word is empty".into(),
                    ));
                }
                let cost = parse_cost(f.cost.as_deref()).map_err(|m| invalid(&at("cost"), m))?;
                let source = digest(&[name.as_bytes(), version.as_bytes(), bytes]);
                resources.push(ResourceDef::File(FileDef {
                    path,
                    owner: f.owner,
                    group: f.group,
                    mode,
                    template_name,
                    template,
                    source,
                    cost,
                    units: f.units,
                    validate: f.validate,
                }));
            }
            "keys" => {
                let k: RawKeys =
                    serde_json::from_value(value).map_err(|e| invalid(&whole, e.to_string()))?;
                let path = claim_path(k.path)?;
                let mode = parse_mode(&k.mode)?;
                let object = k.keys.filter(|o| !o.is_empty()).ok_or_else(|| {
                    invalid(
                        &at("keys"),
                        "missing: an object of the keys the module writes into the file".into(),
                    )
                })?;
                let canonical = Value::Object(object.clone()).to_string();
                let mut keys = Vec::new();
                flatten_keys(&mut Vec::new(), &object, &mut keys)
                    .map_err(|m| invalid(&at("keys"), m))?;
                for (key_path, v) in &keys {
                    reads_declared("keys", &key_path.join("."), v.references())?;
                }
                check_units(&k.units)?;
                let cost = parse_cost(k.cost.as_deref()).map_err(|m| invalid(&at("cost"), m))?;
                let source = digest(&[name.as_bytes(), version.as_bytes(), canonical.as_bytes()]);
                resources.push(ResourceDef::Keys(KeysDef {
                    path,
                    owner: k.owner,
                    group: k.group,
                    mode,
                    keys,
                    source,
                    cost,
                    units: k.units,
                }));
            }
            "service" => {
                let sv: RawService =
                    serde_json::from_value(value).map_err(|e| invalid(&whole, e.to_string()))?;
                let unit = sv
                    .unit
                    .ok_or_else(|| invalid(&at("unit"), "missing".into()))?;
                if !valid_unit(&unit) {
                    return Err(invalid(
                        &at("unit"),
                        format!("{unit:?} is not a systemd unit name like \"ssh.service\""),
                    ));
                }
                if units_seen.contains(&unit) {
                    return Err(invalid(&at("unit"), format!("{unit} is declared twice")));
                }
                units_seen.push(unit.clone());
                let running = match sv.state.as_deref() {
                    None => None,
                    Some("running") => Some(true),
                    Some("stopped") => Some(false),
                    Some(other) => {
                        return Err(invalid(
                            &at("state"),
                            format!("{other:?} is not a state; use running or stopped"),
                        ));
                    }
                };
                resources.push(ResourceDef::Service(ServiceDef {
                    unit,
                    running,
                    enabled: sv.enabled,
                }));
            }
            "" => {
                return Err(invalid(
                    &at("kind"),
                    format!("missing: every resource says its kind ({KINDS})"),
                ));
            }
            other => {
                return Err(invalid(
                    &at("kind"),
                    format!("{other:?} is not a resource kind this mesh knows ({KINDS})"),
                ));
            }
        }
    }
    Ok(Module {
        name,
        version,
        description,
        settings,
        resources,
        origin: origin.to_string(),
    })
}

/// Splits a keys object into the keys the module owns: an object is followed into, anything else
/// (a string, a list, a number) is one owned key. An empty object is owned whole.
fn flatten_keys(
    prefix: &mut Vec<String>,
    object: &serde_json::Map<String, Value>,
    out: &mut Vec<(Vec<String>, KeyValue)>,
) -> Result<(), String> {
    for (k, v) in object {
        prefix.push(k.clone());
        match v {
            Value::Object(inner) if !inner.is_empty() => flatten_keys(prefix, inner, out)?,
            _ => out.push((
                prefix.clone(),
                KeyValue::parse(v).map_err(|m| format!("{}: {m}", prefix.join(".")))?,
            )),
        }
        prefix.pop();
    }
    Ok(())
}

fn parse_cost(cost: Option<&str>) -> Result<Cost, String> {
    match cost {
        None | Some("none") => Ok(Cost::None),
        Some("reload") => Ok(Cost::Reload),
        Some("restart") => Ok(Cost::Restart),
        Some(other) => Err(format!(
            "{other:?} is not a cost; use none, reload or restart"
        )),
    }
}

fn valid_unit(unit: &str) -> bool {
    let Some((base, suffix)) = unit.rsplit_once('.') else {
        return false;
    };
    !base.is_empty()
        && matches!(
            suffix,
            "service" | "socket" | "timer" | "path" | "target" | "mount"
        )
        && base
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@:".contains(c))
}

/// Lower-case hex sha256 over the parts, each length-prefixed so no two splits collide.
pub(crate) fn digest(parts: &[&[u8]]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(json: &str) -> Result<Module, CatalogueError> {
        let mut shipped = BTreeMap::new();
        shipped.insert("t.txt".to_string(), b"hello ${greeting}\n".to_vec());
        parse(
            "demo/module.json",
            "demo",
            json.as_bytes(),
            &shipped,
            "test",
        )
    }

    fn err(json: &str) -> String {
        match parse_str(json) {
            Ok(_) => panic!("accepted: {json}"),
            Err(e) => e.to_string(),
        }
    }

    const GOOD: &str = r#"{"name":"demo","version":"1","description":"A demo.",
        "settings":[{"name":"greeting","type":"string","meaning":"What to say.","default":"hi","cost":"reload"}],
        "resources":[{"kind":"file","path":"/etc/demo","template":"t.txt","units":["demo.service"]}]}"#;

    #[test]
    fn a_good_module_parses() {
        let m = parse_str(GOOD).unwrap();
        assert_eq!(m.settings[0].cost, Cost::Reload);
        assert_eq!(m.resources.len(), 1);
    }

    #[test]
    fn a_setting_without_a_type_is_refused_naming_file_and_field() {
        let e = err(&GOOD.replace(r#""type":"string","#, ""));
        assert!(
            e.starts_with("demo/module.json: settings[0] (greeting).type: missing"),
            "{e}"
        );
    }

    #[test]
    fn a_setting_without_a_meaning_is_refused() {
        let e = err(&GOOD.replace(r#""meaning":"What to say.","#, ""));
        assert!(e.contains("settings[0] (greeting).meaning: missing"), "{e}");
    }

    #[test]
    fn a_default_of_the_wrong_type_is_refused() {
        let e = err(&GOOD.replace(r#""default":"hi""#, r#""default":3"#));
        assert!(e.contains("(greeting).default: 3 is not a string"), "{e}");
    }

    #[test]
    fn an_unknown_field_is_refused_by_name() {
        let e = err(&GOOD.replace(r#""version":"1","#, r#""version":"1","colour":"red","#));
        assert!(
            e.contains("demo/module.json") && e.contains("colour"),
            "{e}"
        );
    }

    #[test]
    fn a_template_reading_an_undeclared_setting_is_refused() {
        let e = err(&GOOD.replace(r#""name":"greeting""#, r#""name":"salute""#));
        assert!(
            e.contains("resources[0].template: t.txt reads ${greeting}"),
            "{e}"
        );
    }

    #[test]
    fn bad_paths_modes_kinds_and_costs_are_refused() {
        assert!(err(&GOOD.replace("/etc/demo", "etc/demo")).contains("resources[0].path"));
        assert!(err(&GOOD.replace("/etc/demo", "/etc/../x")).contains("resources[0].path"));
        assert!(
            err(&GOOD.replace(
                r#""template":"t.txt""#,
                r#""template":"t.txt","mode":"999""#
            ))
            .contains("resources[0].mode")
        );
        assert!(
            err(&GOOD.replace(r#""kind":"file""#, r#""kind":"symlink""#))
                .contains("resources[0].kind")
        );
        assert!(
            err(&GOOD.replace(r#""cost":"reload""#, r#""cost":"reboot""#))
                .contains("(greeting).cost")
        );
        assert!(
            err(&GOOD.replace(r#""name":"demo""#, r#""name":"other""#))
                .contains("name: \"other\" differs")
        );
    }

    #[test]
    fn keys_and_services_are_checked_when_loaded() {
        let with = |resource: &str| {
            GOOD.replace(
                r#"{"kind":"file","path":"/etc/demo","template":"t.txt","units":["demo.service"]}"#,
                resource,
            )
        };
        let keys = parse_str(&with(
            r#"{"kind":"keys","path":"/etc/d.json","keys":{"a":{"b":"${greeting}","c":1},"d":[]}}"#,
        ))
        .unwrap();
        let ResourceDef::Keys(k) = &keys.resources[0] else {
            panic!("not keys")
        };
        let owned: Vec<String> = k.keys.iter().map(|(p, _)| p.join(".")).collect();
        assert_eq!(owned, vec!["a.b", "a.c", "d"]);
        assert!(
            err(&with(
                r#"{"kind":"keys","path":"/etc/d.json","keys":{"a":"${nope}"}}"#
            ))
            .contains("resources[0].keys: a reads ${nope}, which the module does not declare")
        );
        assert!(
            err(&with(r#"{"kind":"keys","path":"/etc/d.json","keys":{}}"#))
                .contains("resources[0].keys: missing")
        );
        assert!(
            err(&with(
                r#"{"kind":"service","unit":"docker.service","state":"paused"}"#
            ))
            .contains("resources[0].state: \"paused\" is not a state")
        );
        assert!(
            err(&with(r#"{"kind":"service","unit":"docker"}"#))
                .contains("resources[0].unit: \"docker\" is not a systemd unit name")
        );
    }

    #[test]
    fn invalid_json_names_the_file() {
        let e = err("{ not json");
        assert!(e.starts_with("demo/module.json: not valid JSON"), "{e}");
    }
}
