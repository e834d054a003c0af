//! The resources a module puts on a machine, as module.json defines them: each kind's definition,
//! how it is checked when the module is loaded (every error names the file and the field), and
//! how `mesh module show` describes it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::CatalogueError;
use super::module::digest;
use super::requirement::{Reading, Scope};
use super::rules;
use super::setting;
use super::template::Template;
use crate::wire::path::{self as wire_path, ModeOf, Place};
use crate::wire::{Cost, unit};

/// A resource as a module defines it (before settings are filled in).
#[derive(Debug, Clone)]
pub enum ResourceDef {
    /// A whole file from a shipped template.
    File(FileDef),
    /// Keys merged into a shared JSON file.
    Keys(KeysDef),
    /// An existing unit and the state it should be in.
    Service(ServiceDef),
    /// A package from the machine's package manager.
    Package(String),
    /// A unit the mesh creates and runs.
    Process(ProcessDef),
    /// A container run with the machine's Docker.
    Container(ContainerDef),
}

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
}

impl ResourceDef {
    /// The kind's name as module.json spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            ResourceDef::File(_) => "file",
            ResourceDef::Keys(_) => "keys",
            ResourceDef::Service(_) => "service",
            ResourceDef::Package(_) => "package",
            ResourceDef::Process(_) => "process",
            ResourceDef::Container(_) => "container",
        }
    }

    /// A change to it is reverted unless the operator confirms it over a new connection.
    pub fn confirm(&self) -> bool {
        match self {
            ResourceDef::File(f) => f.confirm,
            ResourceDef::Keys(k) => k.confirm,
            ResourceDef::Service(sv) => sv.confirm,
            ResourceDef::Package(_) | ResourceDef::Process(_) | ResourceDef::Container(_) => false,
        }
    }

    /// One line saying what it puts on a machine, for `mesh module show`.
    pub fn describe(&self) -> String {
        let read_by = |units: &[String]| {
            if units.is_empty() {
                String::new()
            } else {
                format!(", read by {}", units.join(", "))
            }
        };
        let said = match self {
            ResourceDef::File(f) => {
                let check = if f.validate.is_empty() {
                    String::new()
                } else {
                    format!(", checked with `{}`", f.validate.join(" "))
                };
                format!(
                    "{}{} ({}:{} {:04o}) from {}, costs {}{}{check}",
                    f.path.source_text(),
                    if f.secret { " (secret)" } else { "" },
                    f.owner,
                    f.group,
                    f.mode,
                    f.template_name,
                    f.cost.as_str(),
                    read_by(&f.units)
                )
            }
            ResourceDef::Keys(k) => {
                let keys: Vec<String> = k.keys.iter().map(|(p, _)| p.join(".")).collect();
                format!(
                    "{} in {} (a shared file: other keys are left alone), costs {}{}",
                    keys.join(", "),
                    k.path,
                    k.cost.as_str(),
                    read_by(&k.units)
                )
            }
            ResourceDef::Service(sv) => {
                let want = crate::plan::wanted_state(sv.running, sv.enabled);
                if want.is_empty() {
                    sv.unit.clone()
                } else {
                    format!("{} ({})", sv.unit, want.join(", "))
                }
            }
            ResourceDef::Package(name) => format!("{name} (left installed when undeclared)"),
            ResourceDef::Container(c) => {
                let mounts: Vec<String> = c
                    .mounts
                    .iter()
                    .map(|(source, target, _)| format!("{} → {target}", source.source_text()))
                    .collect();
                format!(
                    "{} from image {}, restart {}{}",
                    c.name
                        .as_deref()
                        .unwrap_or("(the instance's own container)"),
                    c.image.source_text(),
                    c.restart,
                    if mounts.is_empty() {
                        String::new()
                    } else {
                        format!(", mounts {}", mounts.join(", "))
                    }
                )
            }
            ResourceDef::Process(p) => format!(
                "{}: {} as {}, restart {}{}",
                p.name.as_deref().unwrap_or("(the instance's own unit)"),
                p.description,
                p.user,
                p.restart,
                if p.bundle.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", bundle {}",
                        p.bundle
                            .iter()
                            .map(|(path, _, _)| path.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ),
        };
        if self.confirm() {
            format!("{said}; a change is confirmed over a new connection, else reverted")
        } else {
            said
        }
    }
}

