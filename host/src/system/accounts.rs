//! The recording machine's accounts: what `useradd`, `usermod`, `userdel`, `groupadd` and
//! `groupdel` do to its model, for the arguments the helper gives them (`apply::user`,
//! `apply::group`), failing where the real commands would.

use super::recording::{Model, User};

/// The first id a login account gets, and the first below it a system one gets.
const FIRST_LOGIN: u32 = 1000;

/// Changes `model` as `program ARGS -- NAME` would change the machine; the error is what the
/// command would say (the recording machine names the command around it).
pub(super) fn apply(
    model: &mut Model,
    program: &str,
    args: &[String],
    name: &str,
) -> Result<(), String> {
    let flags = Flags::parse(args);
    match program {
        "groupadd" | "groupdel" => group(model, program, &flags, name),
        "useradd" | "usermod" | "userdel" => user(model, program, &flags, name),
        _ => Err("not an accounts command the recording machine knows".to_string()),
    }
}

/// `groupadd` or `groupdel`.
fn group(model: &mut Model, program: &str, flags: &Flags, name: &str) -> Result<(), String> {
    if program == "groupdel" {
        return match model.groups.remove(name) {
            Some(_) => Ok(()),
            None => Err("group does not exist".into()),
        };
    }
    if model.groups.contains_key(name) {
        return Err("group already exists".into());
    }
    let gid = match flags.value("--gid") {
        Some(gid) => gid.parse().map_err(|_| format!("bad gid {gid}"))?,
        None => free_id(model.groups.values().copied(), flags.has("--system")),
    };
    model.groups.insert(name.to_string(), gid);
    Ok(())
}

/// `useradd`, `usermod` or `userdel`.
fn user(model: &mut Model, program: &str, flags: &Flags, name: &str) -> Result<(), String> {
    match program {
        "usermod" => {
            let user = model.users.get_mut(name).ok_or("user does not exist")?;
            if let Some(shell) = flags.value("--shell") {
                user.shell = shell.to_string();
            }
            if flags.value("--groups").is_some() {
                user.groups = flags.groups();
            }
        }
        "userdel" => {
            let user = model.users.remove(name).ok_or("user does not exist")?;
            // its own group goes with it (USERGROUPS_ENAB)
            if model.groups.get(name) == Some(&user.gid) {
                model.groups.remove(name);
            }
        }
        _ => {
            if model.users.contains_key(name) {
                return Err("user already exists".into());
            }
            let uid = match flags.value("--uid") {
                Some(uid) => uid.parse().map_err(|_| format!("bad uid {uid}"))?,
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
                        .ok_or_else(|| format!("group {g} does not exist"))?,
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
