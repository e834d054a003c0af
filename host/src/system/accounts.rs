//! The recording machine's accounts: what `useradd`, `usermod`, `userdel`, `groupadd` and
//! `groupdel` do to its model, for the arguments the helper gives them (`apply::user`,
//! `apply::group`), failing where the real commands would.

use super::recording::{Model, User};

/// What the real command would refuse, said as it says it (the recording machine gives it as
/// the command's output, in a [`super::SystemError`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refused {
    UnknownCommand,
    NoGroup,
    GroupExists,
    NoUser,
    UserExists,
    /// `--uid` or `--gid` (which) given what is not a number.
    BadId(&'static str, String),
    /// `--gid GROUP` naming a group that is not there.
    NoSuchGroup(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::UnknownCommand => {
                write!(f, "not an accounts command the recording machine knows")
            }
            Refused::NoGroup => write!(f, "group does not exist"),
            Refused::GroupExists => write!(f, "group already exists"),
            Refused::NoUser => write!(f, "user does not exist"),
            Refused::UserExists => write!(f, "user already exists"),
            Refused::BadId(which, id) => write!(f, "bad {which} {id}"),
            Refused::NoSuchGroup(g) => write!(f, "group {g} does not exist"),
        }
    }
}

/// The first id a login account gets, and the first below it a system one gets.
const FIRST_LOGIN: u32 = 1000;

/// Changes `model` as `program ARGS -- NAME` would change the machine; the error is what the
/// command would say (the recording machine names the command around it).
pub(super) fn apply(
    model: &mut Model,
    program: &str,
    args: &[String],
    name: &str,
) -> Result<(), Refused> {
    let flags = Flags::parse(args);
    match program {
        "groupadd" | "groupdel" => group(model, program, &flags, name),
        "useradd" | "usermod" | "userdel" => user(model, program, &flags, name),
        _ => Err(Refused::UnknownCommand),
    }
}

/// `groupadd` or `groupdel`.
fn group(model: &mut Model, program: &str, flags: &Flags, name: &str) -> Result<(), Refused> {
    if program == "groupdel" {
        return match model.groups.remove(name) {
            Some(_) => Ok(()),
            None => Err(Refused::NoGroup),
        };
    }
    if model.groups.contains_key(name) {
        return Err(Refused::GroupExists);
    }
    let gid = match flags.value("--gid") {
        Some(gid) => gid
            .parse()
            .map_err(|_| Refused::BadId("gid", gid.to_string()))?,
        None => free_id(model.groups.values().copied(), flags.has("--system")),
    };
    model.groups.insert(name.to_string(), gid);
    Ok(())
}

/// `useradd`, `usermod` or `userdel`.
fn user(model: &mut Model, program: &str, flags: &Flags, name: &str) -> Result<(), Refused> {
    match program {
        "usermod" => {
            let user = model.users.get_mut(name).ok_or(Refused::NoUser)?;
            if let Some(shell) = flags.value("--shell") {
                user.shell = shell.to_string();
            }
            if flags.value("--groups").is_some() {
                user.groups = flags.groups();
            }
        }
        "userdel" => {
            let user = model.users.remove(name).ok_or(Refused::NoUser)?;
            // its own group goes with it (USERGROUPS_ENAB)
            if model.groups.get(name) == Some(&user.gid) {
                model.groups.remove(name);
            }
        }
        _ => {
            if model.users.contains_key(name) {
                return Err(Refused::UserExists);
            }
            let uid = match flags.value("--uid") {
                Some(uid) => uid
                    .parse()
                    .map_err(|_| Refused::BadId("uid", uid.to_string()))?,
                None => free_id(model.users.values().map(|u| u.uid), flags.has("--system")),
            };
            let gid = if flags.has("--user-group") {
                model.groups.insert(name.to_string(), uid);
                uid
            } else {
                match flags.value("--gid") {
                    Some(g) => *model
                        .groups
                        .get(g)
                        .ok_or_else(|| Refused::NoSuchGroup(g.to_string()))?,
                    None => 100,
                }
            };
            let home = flags
                .value("--home-dir")
                .map_or_else(|| format!("/home/{name}"), str::to_string);
            let shell = flags.value("--shell").unwrap_or("/bin/sh").to_string();
            let groups = flags.groups();
            let user = User {
                uid,
                gid,
                home,
                shell,
                groups,
            };
            model.users.insert(name.to_string(), user);
        }
    }
    Ok(())
}

/// The first id not taken: from [`FIRST_LOGIN`] up, or for a system account down from below it.
fn free_id(taken: impl Iterator<Item = u32>, system: bool) -> u32 {
    let taken: Vec<u32> = taken.collect();
    if system {
        (1..FIRST_LOGIN).rev().find(|id| !taken.contains(id))
    } else {
        (FIRST_LOGIN..u32::MAX).find(|id| !taken.contains(id))
    }
    .unwrap_or(FIRST_LOGIN)
}

/// An accounts command's arguments: flags, some with a value.
struct Flags<'a>(&'a [String]);

impl Flags<'_> {
    fn parse(args: &[String]) -> Flags<'_> {
        Flags(args)
    }

    fn has(&self, flag: &str) -> bool {
        self.0.iter().any(|a| a == flag)
    }

    fn value(&self, flag: &str) -> Option<&str> {
        let at = self.0.iter().position(|a| a == flag)?;
        self.0.get(at + 1).map(String::as_str)
    }

    fn groups(&self) -> Vec<String> {
        self.value("--groups")
            .map(|g| {
                g.split(',')
                    .filter(|g| !g.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}