/// The resource kinds module.json may name, for messages.
pub(crate) const KINDS: &str = "file, keys, service, package, process, container";

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
}

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
    /// A change to it can cut the operator off: it is reverted unless confirmed over a new
    /// connection (`"confirm": true`).
    pub confirm: bool,
}

/// A file resource.
#[derive(Debug, Clone)]
pub struct FileDef {
    /// Absolute path on the machine (it may be in a required directory: `${data.path}/x`).
    pub path: Template,
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
    /// How the helper tells that every setting the file gives is the one in force.
    pub effective: Option<mesh_wire::Effective>,
    /// It holds secrets: never shown in a plan or diff.
    pub secret: bool,
    /// A change to it can cut the operator off: it is reverted unless confirmed over a new
    /// connection (`"confirm": true`).
    pub confirm: bool,
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
    /// Every setting it gives must be the one in force (`show`, `alone`, `read_first`).
    #[serde(default)]
    effective: Option<mesh_wire::Effective>,
    /// It holds secrets: mode 0600 or stricter, its content never shown.
    #[serde(default)]
    secret: bool,
    /// A change to it is reverted unless the operator confirms it over a new connection.
    #[serde(default)]
    confirm: bool,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPackage {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawService {
    #[allow(dead_code)]
    kind: String,
    unit: Option<String>,
    state: Option<String>,
    enabled: Option<bool>,
    /// A change to it is reverted unless the operator confirms it over a new connection.
    #[serde(default)]
    confirm: bool,
}

fn root() -> String {
    "root".to_string()
}
fn default_mode() -> String {
    "0644".to_string()
}

/// A command's words, an environment's variables (every string a template), and the names of the
/// variables that carry a secret.
type CommandAndEnvironment = (Vec<Template>, Vec<(String, Template)>, Vec<String>);

/// Checks the resources of one module, remembering what they claim (paths, units) so that no two
/// claim the same.
pub(super) struct Parser<'a> {
    /// module.json, for messages.
    pub(super) file: &'a str,
    pub(super) module: &'a str,
    pub(super) version: &'a str,
    /// What the module's templates may read.
    pub(super) scope: Scope<'a>,
    /// The module folder's other files.
    pub(super) shipped: &'a BTreeMap<String, Vec<u8>>,
    pub(super) paths: Vec<String>,
    pub(super) units: Vec<String>,
}

impl Parser<'_> {
    /// Checks `resources[i]`.
    pub(super) fn resource(
        &mut self,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match kind.as_str() {
            "file" => self.file(i, value),
            "keys" => self.keys(i, value),
            "service" => self.service(i, value),
            "directory" => Err(self.invalid(
                &format!("resources[{i}].kind"),
                "a definition names no host path: a directory is a host requirement \
                 ({\"name\": \"data\", \"kind\": \"host\", \"directory\": {\"owner\": …, \"mode\": …}}), \
                 read as ${data.path}"
                    .into(),
            )),
            "package" => self.package(i, value),
            "process" => self.process(i, value),
            "container" => self.container(i, value),
            "" => Err(self.invalid(
                &format!("resources[{i}].kind"),
                format!("missing: every resource says its kind ({KINDS})"),
            )),
            other => Err(self.invalid(
                &format!("resources[{i}].kind"),
                format!("{other:?} is not a resource kind this mesh knows ({KINDS})"),
            )),
        }
    }

