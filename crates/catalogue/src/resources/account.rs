//! Accounts a module makes: a group and a user, their definitions, checks and descriptions. A
//! name may read a setting (the `users` module's `${login}`), and is held to the account name
//! rule (`wire::valid_account_name`) here when literal and once filled in otherwise; `root` is
//! refused. A user's `authorized-keys` and `home` may read settings too.

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ResourceDef};
use crate::scope::Reading;
use crate::{CatalogueError, Template, rules};
use mesh_wire::path::Place;

/// A group the module makes (or finds, and leaves as found).
#[derive(Debug, Clone)]
pub struct GroupDef {
    pub name: Template,
    pub system: bool,
    pub gid: Option<u32>,
}

/// A user the module makes (or finds, and gives back what it changed on it).
#[derive(Debug, Clone)]
pub struct UserDef {
    pub name: Template,
    pub system: bool,
    pub uid: Option<u32>,
    pub home: Option<Template>,
    pub shell: Option<Template>,
    /// The whole list of its supplementary groups; none: left as the machine has them.
    pub groups: Option<Vec<String>>,
    pub authorized_keys: Option<Template>,
    pub remove_home: bool,
}

impl Definition for GroupDef {
    const KIND: &'static str = "group";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.group(i, value)
    }

    fn describe(&self) -> String {
        format!(
            "group {}{}: made if missing and then removed when undeclared; one found is left",
            self.name.source_text(),
            if self.system { " (system)" } else { "" }
        )
    }
}

impl Definition for UserDef {
    const KIND: &'static str = "user";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.user(i, value)
    }

    fn describe(&self) -> String {
        let mut said = vec![format!(
            "user {}{}",
            self.name.source_text(),
            if self.system { " (system)" } else { "" }
        )];
        if let Some(shell) = &self.shell {
            said.push(format!("shell {}", shell.source_text()));
        }
        if let Some(groups) = &self.groups {
            said.push(format!("groups [{}]", groups.join(",")));
        }
        if let Some(keys) = &self.authorized_keys {
            said.push(format!("authorized_keys from {}", keys.source_text()));
        }
        let home = if self.remove_home {
            "removed with its home"
        } else {
            "removed, its home kept"
        };
        format!(
            "{}: made if missing ({home}, when undeclared); one found is left, its shell, groups \
             and keys given back as found",
            said.join(", ")
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroup {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
    #[serde(default)]
    system: bool,
    gid: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawUser {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
    #[serde(default)]
    system: bool,
    uid: Option<u32>,
    home: Option<String>,
    shell: Option<String>,
    groups: Option<Vec<String>>,
    authorized_keys: Option<String>,
    #[serde(default)]
    remove_home: bool,
}

impl Parser<'_> {
    /// An account's name: a template; literal, it is held to the rule now.
    fn account_name(
        &mut self,
        i: usize,
        kind: &str,
        name: Option<String>,
    ) -> Result<Template, CatalogueError> {
        let field = format!("resources[{i}].name");
        let text = name.ok_or_else(|| self.invalid(&field, "missing".into()))?;
        let name = self.template(i, "name", &text, Reading::Plain)?;
        if name.references().is_empty() {
            check_account(&text).map_err(|m| self.invalid(&field, m.to_string()))?;
        }
        let key = format!("{kind} {text}");
        if self.units.contains(&key) {
            return Err(self.invalid(&field, format!("{text} is declared twice")));
        }
        self.units.push(key);
        Ok(name)
    }

    pub(super) fn group(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
        let g: RawGroup = self.raw(i, value)?;
        if let Some(why) = g
            .gid
            .and_then(|id| mesh_wire::refused_account_id("gid", id))
        {
            return Err(self.invalid(&format!("resources[{i}].gid"), why));
        }
        let name = self.account_name(i, "group", g.name)?;
        Ok(ResourceDef::from(GroupDef {
            name,
            system: g.system,
            gid: g.gid,
        }))
    }

    pub(super) fn user(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
        let u: RawUser = self.raw(i, value)?;
        let at = |field: &str| format!("resources[{i}].{field}");
        if let Some(why) = u
            .uid
            .and_then(|id| mesh_wire::refused_account_id("uid", id))
        {
            return Err(self.invalid(&at("uid"), why));
        }
        let name = self.account_name(i, "user", u.name)?;
        for group in u.groups.iter().flatten() {
            if !mesh_wire::valid_account_name(group) {
                return Err(self.invalid(
                    &at("groups"),
                    format!("{group:?} is not an account name ([a-z_][a-z0-9_-]*, ≤ 32)"),
                ));
            }
        }
        let shell = match u.shell {
            Some(text) => {
                let shell = self.template(i, "shell", &text, Reading::Plain)?;
                if shell.references().is_empty() && !mesh_wire::valid_shell(&text) {
                    return Err(
                        self.invalid(&at("shell"), format!("{text:?} is not an absolute path"))
                    );
                }
                Some(shell)
            }
            None => None,
        };
        let home = match u.home {
            Some(text) => {
                let home = self.template(i, "home", &text, Reading::Plain)?;
                rules::literal_path(&text, &home, Place::Machine)
                    .map_err(|m| self.invalid(&at("home"), m.to_string()))?;
                Some(home)
            }
            None => None,
        };
        let authorized_keys = match u.authorized_keys {
            Some(text) => Some(self.template(i, "authorized-keys", &text, Reading::Plain)?),
            None => None,
        };
        Ok(ResourceDef::from(UserDef {
            name,
            system: u.system,
            uid: u.uid,
            home,
            shell,
            groups: u.groups,
            authorized_keys,
            remove_home: u.remove_home,
        }))
    }
}

/// Why a name cannot be an account the mesh manages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    #[error(
        "{0:?} is not an account name: [a-z_][a-z0-9_-]*, at most {max} characters",
        max = mesh_wire::ACCOUNT_NAME_MAX
    )]
    NotAName(String),
    #[error("root is the machine's own: the mesh never manages it")]
    Root,
}

/// The account name rule, and root refused: the error says which.
pub fn check_account(name: &str) -> Result<(), AccountError> {
    if !mesh_wire::valid_account_name(name) {
        return Err(AccountError::NotAName(name.to_string()));
    }
    if name == "root" {
        return Err(AccountError::Root);
    }
    Ok(())
}
