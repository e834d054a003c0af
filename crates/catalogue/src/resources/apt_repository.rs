//! An apt repository the module adds: its definition, its check and its description. Every
//! field may read settings (a built-in module cannot know an operator's repository or key); the
//! key is a string (`"${key}"`) or a file of the module's folder (`key-file`), ASCII-armored.
//! Each field is checked again once filled in (`wire::AptRepositorySpec::check`), so a setting
//! cannot make a name leave its directory or a uri start a field of its own.

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ResourceDef};
use crate::scope::Reading;
use crate::{CatalogueError, Template};

/// A repository `name` at `uri` `suite` `components`, signed by `key`.
#[derive(Debug, Clone)]
pub struct AptRepositoryDef {
    pub name: Template,
    pub uri: Template,
    pub suite: Template,
    /// Words once filled in: `"main contrib"`, `"${components:words}"`; none for a flat suite.
    pub components: Template,
    /// The armored key, from module.json or from `key_file`.
    pub key: Template,
    /// The module's file the key comes from, if it does.
    pub key_file: Option<String>,
}

impl Definition for AptRepositoryDef {
    const KIND: &'static str = "apt-repository";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.apt_repository(i, value)
    }

    fn describe(&self) -> String {
        let components = self.components.source_text();
        let key = match &self.key_file {
            Some(file) => format!("the key in {file}"),
            None => format!("the key {}", self.key.source_text()),
        };
        format!(
            "repository {} at {} {}{} signed by {key} (written to /etc/apt/sources.list.d/\
             mesh-NAME.sources and /etc/apt/keyrings/mesh-NAME.asc, apt-get update once after \
             a change, before packages; what was there given back when undeclared)",
            self.name.source_text(),
            self.uri.source_text(),
            self.suite.source_text(),
            if components.is_empty() {
                String::new()
            } else {
                format!(" {components}")
            }
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawAptRepository {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
    uri: Option<String>,
    suite: Option<String>,
    #[serde(default)]
    components: Option<String>,
    key: Option<String>,
    key_file: Option<String>,
}

impl Parser<'_> {
    pub(super) fn apt_repository(
        &mut self,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        let r: RawAptRepository = self.raw(i, value)?;
        let at = |field: &str| format!("resources[{i}].{field}");
        let field = |name: &str, text: Option<String>, like: &str| {
            let text = text.ok_or_else(|| self.invalid(&at(name), format!("missing: {like}")))?;
            self.template(i, name, &text, Reading::Plain)
        };
        let name = field(
            "name",
            r.name,
            "the repository's name (its files are mesh-NAME.sources and mesh-NAME.asc)",
        )?;
        let uri = field("uri", r.uri, "where apt fetches it (https://…, file:/…)")?;
        let suite = field("suite", r.suite, "its suite (bookworm, or ./ when flat)")?;
        let components = field(
            "components",
            Some(r.components.unwrap_or_default()),
            "its components",
        )?;
        if name.references().is_empty() {
            let literal = name.source_text();
            if !mesh_wire::valid_apt_repository_name(&literal) {
                return Err(self.invalid(
                    &at("name"),
                    format!(
                        "{literal:?} is not a repository name (lower-case letters, digits, - \
                         and ., at most 64)"
                    ),
                ));
            }
        }
        let (key, key_file) = match (r.key, r.key_file) {
            (Some(text), None) => (self.template(i, "key", &text, Reading::Plain)?, None),
            (None, Some(file)) => {
                let (_, template) = self.shipped_template(i, "key-file", &file, Reading::Plain)?;
                (template, Some(file))
            }
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    &at("key"),
                    "give the key once: `key` or `key-file`, not both".into(),
                ));
            }
            (None, None) => {
                return Err(self.invalid(
                    &at("key"),
                    "missing: the armored key that signs it (`key`, which may read a setting, \
                     or `key-file`, a file of the module's folder); apt trusts it for this \
                     repository alone"
                        .into(),
                ));
            }
        };
        let claim = format!("apt-repository {}", name.source_text());
        if self.units.contains(&claim) {
            return Err(self.invalid(
                &at("name"),
                format!("{} is declared twice", name.source_text()),
            ));
        }
        self.units.push(claim);
        self.check_literal_repository(i, [&name, &uri, &suite, &components, &key], &key_file)?;
        Ok(ResourceDef::from(AptRepositoryDef {
            name,
            uri,
            suite,
            components,
            key,
            key_file,
        }))
    }
}

impl Parser<'_> {
    /// Literal fields (`name`, `uri`, `suite`, `components`, `key`, reading no setting) checked
    /// now by the rule the plan checks them by once filled in (`wire::AptRepositorySpec::check`).
    fn check_literal_repository(
        &self,
        i: usize,
        fields: [&Template; 5],
        key_file: &Option<String>,
    ) -> Result<(), CatalogueError> {
        let [
            Some(name),
            Some(uri),
            Some(suite),
            Some(components),
            Some(key),
        ] = fields.map(Template::literal)
        else {
            return Ok(());
        };
        let spec = mesh_wire::AptRepositorySpec {
            name,
            uri,
            suite,
            components: components.split_whitespace().map(String::from).collect(),
            key,
        };
        let Err(r) = spec.check() else {
            return Ok(());
        };
        let field = match (r.field.as_str(), key_file) {
            ("key", Some(_)) => "key-file",
            (field, _) => field,
        };
        Err(self.invalid(
            &format!("resources[{i}].{field}"),
            format!("{:?}: {}", r.value, r.reason),
        ))
    }
}