    /// Reads `resources[i]` as its kind's fields; an unknown or mistyped field is named.
    fn raw<T: serde::de::DeserializeOwned>(
        &self,
        i: usize,
        value: Value,
    ) -> Result<T, CatalogueError> {
        serde_json::from_value(value)
            .map_err(|e| self.invalid(&format!("resources[{i}]"), e.to_string()))
    }

    fn invalid(&self, field: &str, message: String) -> CatalogueError {
        CatalogueError::Invalid {
            file: self.file.to_string(),
            field: field.to_string(),
            message,
        }
    }

    /// Refuses a template that reads what the module does not declare, or a secret where a
    /// secret may not go.
    fn reads_declared(
        &self,
        i: usize,
        field: &str,
        what: &str,
        refs: Vec<&str>,
        reading: Reading,
    ) -> Result<(), CatalogueError> {
        self.scope
            .check(refs, reading)
            .map_err(|m| self.invalid(&format!("resources[{i}].{field}"), format!("{what} {m}")))
    }

    /// A field that must be there and be well formed; `like` says what it should look like.
    fn required(
        &self,
        i: usize,
        field: &str,
        value: Option<String>,
        valid: impl Fn(&str) -> bool,
        like: &str,
    ) -> Result<String, CatalogueError> {
        let at = format!("resources[{i}].{field}");
        match value {
            None => Err(self.invalid(&at, "missing".into())),
            Some(v) if !valid(&v) => Err(self.invalid(&at, format!("{v:?} is not {like}"))),
            Some(v) => Ok(v),
        }
    }

    /// The optional name of a process or container: well formed, and not the name of another of
    /// the same kind in the module (the instance's unit or container is named from it).
    fn claim_name(
        &mut self,
        i: usize,
        kind: &str,
        name: Option<&str>,
    ) -> Result<(), CatalogueError> {
        let field = format!("resources[{i}].name");
        if let Some(n) = name
            && !setting::valid_name(n)
        {
            return Err(self.invalid(&field, "must be lower case letters, digits and -".into()));
        }
        let key = format!("{kind} {}", name.unwrap_or_default());
        if self.units.contains(&key) {
            return Err(self.invalid(
                &field,
                format!(
                    "another {kind} of the module has the name {:?}",
                    name.unwrap_or("(none)")
                ),
            ));
        }
        self.units.push(key);
        Ok(())
    }

    /// A shipped file of the module read as a template that reads only declared settings; with
    /// its bytes, for the resource's digest.
    fn shipped_template(
        &self,
        i: usize,
        field: &str,
        name: &str,
        reading: Reading,
    ) -> Result<(&[u8], Template), CatalogueError> {
        let at = format!("resources[{i}].{field}");
        let bytes = self.shipped.get(name).ok_or_else(|| {
            self.invalid(
                &at,
                format!("{name:?} is not a file in the module's folder"),
            )
        })?;
        let text = std::str::from_utf8(bytes)
            .map_err(|_| self.invalid(&at, format!("{name} is not UTF-8 text")))?;
        let template =
            Template::parse(text).map_err(|m| self.invalid(&at, format!("{name}, {m}")))?;
        self.reads_declared(i, field, name, template.references(), reading)?;
        Ok((bytes, template))
    }

    /// Unit names, each literal (`docker.service`) or read from requirements
    /// (`${me.instance}.service`, for a unit the module's own process makes).
    fn check_units(&self, i: usize, units: &[String]) -> Result<(), CatalogueError> {
        for (u, unit) in units.iter().enumerate() {
            if unit.contains("${") {
                self.template(i, &format!("units[{u}]"), unit, Reading::Plain)?;
            } else if !valid_unit(unit) {
                return Err(self.invalid(
                    &format!("resources[{i}].units[{u}]"),
                    format!("{unit:?} is not a systemd unit name like \"ssh.service\""),
                ));
            }
        }
        Ok(())
    }

