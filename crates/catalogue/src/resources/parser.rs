//! What checking every kind of resource shares: reading a resource's fields, naming the file
//! and field in every error, and the claims (paths, unit and container names) no two resources
//! of a module may share.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{ResourceDef, valid_unit};
use crate::CatalogueError;
use crate::form::LIST_FORMS;
use crate::rules;
use crate::scope::{Reading, Scope};
use crate::setting;
use crate::setting::SettingType;
use crate::template::Template;
use mesh_wire::path::{ModeOf, Place};
use mesh_wire::unit;

/// A command's words, an environment's variables (every string a template), and the names of the
/// variables that carry a secret.
type CommandAndEnvironment = (Vec<Template>, Vec<(String, Template)>, Vec<String>);

/// Checks the resources of one module, remembering what they claim (paths, units) so that no two
/// claim the same.
pub(crate) struct Parser<'a> {
    /// module.json, for messages.
    pub(crate) file: &'a str,
    pub(crate) module: &'a str,
    pub(crate) version: &'a str,
    /// What the module's templates may read.
    pub(crate) scope: Scope<'a>,
    /// The module folder's other files.
    pub(crate) shipped: &'a BTreeMap<String, Vec<u8>>,
    pub(crate) paths: Vec<String>,
    pub(crate) units: Vec<String>,
}

