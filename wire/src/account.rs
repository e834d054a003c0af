//! Accounts the mesh makes: a group and a user, their names held to one rule here, for the
//! module's check and the helper's alike.

use serde::{Deserialize, Serialize};

use crate::path::{Place, Refusal};

/// The longest account name: what `useradd` takes on Debian, and what `utmp` keeps.
pub const ACCOUNT_NAME_MAX: usize = 32;

/// The first uid (and gid) of a login account: below it are the system's own (Debian's
/// `/etc/login.defs`, `UID_MIN`). One found below it that the mesh did not make is never touched.
pub const FIRST_LOGIN_ID: u32 = 1000;

/// A group: made with `groupadd` when missing (removed when undeclared); one found is left as
/// found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSpec {
    pub name: String,
    #[serde(default)]
    pub system: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gid: Option<u32>,
}

/// A user: made with `useradd` when missing, its shell and supplementary groups set with
/// `usermod`, its `authorized_keys` written; what the mesh changed on it given back when
/// undeclared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserSpec {
    pub name: String,
    #[serde(default)]
    pub system: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// Its home; none: `/home/NAME` for a login account, none made for a system one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// Its supplementary groups, the whole list (`usermod -G`), sorted and without repeats;
    /// none: the mesh leaves them as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// The content of `HOME/.ssh/authorized_keys`; none: the file is not the mesh's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorized_keys: Option<String>,
    /// Undeclared, a user the mesh made goes with its home (`userdel -r`); by default the home
    /// is kept.
    #[serde(default)]
    pub remove_home: bool,
}