    /// A path no other resource of the module claims, keeping the path rule as far as it is
    /// written (a template's filled-in parts are checked by the resolver).
    fn claim_path(&mut self, i: usize, path: Option<String>) -> Result<String, CatalogueError> {
        let field = format!("resources[{i}].path");
        let path = path.ok_or_else(|| self.invalid(&field, "missing".into()))?;
        let template = Template::parse(&path).map_err(|m| self.invalid(&field, m))?;
        rules::literal_path(&path, &template, Place::Machine)
            .map_err(|m| self.invalid(&field, m))?;
        if self.paths.contains(&path) {
            return Err(self.invalid(&field, format!("{path} is declared twice")));
        }
        self.paths.push(path.clone());
        Ok(path)
    }

    /// `resources[i].<field>`, an octal mode of a file the mesh may set.
    fn parse_mode(&self, i: usize, field: &str, mode: &str) -> Result<u32, CatalogueError> {
        rules::parse_mode(mode, ModeOf::File)
            .map_err(|m| self.invalid(&format!("resources[{i}].{field}"), m))
    }

    /// `resources[i].<field>`, a path on the machine read from a requirement (`${data.path}`):
    /// a definition names no host path of its own.
    fn host_path(&self, i: usize, field: &str, text: &str) -> Result<Template, CatalogueError> {
        if !text.starts_with("${") {
            return Err(self.invalid(
                &format!("resources[{i}].{field}"),
                format!(
                    "{text:?}: a definition names no host path; require a directory \
                     ({{\"name\": \"data\", \"kind\": \"host\", \"directory\": {{}}}}) and use \"${{data.path}}\""
                ),
            ));
        }
        let template = self.template(i, field, text, Reading::Plain)?;
        rules::literal_path(text, &template, Place::Machine)
            .map_err(|m| self.invalid(&format!("resources[{i}].{field}"), m))?;
        Ok(template)
    }

    fn file(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        let f: RawFile = self.raw(i, value)?;
        let path_text = self.claim_path(i, f.path)?;
        // a file may live in a directory the module requires: "${data.path}/auth.conf"
        let path = self.template(i, "path", &path_text, Reading::Plain)?;
        let mode = self.parse_mode(i, "mode", &f.mode)?;
        if f.secret && mode & 0o077 != 0 {
            return Err(self.invalid(
                &at("mode"),
                format!(
                    "{:?}: a secret file is readable by its owner only (0600 or 0400)",
                    f.mode
                ),
            ));
        }
        let reading = if f.secret {
            Reading::SecretFile
        } else {
            Reading::Plain
        };
        let template_name = f.template.ok_or_else(|| {
            self.invalid(
                &at("template"),
                "missing: name the shipped file the content comes from".into(),
            )
        })?;
        let (bytes, template) = self.shipped_template(i, "template", &template_name, reading)?;
        self.check_units(i, &f.units)?;
        if f.validate.first().is_some_and(|c| c.trim().is_empty()) {
            return Err(self.invalid(&at("validate"), "the command's first word is empty".into()));
        }
        if f.effective
            .as_ref()
            .is_some_and(|e| e.show.first().is_none_or(|c| c.trim().is_empty()) || f.secret)
        {
            return Err(self.invalid(
                &at("effective"),
                "names a command in `show` (its first word not empty), on a file that is not \
                 secret (its settings are compared in the clear)"
                    .into(),
            ));
        }
        let cost = parse_cost(f.cost.as_deref()).map_err(|m| self.invalid(&at("cost"), m))?;
        let source = digest(&[self.module.as_bytes(), self.version.as_bytes(), bytes]);
        Ok(ResourceDef::File(FileDef {
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
            effective: f.effective,
            secret: f.secret,
            confirm: f.confirm,
        }))
    }