impl Parser<'_> {
    /// Checks `resources[i]`.
    pub(crate) fn resource(
        &mut self,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(def) = super::parse_kind(self, &kind, i, value) {
            return def;
        }
        match kind.as_str() {
            "directory" => Err(self.invalid(
                &format!("resources[{i}].kind"),
                "a definition names no host path: a directory is a host requirement \
                 ({\"name\": \"data\", \"kind\": \"host\", \"directory\": {\"owner\": …, \"mode\": …}}), \
                 read as ${data.path}"
                    .into(),
            )),
            "" => Err(self.invalid(
                &format!("resources[{i}].kind"),
                format!("missing: every resource says its kind ({})", super::kinds()),
            )),
            other => Err(self.invalid(
                &format!("resources[{i}].kind"),
                format!("{other:?} is not a resource kind this mesh knows ({})", super::kinds()),
            )),
        }
    }

    /// Reads `resources[i]` as its kind's fields; an unknown or mistyped field is named.
    pub(super) fn raw<T: serde::de::DeserializeOwned>(
        &self,
        i: usize,
        value: Value,
    ) -> Result<T, CatalogueError> {
        serde_json::from_value(value)
            .map_err(|e| self.invalid(&format!("resources[{i}]"), e.to_string()))
    }

    pub(super) fn invalid(&self, field: &str, message: String) -> CatalogueError {
        CatalogueError::Invalid {
            file: self.file.to_string(),
            field: field.to_string(),
            message,
        }
    }

    /// Refuses a template that reads what the module does not declare, or a secret where a
    /// secret may not go.
    pub(super) fn reads_declared(
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

    /// A field that is sent as written, never rendered: a `${` in it would reach the machine as
    /// text, so it is refused (`$${` writes a literal `${` where templates are read, and is
    /// refused here too, as it would not be unescaped).
    pub(super) fn literal(&self, i: usize, field: &str, text: &str) -> Result<(), CatalogueError> {
        if text.contains("${") {
            return Err(self.invalid(
                &format!("resources[{i}].{field}"),
                format!(
                    "{text:?} holds `${{`, but {field} is sent as written, not rendered: say it without settings or requirements"
                ),
            ));
        }
        Ok(())
    }

    /// A field that must be there and be well formed; `like` says what it should look like.
    pub(super) fn required(
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
    pub(super) fn claim_name(
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
    pub(super) fn shipped_template(
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
        self.lists_have_forms(i, field, name, &template)?;
        Ok((bytes, template))
    }

    /// A list setting written into text needs a list form: the JSON it would be written as is
    /// never what a configuration file or a command line means. (An object is written as JSON,
    /// which some files do mean.)
    fn lists_have_forms(
        &self,
        i: usize,
        field: &str,
        what: &str,
        template: &Template,
    ) -> Result<(), CatalogueError> {
        for (name, line) in template.unformatted() {
            let Some(setting) = self.scope.settings.iter().find(|s| s.name == name) else {
                continue;
            };
            if setting.kind == SettingType::List {
                return Err(self.invalid(
                    &format!("resources[{i}].{field}"),
                    format!(
                        "{what}, line {line}: ${{{name}}} is a list written into text, where it \
                         would be JSON; write it with one of {LIST_FORMS}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Unit names, each literal (`docker.service`) or read from requirements
    /// (`${me.instance}.service`, for a unit the module's own process makes).
    pub(super) fn check_units(&self, i: usize, units: &[String]) -> Result<(), CatalogueError> {
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
    pub(super) fn claim_path(
        &mut self,
        i: usize,
        path: Option<String>,
    ) -> Result<String, CatalogueError> {
        let field = format!("resources[{i}].path");
        let path = path.ok_or_else(|| self.invalid(&field, "missing".into()))?;
        let template = Template::parse(&path).map_err(|m| self.invalid(&field, m.to_string()))?;
        rules::literal_path(&path, &template, Place::Machine)
            .map_err(|m| self.invalid(&field, m.to_string()))?;
        if self.paths.contains(&path) {
            return Err(self.invalid(&field, format!("{path} is declared twice")));
        }
        self.paths.push(path.clone());
        Ok(path)
    }

    /// `resources[i].<field>`, an octal mode of a file the mesh may set.
    pub(super) fn parse_mode(
        &self,
        i: usize,
        field: &str,
        mode: &str,
    ) -> Result<u32, CatalogueError> {
        rules::parse_mode(mode, ModeOf::File)
            .map_err(|m| self.invalid(&format!("resources[{i}].{field}"), m.to_string()))
    }

    /// `resources[i].<field>`, a path on the machine read from a requirement (`${data.path}`):
    /// a definition names no host path of its own.
    pub(super) fn host_path(
        &self,
        i: usize,
        field: &str,
        text: &str,
    ) -> Result<Template, CatalogueError> {
        if !text.starts_with("${") {
            return Err(self.invalid(
                &format!("resources[{i}].{field}"),
                format!(
                    "{text:?}: a definition names no host path; require a directory ({{\"name\": \"data\", \"kind\": \"host\", \"directory\": {{}}}}) and use \"${{data.path}}\""
                ),
            ));
        }
        let template = self.template(i, field, text, Reading::Plain)?;
        rules::literal_path(text, &template, Place::Machine)
            .map_err(|m| self.invalid(&format!("resources[{i}].{field}"), m.to_string()))?;
        Ok(template)
    }

    /// A unit the mesh writes (a process's, a timer's): its name claimed (a process and a timer
    /// both make `<instance>-<name>.service`), its description and its command's words there.
    pub(super) fn described_command(
        &mut self,
        i: usize,
        name: Option<&str>,
        description: Option<String>,
        command: Option<Vec<String>>,
    ) -> Result<(String, Vec<String>), CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        self.claim_name(i, "process", name)?;
        let description = description
            .filter(|d| !d.trim().is_empty())
            .ok_or_else(|| self.invalid(&at("description"), "missing: say what it runs".into()))?;
        let words = command.filter(|c| !c.is_empty()).ok_or_else(|| {
            self.invalid(
                &at("command"),
                "missing: the command and its arguments, as a list".into(),
            )
        })?;
        Ok((description, words))
    }

    /// A command's words and an environment, every string a template.
    pub(super) fn command_and_environment(
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
    pub(super) fn unit_rule(
        &self,
        i: usize,
        field: &str,
        checked: Result<(), unit::UnitError>,
    ) -> Result<(), CatalogueError> {
        checked.map_err(|e| self.invalid(&format!("resources[{i}].{field}"), e.to_string()))
    }

    /// A string of module.json read as a template of declared settings.
    pub(super) fn template(
        &self,
        i: usize,
        field: &str,
        text: &str,
        reading: Reading,
    ) -> Result<Template, CatalogueError> {
        let t = Template::parse(text)
            .map_err(|m| self.invalid(&format!("resources[{i}].{field}"), m.to_string()))?;
        self.reads_declared(i, field, text, t.references(), reading)?;
        self.lists_have_forms(i, field, text, &t)?;
        Ok(t)
    }
}