/// Whether `name` is an account name: `[a-z_][a-z0-9_-]*`, at most [`ACCOUNT_NAME_MAX`]
/// characters. Nothing a command line or a path could read as more than a name.
pub fn valid_account_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    name.len() <= ACCOUNT_NAME_MAX
        && (first.is_ascii_lowercase() || first == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// Whether `shell` can be a login shell in `/etc/passwd`: an absolute path on one line, without
/// the `:` that separates the file's fields.
pub fn valid_shell(shell: &str) -> bool {
    shell.starts_with('/') && !shell.chars().any(|c| c.is_control() || c == ':')
}

fn refuse_name(field: &str, name: &str) -> Result<(), Refusal> {
    if !valid_account_name(name) {
        return Err(Refusal {
            field: field.into(),
            value: name.into(),
            reason: format!(
                "an account name is [a-z_][a-z0-9_-]*, at most {ACCOUNT_NAME_MAX} characters"
            ),
        });
    }
    if name == "root" {
        return Err(Refusal {
            field: field.into(),
            value: name.into(),
            reason: "root is the machine's own: the mesh never manages it".into(),
        });
    }
    Ok(())
}

/// Why `id` cannot be a declared uid or gid (`what`: `uid` or `gid`), if it cannot: 0 is root's,
/// and 4294967295 and 65535 are `(uid_t) -1` and its 16-bit form, which the system takes for
/// "no id". One rule for `module check`, the plan and the helper.
pub fn refused_account_id(what: &str, id: u32) -> Option<String> {
    match id {
        0 => Some(format!("{what} 0 is root's")),
        65535 | u32::MAX => Some(format!(
            "{what} {id} is (uid_t) -1 or its 16-bit form, which the system takes for no id"
        )),
        _ => None,
    }
}

fn refuse_id(what: &str, id: Option<u32>) -> Result<(), Refusal> {
    match id.and_then(|id| Some((id, refused_account_id(what, id)?))) {
        Some((id, reason)) => Err(Refusal {
            field: what.into(),
            value: id.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

impl GroupSpec {
    /// Its name held to the rule; root's and the system's "no id" refused.
    pub fn check(&self) -> Result<(), Refusal> {
        refuse_name("name", &self.name)?;
        refuse_id("gid", self.gid)
    }
}

impl UserSpec {
    /// Its name and groups held to the rule, its shell one absolute path, uid 0 and root refused.
    pub fn check(&self) -> Result<(), Refusal> {
        refuse_name("name", &self.name)?;
        for group in self.groups.iter().flatten() {
            if !valid_account_name(group) {
                refuse_name("groups", group)?;
            }
        }
        refuse_id("uid", self.uid)?;
        if let Some(shell) = self.shell.as_ref().filter(|s| !valid_shell(s)) {
            return Err(Refusal {
                field: "shell".into(),
                value: shell.clone(),
                reason: "a shell is an absolute path on one line, without ':'".into(),
            });
        }
        Ok(())
    }

    /// Its home as the helper makes it: the declared one, else `/home/NAME`.
    pub fn home_or_default(&self) -> String {
        self.home
            .clone()
            .unwrap_or_else(|| format!("/home/{}", self.name))
    }
}

impl crate::SpecKind for GroupSpec {
    const KIND: &'static str = "group";

    fn at(&self) -> &str {
        &self.name
    }

    fn check_fields(&self) -> Result<(), Refusal> {
        self.check()
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        crate::named(&[
            ("system", old.system != self.system),
            ("gid", old.gid != self.gid),
        ])
    }

    fn plan_text(&self) -> String {
        format!(
            "group {}{}\n",
            self.name,
            self.gid.map(|id| format!(" gid {id}")).unwrap_or_default()
        )
    }

    fn removal(&self) -> String {
        format!("group {}: removed if the mesh made it", self.name)
    }
}

impl crate::SpecKind for UserSpec {
    const KIND: &'static str = "user";

    fn at(&self) -> &str {
        &self.name
    }

    fn paths(&self) -> Vec<(String, &str, Place)> {
        self.home
            .iter()
            .map(|h| ("home".into(), h.as_str(), Place::Machine))
            .collect()
    }

    fn check_fields(&self) -> Result<(), Refusal> {
        self.check()
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        crate::named(&[
            ("shell", old.shell != self.shell),
            ("groups", old.groups != self.groups),
            ("home", old.home != self.home),
            (
                "authorized-keys",
                old.authorized_keys != self.authorized_keys,
            ),
            ("remove-home", old.remove_home != self.remove_home),
            ("uid", old.uid != self.uid),
        ])
    }

    // one field a line, so that a diff names what moves
    fn plan_text(&self) -> String {
        let mut out = format!(
            "user {}{}\n",
            self.name,
            if self.system { " (system)" } else { "" }
        );
        if let Some(uid) = self.uid {
            out.push_str(&format!("uid: {uid}\n"));
        }
        out.push_str(&format!("home: {}\n", self.home_or_default()));
        if let Some(shell) = &self.shell {
            out.push_str(&format!("shell: {shell}\n"));
        }
        if let Some(groups) = &self.groups {
            out.push_str(&format!("groups: {}\n", groups.join(",")));
        }
        if let Some(keys) = &self.authorized_keys {
            out.push_str("authorized_keys:\n");
            out.extend(keys.lines().map(|k| format!("  {k}\n")));
        }
        out
    }

    fn removal(&self) -> String {
        format!(
            "user {}: removed if the mesh made it ({}), else its shell, groups and keys given \
             back as found",
            self.name,
            if self.remove_home {
                "with its home"
            } else {
                "its home kept"
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Spec;

    fn user(name: &str) -> UserSpec {
        UserSpec {
            name: name.into(),
            system: false,
            uid: None,
            home: None,
            shell: None,
            groups: None,
            authorized_keys: None,
            remove_home: false,
        }
    }

    #[test]
    fn an_account_name_is_lowercase_posix_and_at_most_32_characters() {
        for good in ["alice", "_svc", "a-b_c9", &"a".repeat(32)] {
            assert!(valid_account_name(good), "{good}");
        }
        for bad in [
            "",
            "Alice",
            "9lives",
            "-x",
            "a b",
            "a:b",
            "a/b",
            "../x",
            "a\nb",
            &"a".repeat(33),
        ] {
            assert!(!valid_account_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn root_uid_0_a_bad_group_and_a_relative_shell_are_refused() {
        assert!(user("alice").check().is_ok());
        assert_eq!(user("root").check().unwrap_err().field, "name");
        let mut u = user("alice");
        u.uid = Some(0);
        assert_eq!(u.check().unwrap_err().field, "uid");
        let mut u = user("alice");
        u.groups = Some(vec!["ops".into(), "Bad Group".into()]);
        assert_eq!(u.check().unwrap_err().field, "groups");
        let mut u = user("alice");
        u.shell = Some("bash".into());
        assert_eq!(u.check().unwrap_err().field, "shell");
        let g = GroupSpec {
            name: "root".into(),
            system: false,
            gid: None,
        };
        assert_eq!(g.check().unwrap_err().field, "name");
    }

    #[test]
    fn a_user_home_is_held_to_the_machine_path_rule() {
        let mut u = user("alice");
        u.home = Some("/var/lib/mesh/alice".into());
        assert_eq!(Spec::from(u).check().unwrap_err().field, "home");
        assert_eq!(user("alice").home_or_default(), "/home/alice");
    }
}