    fn keys(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
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
            .map_err(|m| self.invalid(&at("keys"), m))?;
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
        let cost = parse_cost(k.cost.as_deref()).map_err(|m| self.invalid(&at("cost"), m))?;
        let source = digest(&[
            self.module.as_bytes(),
            self.version.as_bytes(),
            canonical.as_bytes(),
        ]);
        Ok(ResourceDef::Keys(KeysDef {
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

    fn service(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        let sv: RawService = self.raw(i, value)?;
        let unit = self.required(
            i,
            "unit",
            sv.unit,
            valid_unit,
            "a systemd unit name like \"ssh.service\"",
        )?;
        if self.units.contains(&unit) {
            return Err(self.invalid(&at("unit"), format!("{unit} is declared twice")));
        }
        self.units.push(unit.clone());
        let running = match sv.state.as_deref() {
            None => None,
            Some("running") => Some(true),
            Some("stopped") => Some(false),
            Some(other) => {
                return Err(self.invalid(
                    &at("state"),
                    format!("{other:?} is not a state; use running or stopped"),
                ));
            }
        };
        Ok(ResourceDef::Service(ServiceDef {
            unit,
            running,
            enabled: sv.enabled,
            confirm: sv.confirm,
        }))
    }

    fn package(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
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

    fn container(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
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
        Ok(ResourceDef::Container(ContainerDef {
            name: c.name,
            image,
            command,
            environment,
            secret_environment,
            mounts,
            ports,
            restart: c.restart,
        }))
    }

    /// A command's words and an environment, every string a template.
    fn command_and_environment(
        &self,
        i: usize,
        words: &[String],
        environment: &BTreeMap<String, String>,
        secret_environment: Option<&str>,
        newline: bool,
    ) -> Result<CommandAndEnvironment, CatalogueError> {
        let env_reading = match secret_environment {
            Some(why) if !why.trim().is_empty() => Reading::ExcusedEnvironment,
            _ => Reading::Plain,
        };
        // what is literal is checked now; what settings fill in, when the node is resolved
        for (w, word) in words.iter().enumerate() {
            let field = format!("command[{w}]");
            self.unit_rule(i, &field, unit::check_text(&field, word))?;
        }
        for (k, v) in environment {
            let field = format!("environment.{k}");
            self.unit_rule(i, &field, unit::check_env_name(k))?;
            self.unit_rule(i, &field, unit::check_env_value(k, v, newline))?;
        }
        let command = words
            .iter()
            .enumerate()
            .map(|(w, word)| self.template(i, &format!("command[{w}]"), word, Reading::Plain))
            .collect::<Result<_, _>>()?;
        let environment: Vec<(String, Template)> = environment
            .iter()
            .map(|(k, v)| {
                Ok((
                    k.clone(),
                    self.template(i, &format!("environment.{k}"), v, env_reading)?,
                ))
            })
            .collect::<Result<_, CatalogueError>>()?;
        let secret = environment
            .iter()
            .filter(|(_, t)| self.scope.reads_secret(&t.references()))
            .map(|(k, _)| k.clone())
            .collect();
        Ok((command, environment, secret))
    }

    /// A value that goes into a unit or an environment, checked by the rule the helper applies.
    fn unit_rule(
        &self,
        i: usize,
        field: &str,
        checked: Result<(), unit::UnitError>,
    ) -> Result<(), CatalogueError> {
        checked.map_err(|e| self.invalid(&format!("resources[{i}].{field}"), e.to_string()))
    }

    /// A string of module.json read as a template of declared settings.
    fn template(
        &self,
        i: usize,
        field: &str,
        text: &str,
        reading: Reading,
    ) -> Result<Template, CatalogueError> {
        let t = Template::parse(text)
            .map_err(|m| self.invalid(&format!("resources[{i}].{field}"), m))?;
        self.reads_declared(i, field, text, t.references(), reading)?;
        Ok(t)
    }

    fn process(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        let p: RawProcess = self.raw(i, value)?;
        self.claim_name(i, "process", p.name.as_deref())?;
        let description = p
            .description
            .filter(|d| !d.trim().is_empty())
            .ok_or_else(|| self.invalid(&at("description"), "missing: say what it runs".into()))?;
        let words = p.command.filter(|c| !c.is_empty()).ok_or_else(|| {
            self.invalid(
                &at("command"),
                "missing: the command and its arguments, as a list".into(),
            )
        })?;
        let (command, environment, secret_environment) = self.command_and_environment(
            i,
            &words,
            &p.environment,
            p.secret_environment.as_deref(),
            true,
        )?;
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
        Ok(ResourceDef::Process(ProcessDef {
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
        }))
    }
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

/// A cost as module.json spells it; none when not said.
pub(super) fn parse_cost(cost: Option<&str>) -> Result<Cost, String> {
    match cost {
        None | Some("none") => Ok(Cost::None),
        Some("reload") => Ok(Cost::Reload),
        Some("restart") => Ok(Cost::Restart),
        Some(other) => Err(format!(
            "{other:?} is not a cost; use none, reload or restart"
        )),
    }
}

/// Whether `unit` is a systemd unit name mesh handles.
pub fn valid_unit(unit: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    fn refused(resource: &str) -> String {
        let json = format!(
            r#"{{"name":"demo","version":"1","description":"A demo.",
               "settings":[{{"name":"word","type":"string","meaning":"A word.","default":"hi","cost":"restart"}}],
               "resources":[{resource}]}}"#
        );
        match super::super::module::parse(
            "demo/module.json",
            "demo",
            json.as_bytes(),
            &BTreeMap::new(),
            "test",
        ) {
            Ok(_) => panic!("accepted: {resource}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn confirm_is_taken_on_files_keys_and_services_and_sshd_asks_for_it() {
        let said = refused(
            r#"{"kind":"process","description":"d","command":["/bin/true"],"confirm":true}"#,
        );
        assert!(
            said.contains("resources[0]") && said.contains("confirm"),
            "{said}"
        );
        let catalogue = super::super::Catalogue::load(&[]).unwrap();
        let sshd = catalogue.module("sshd").unwrap();
        assert!(sshd.resources.iter().all(super::ResourceDef::confirm));
        let motd = catalogue.module("motd").unwrap();
        assert!(!motd.resources.iter().any(super::ResourceDef::confirm));
    }

    #[test]
    fn what_would_break_a_unit_file_is_refused_when_loaded_naming_the_field() {
        let process = |fields: &str| {
            format!(r#"{{"kind":"process","description":"d","command":["/bin/true"],{fields}}}"#)
        };
        for (resource, said) in [
            (
                r#"{"kind":"process","description":"x\nExecStartPre=/bin/evil","command":["/bin/true"]}"#.to_string(),
                "resources[0].description: description holds a control character (\\u{a})",
            ),
            (
                process(r#""user":"daemon\nUser=root""#),
                "resources[0].user: user holds a control character",
            ),
            (
                process(r#""user":"dae mon""#),
                "resources[0].user: user \"dae mon\" is not a user name or uid",
            ),
            (
                r#"{"kind":"process","description":"d","command":["/bin/echo","a\u0000b"]}"#.to_string(),
                "resources[0].command[1]: command[1] holds a control character (\\u{0})",
            ),
            (
                process(r#""environment":{"BAD-NAME":"${word}"}"#),
                "resources[0].environment.BAD-NAME: environment variable name \"BAD-NAME\" is not a name",
            ),
            (
                process(r#""environment":{"K":"a\u001bb"}"#),
                "resources[0].environment.K: environment.K holds a control character (\\u{1b})",
            ),
            (
                process(r#""restart":"sometimes""#),
                "resources[0].restart: restart \"sometimes\" is not a policy; use no, on-failure, always",
            ),
            (
                r#"{"kind":"container","image":"x","environment":{"K":"two\nlines"}}"#.to_string(),
                "resources[0].environment.K: environment.K spans several lines: Docker's env-file cannot carry",
            ),
        ] {
            let e = refused(&resource);
            assert!(e.contains(said), "{resource}\n{e}");
        }
    }
}
