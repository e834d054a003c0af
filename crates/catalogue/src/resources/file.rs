//! A whole file from a shipped template: its definition and its check.

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ResourceDef, default_mode, parse_cost, root};
use crate::CatalogueError;
use crate::module::digest;
use crate::scope::Reading;
use crate::template::Template;
use mesh_wire::Cost;

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
    /// A command that checks the machine's configuration with the new content in place: each
    /// word may read settings (a checked file named from a setting), filled in as the file is.
    pub validate: Vec<Template>,
    /// How the helper tells that every setting the file gives is the one in force.
    pub effective: Option<mesh_wire::Effective>,
    /// It holds secrets: never shown in a plan or diff.
    pub secret: bool,
    /// A change to it can cut the operator off: it is reverted unless confirmed over a new
    /// connection (`"confirm": true`).
    pub confirm: bool,
}

impl Definition for FileDef {
    const KIND: &'static str = "file";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.file(i, value)
    }

    fn confirm(&self) -> bool {
        self.confirm
    }

    fn describe(&self) -> String {
        let mut check = if self.validate.is_empty() {
            String::new()
        } else {
            let words: Vec<String> = self.validate.iter().map(Template::source_text).collect();
            format!(", checked with `{}`", words.join(" "))
        };
        if let Some(e) = &self.effective {
            check.push_str(&format!(
                ", every setting it gives checked in force with `{}`",
                e.show.join(" ")
            ));
        }
        format!(
            "{}{} ({}:{} {:04o}) from {}, costs {}{}{check}",
            self.path.source_text(),
            if self.secret { " (secret)" } else { "" },
            self.owner,
            self.group,
            self.mode,
            self.template_name,
            self.cost.as_str(),
            super::read_by(&self.units)
        )
    }
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

impl Parser<'_> {
    pub(super) fn file(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
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
        let validate = f
            .validate
            .iter()
            .enumerate()
            .map(|(n, word)| self.template(i, &format!("validate[{n}]"), word, Reading::Plain))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(e) = &f.effective {
            for (n, word) in e
                .show
                .iter()
                .chain(&e.alone)
                .chain(&e.read_first)
                .enumerate()
            {
                self.literal(i, &format!("effective[{n}]"), word)?;
            }
        }
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
        let cost =
            parse_cost(f.cost.as_deref()).map_err(|m| self.invalid(&at("cost"), m.to_string()))?;
        let source = digest(&[self.module.as_bytes(), self.version.as_bytes(), bytes]);
        Ok(ResourceDef::from(FileDef {
            path,
            owner: f.owner,
            group: f.group,
            mode,
            template_name,
            template,
            source,
            cost,
            units: f.units,
            validate,
            effective: f.effective,
            secret: f.secret,
            confirm: f.confirm,
        }))
    }
}
