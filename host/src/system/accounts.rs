//! The recording machine's accounts: what `useradd`, `usermod`, `userdel`, `groupadd` and
//! `groupdel` do to its model, for the arguments the helper gives them (`apply::user`,
//! `apply::group`), failing where the real commands would.

use super::recording::{Model, User};

/// The first id a login account gets, and the first below it a system one gets.
const FIRST_LOGIN: u32 = 1000;

/// Changes `model` as `program ARGS -- NAME` would change the machine.
pub(super) fn apply(
    model: &mut Model,
    program: &str,
    args: &[String],
    name: &str,
) -> Result<(), String> {
    let flags = Flags::parse(args);
    let failed = |why: &str| Err(format!("{program} {name} failed: {why}"));
    match program {
        "groupadd" => {
            if model.groups.contains_key(name) {
                return failed("group already exists");
            }
            let gid = match flags.value("--gid") {
                Some(gid) => gid
                    .parse()
                    .map_err(|_| format!("{program}: bad gid {gid}"))?,
                None => free_id(model.groups.values().copied(), flags.has("--system")),
            };
            model.groups.insert(name.to_string(), gid);
        }
        "groupdel" => {
            if model.groups.remove(name).is_none() {
                return failed("group does not exist");
            }
        }
        "useradd" => {
            if model.users.contains_key(name) {
                return failed("user already exists");
            }
            let system = flags.has("--system");
            let uid = match flags.value("--uid") {
                Some(uid) => uid
                    .parse()
                    .map_err(|_| format!("{program}: bad uid {uid}"))?,
                None => free_id(model.users.values().map(|u| u.uid), system),
            };
            let gid = if flags.has("--user-group") {
                model.groups.insert(name.to_string(), uid);
                uid
            } else {
                match flags.value("--gid") {
                    Some(g) => match model.groups.get(g) {
                        Some(gid) => *gid,
                        None => return failed(&format!("group {g} does not exist")),
                    },
                    None => 100,
                }
            };
            let user = User {
                uid,
                gid,
                home: flags
                    .value("--home-dir")
                    .map_or_else(|| format!("/home/{name}"), str::to_string),
                shell: flags.value("--shell").unwrap_or("/bin/sh").to_string(),
                groups: flags.groups(),
            };
            model.users.insert(name.to_string(), user);
        }
        "usermod" => {
            let Some(user) = model.users.get_mut(name) else {
                return failed("user does not exist");
            };
            if let Some(shell) = flags.value("--shell") {
                user.shell = shell.to_string();
            }
            if flags.value("--groups").is_some() {
                user.groups = flags.groups();
            }
        }
        "userdel" => {
            let Some(user) = model.users.remove(name) else {
                return failed("user does not exist");
            };
            // its own group goes with it (USERGROUPS_ENAB)
            if model.groups.get(name) == Some(&user.gid) {
                model.groups.remove(name);
            }
        }
        _ => return failed("not an accounts command the recording machine knows"),
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
