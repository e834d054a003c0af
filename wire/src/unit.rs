//! What a value must be to reach a systemd unit or a process's environment: one rule, used by the
//! operator's parser (on literals), its resolver (on rendered values, before anything is sent) and
//! the helper (on what it receives, before anything is written).
//!
//! A unit file is line-based, so a control character in a field would end the line and start
//! another setting: they are refused, never escaped. Errors name the field and never print the
//! value (an environment value may be a secret).

use std::collections::BTreeMap;
use std::fmt;

use crate::{ContainerSpec, ProcessSpec};

/// systemd's `Restart=` policies a process may ask for.
pub const PROCESS_RESTARTS: [&str; 3] = ["no", "on-failure", "always"];

/// Docker's restart policies a container may ask for.
pub const CONTAINER_RESTARTS: [&str; 4] = ["no", "on-failure", "always", "unless-stopped"];

/// Why a value cannot go into a unit or an environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitError {
    /// A field holds a control character (a newline, a NUL, an escape…).
    Control { field: String, char: char },
    /// An environment variable's name is not a name.
    EnvName { name: String },
    /// A container's environment value spans lines: Docker's env-file cannot carry it.
    Multiline { name: String },
    /// A user name that is neither a name nor a uid.
    User { user: String },
    /// A restart policy outside the known set.
    Restart {
        restart: String,
        known: &'static [&'static str],
    },
    /// A unit-file field ends with a backslash: systemd would join the next line to it.
    Continued { field: String },
    /// A field that must say something is empty.
    Empty { field: String },
    /// A mount's directory holds a character Docker's `--mount` reads as its own syntax.
    Mount { field: String },
    /// A secret in the environment of a process that runs as an account other software shares.
    SharedUser { user: String },
    /// A unit's name (without its suffix) that is not one: it names files under
    /// /etc/systemd/system.
    UnitName { name: String },
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitError::Control { field, char } => write!(
                f,
                "{field} holds a control character ({}); a unit file is line-based, so newlines, \
                 NULs and other control characters are refused: remove it from the value",
                char.escape_unicode()
            ),
            UnitError::EnvName { name } => write!(
                f,
                "environment variable name {:?} is not a name: use letters, digits and _, not \
                 starting with a digit",
                name.escape_debug().to_string()
            ),
            UnitError::Multiline { name } => write!(
                f,
                "environment.{name} spans several lines: Docker's env-file cannot carry a \
                 multi-line value to a container; give it on one line or in a file"
            ),
            UnitError::User { user } => write!(
                f,
                "user {:?} is not a user name or uid: use letters, digits, _, . and -",
                user.escape_debug().to_string()
            ),
            UnitError::Restart { restart, known } => write!(
                f,
                "restart {:?} is not a policy; use {}",
                restart.escape_debug().to_string(),
                known.join(", ")
            ),
            UnitError::Continued { field } => write!(
                f,
                "{field} ends with a backslash, which a unit file reads as joining the next line \
                 to it: remove the trailing backslash"
            ),
            UnitError::Empty { field } => write!(f, "{field} is empty"),
            UnitError::UnitName { name } => write!(
                f,
                "{:?} is not a unit name: use letters, digits, _, - and @",
                name.escape_debug().to_string()
            ),
            UnitError::SharedUser { user } => write!(
                f,
                "user {user} is shared by other software on the machine, and every process of a \
                 user can read the environment of the others: a process that is given a secret \
                 in its environment runs as an account of its own"
            ),
            UnitError::Mount { field } => write!(
                f,
                "{field} holds a comma or a quote, which docker's --mount reads as the start of \
                 another option: name a directory without them"
            ),
        }
    }
}

impl std::error::Error for UnitError {}

/// A value written into a unit file: no control character.
pub fn check_text(field: &str, value: &str) -> Result<(), UnitError> {
    match value.chars().find(|c| c.is_control()) {
        Some(char) => Err(UnitError::Control {
            field: field.to_string(),
            char,
        }),
        None => Ok(()),
    }
}

/// A value that is a whole line of a unit file (`Description=`, `WorkingDirectory=`): no control
/// character, and no trailing backslash.
pub fn check_line(field: &str, value: &str) -> Result<(), UnitError> {
    check_text(field, value)?;
    if value.ends_with('\\') {
        return Err(UnitError::Continued {
            field: field.to_string(),
        });
    }
    Ok(())
}

/// An environment variable's name: what a shell and systemd accept.
pub fn check_env_name(name: &str) -> Result<(), UnitError> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(UnitError::EnvName {
            name: name.to_string(),
        })
    }
}

/// An environment variable's value: a newline (in a process's environment only) and a tab may
/// be in it; no other control character (a NUL cannot be in an environment at all).
pub fn check_env_value(name: &str, value: &str, newline: bool) -> Result<(), UnitError> {
    if !newline && value.contains('\n') {
        return Err(UnitError::Multiline {
            name: name.to_string(),
        });
    }
    match value
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        Some(char) => Err(UnitError::Control {
            field: format!("environment.{name}"),
            char,
        }),
        None => Ok(()),
    }
}

/// A user a process runs as: a name (checked on the machine by the helper) or a uid.
pub fn check_user(user: &str) -> Result<(), UnitError> {
    check_text("user", user)?;
    let ok = !user.is_empty()
        && user.len() <= 32
        && !user.starts_with('-')
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(UnitError::User {
            user: user.to_string(),
        })
    }
}

/// A restart policy from `known`.
pub fn check_restart(restart: &str, known: &'static [&'static str]) -> Result<(), UnitError> {
    if known.contains(&restart) {
        Ok(())
    } else {
        Err(UnitError::Restart {
            restart: restart.to_string(),
            known,
        })
    }
}

fn check_environment<'a>(
    environment: impl IntoIterator<Item = (&'a String, &'a String)>,
    newline: bool,
) -> Result<(), UnitError> {
    for (name, value) in environment {
        check_env_name(name)?;
        check_env_value(name, value, newline)?;
    }
    Ok(())
}

/// A unit's description (one line, not empty) and its command (a first word, no control
/// character in any), as a process and a timer write them.
pub(crate) fn check_description_and_command(
    description: &str,
    command: &[String],
) -> Result<(), UnitError> {
    if description.trim().is_empty() {
        return Err(UnitError::Empty {
            field: "description".into(),
        });
    }
    check_line("description", description)?;
    if command.first().is_none_or(|c| c.is_empty()) {
        return Err(UnitError::Empty {
            field: "command[0]".into(),
        });
    }
    for (i, word) in command.iter().enumerate() {
        check_text(&format!("command[{i}]"), word)?;
    }
    Ok(())
}

impl ProcessSpec {
    /// Every value that reaches its unit file or its environment, checked.
    pub fn check(&self) -> Result<(), UnitError> {
        check_description_and_command(&self.description, &self.command)?;
        check_user(&self.user)?;
        // a process's environment is readable by every process of its uid: nobody's is shared
        // by whatever else runs as nobody on the machine
        if !self.secret_environment.is_empty() && matches!(self.user.as_str(), "nobody" | "65534") {
            return Err(UnitError::SharedUser {
                user: self.user.clone(),
            });
        }
        if let Some(dir) = &self.working_directory {
            check_line("working-directory", dir)?;
        }
        check_restart(&self.restart, &PROCESS_RESTARTS)?;
        check_environment(&self.environment, true)
    }
}

impl ContainerSpec {
    /// Every value that reaches `docker run` or the container's environment, checked.
    pub fn check(&self) -> Result<(), UnitError> {
        check_text("image", &self.image)?;
        for (i, m) in self.mounts.iter().enumerate() {
            for (field, value) in [("source", &m.source), ("target", &m.target)] {
                if value.contains([',', '"']) {
                    return Err(UnitError::Mount {
                        field: format!("mounts[{i}].{field}"),
                    });
                }
            }
        }
        for a in &self.access {
            if a.path.contains([',', '"']) {
                return Err(UnitError::Mount {
                    field: format!("the operator's data {} ({})", a.name, a.path),
                });
            }
        }
        for (i, word) in self.command.iter().enumerate() {
            check_text(&format!("command[{i}]"), word)?;
        }
        check_restart(&self.restart, &CONTAINER_RESTARTS)?;
        check_environment(&self.environment, false)
    }
}

/// Environment variables as a plan shows them: a secret's value never.
pub(crate) fn environment_text(vars: &BTreeMap<String, String>, secret: &[String]) -> String {
    vars.iter()
        .map(|(k, v)| {
            if secret.contains(k) {
                // that it changed still shows: the change names the field "environment"
                format!("environment {k}=(secret: not shown)\n")
            } else {
                format!("environment {k}={v}\n")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_that_would_add_a_docker_option_is_refused() {
        let spec = crate::fixtures::container_mounting;
        assert!(spec("/srv/data").check().is_ok());
        let e = spec("/srv/comma,source=/var/lib/mesh").check().unwrap_err();
        assert!(
            e.to_string().starts_with("mounts[0].source holds a comma"),
            "{e}"
        );
        assert!(spec("/srv/\"x").check().is_err());
    }

    #[test]
    fn the_operators_data_is_bound_at_its_own_path_read_only_for_reading() {
        let mut spec = crate::fixtures::container_mounting("/srv/data");
        let access = |path: &str, write| crate::Access {
            name: "media".into(),
            path: path.into(),
            write,
        };
        spec.access = vec![access("/srv/media", false), access("/srv/up", true)];
        let binds = spec.binds();
        let binds: Vec<(&str, &str, bool)> = binds
            .iter()
            .map(|m| (m.source.as_str(), m.target.as_str(), m.read_only))
            .collect();
        assert_eq!(
            binds,
            [
                ("/srv/data", "/data", false),
                ("/srv/media", "/srv/media", true),
                ("/srv/up", "/srv/up", false)
            ]
        );
        assert!(spec.check().is_ok());
        spec.access = vec![access("/srv/a,readonly=false", false)];
        let e = spec.check().unwrap_err().to_string();
        assert!(e.starts_with("the operator's data media"), "{e}");
    }

    #[test]
    fn control_characters_are_refused_by_field() {
        assert!(check_text("description", "a web server, 100%").is_ok());
        let e = check_text("description", "x\nExecStartPre=/bin/evil").unwrap_err();
        assert_eq!(
            e,
            UnitError::Control {
                field: "description".into(),
                char: '\n'
            }
        );
        assert!(
            e.to_string()
                .starts_with("description holds a control character (\\u{a})")
        );
        assert!(check_text("user", "a\0b").is_err());
        assert!(check_text("command[1]", "\u{1b}[2J").is_err());
        assert!(check_text("command[1]", "ends\\").is_ok());
        assert_eq!(
            check_line("description", "ends\\"),
            Err(UnitError::Continued {
                field: "description".into()
            })
        );
    }

    #[test]
    fn environment_names_and_values() {
        for good in ["A", "_x", "DB_PASSWORD2"] {
            assert!(check_env_name(good).is_ok(), "{good}");
        }
        for bad in ["", "1A", "A-B", "A B", "A=B", "A\nB"] {
            assert!(check_env_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_env_value("K", "two\nlines\tand \"$quotes\\", true).is_ok());
        assert_eq!(
            check_env_value("K", "two\nlines", false),
            Err(UnitError::Multiline { name: "K".into() })
        );
        assert!(check_env_value("K", "nul\0", true).is_err());
        assert!(check_env_value("K", "cr\r", true).is_err());
        // the value is never in the message: it may be a secret
        let e = check_env_value("K", "s3cret\u{7}", true).unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }

    #[test]
    fn users_and_restarts() {
        for good in ["root", "www-data", "systemd-network", "1000", "a.b_c"] {
            assert!(check_user(good).is_ok(), "{good}");
        }
        for bad in ["", "-x", "a b", "a:b", "a/b", "a\nUser=root"] {
            assert!(check_user(bad).is_err(), "{bad:?}");
        }
        assert!(check_restart("always", &PROCESS_RESTARTS).is_ok());
        assert!(check_restart("unless-stopped", &PROCESS_RESTARTS).is_err());
        assert!(check_restart("unless-stopped", &CONTAINER_RESTARTS).is_ok());
    }

    #[test]
    fn a_secret_never_goes_to_a_process_of_a_shared_account() {
        let spec = |user: &str, secret: bool| crate::ProcessSpec {
            unit: "a-w.service".into(),
            description: "a worker".into(),
            command: vec!["/bin/true".into()],
            user: user.into(),
            environment: [("PASSWORD".to_string(), "s3cret".to_string())].into(),
            secret_environment: if secret {
                vec!["PASSWORD".into()]
            } else {
                vec![]
            },
            sealed_environment: Default::default(),
            working_directory: None,
            restart: "no".into(),
            bundle_dir: "/var/lib/mesh/bundles/a-w".into(),
            bundle: vec![],
            access: vec![],
            ready: None,
        };
        assert!(spec("nobody", false).check().is_ok());
        assert!(spec("kv", true).check().is_ok());
        for shared in ["nobody", "65534"] {
            let e = spec(shared, true).check().unwrap_err();
            assert!(e.to_string().contains("an account of its own"), "{e}");
        }
    }
}
