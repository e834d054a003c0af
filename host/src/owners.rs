//! Owners by name, answered by the machine's own NSS through `getent`.
//!
//! The helper is linked statically, and glibc's `getpwnam` from a static binary would load the
//! NSS modules of the glibc it was built with. `getent` is the machine's own program, so LDAP,
//! sssd or plain `/etc/passwd` answer exactly as they do for everything else there.
//!
//! Each name is asked once per run: a declaration names `root` or a service user for many
//! resources, and each `getent` is a process the no-op push would wait for.

use std::collections::HashMap;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use crate::child::{self, Bounded as _};
use crate::system::{Call, System, SystemError};

/// The uid and gid a resource's owner and group name.
pub(crate) fn ids(
    system: &dyn System,
    owner: &str,
    group: &str,
) -> Result<(u32, u32), SystemError> {
    Ok((
        id_of(system, "passwd", owner)?,
        id_of(system, "group", group)?,
    ))
}

/// The uid of a user a process runs as: a unit for a user the machine does not have would fail
/// at every start (217/USER), so it is refused before the unit is written.
pub(crate) fn user(system: &dyn System, name: &str) -> Result<u32, SystemError> {
    id_of(system, "passwd", name)
}

/// The id a dry run answers for an account it would make: no file is given it.
pub(crate) const PLANNED: u32 = u32::MAX - 1;

/// A user or group this run made (or changed): what was asked of `getent` about it before is
/// asked again.
pub(crate) fn forget(name: &str) {
    if let Ok(mut a) = answers().lock() {
        a.retain(|(_, asked), _| asked != name);
    }
}

/// A user (`passwd`) or group (`group`) a dry run would make: what reads it later in the run
/// (a process's user, a file's owner) finds it, as it will after the real run made it.
pub(crate) fn expect(database: &'static str, name: &str) {
    if let Ok(mut a) = answers().lock() {
        a.insert((database, name.to_string()), Ok(PLANNED));
    }
}

/// What this run has asked `getent` already, by database and name.
type Answers = HashMap<(&'static str, String), Result<u32, SystemError>>;

fn answers() -> &'static Mutex<Answers> {
    static ANSWERS: OnceLock<Mutex<Answers>> = OnceLock::new();
    ANSWERS.get_or_init(Mutex::default)
}

/// Resolves a user (`passwd`) or group (`group`) name, or a number, to its id.
fn id_of(system: &dyn System, database: &'static str, name: &str) -> Result<u32, SystemError> {
    if let Ok(id) = name.parse::<u32>() {
        return Ok(id);
    }
    // uid 0 is root by the kernel's definition, and every Linux distribution names gid 0 root
    if name == "root" {
        return Ok(0);
    }
    let key = (database, name.to_string());
    if let Some(known) = answers().lock().ok().and_then(|a| a.get(&key).cloned()) {
        return known;
    }
    let answer = ask(system, database, name);
    if let Ok(mut a) = answers().lock() {
        a.insert(key, answer.clone());
    }
    answer
}

/// How many times this run has started `getent` for each name, for the tests that keep it once.
#[cfg(test)]
static ASKED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn ask(system: &dyn System, database: &str, name: &str) -> Result<u32, SystemError> {
    #[cfg(test)]
    if let Ok(mut asked) = ASKED.lock() {
        asked.push(format!("{database} {name}"));
    }
    let Some(line) = system.getent(database, name)? else {
        return Err(SystemError::NoAccount {
            database: database.to_string(),
            name: name.to_string(),
        });
    };
    // name:password:id:...
    line.split(':')
        .nth(2)
        .and_then(|id| id.parse().ok())
        .ok_or_else(|| SystemError::Unreadable {
            call: Call::Getent {
                database: database.to_string(),
                key: name.to_string(),
            },
            why: format!("no id in {line:?}"),
        })
}

/// The name of a user (`passwd`) or group (`group`) id, for messages; the number when the
/// machine has no name for it.
pub(crate) fn name_of(database: &str, id: u32) -> String {
    Command::new("getent")
        .arg(database)
        .arg(id.to_string())
        .output_within(child::LOOKUP)
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| {
            String::from_utf8_lossy(&out.stdout)
                .split(':')
                .next()
                .map(str::to_string)
        })
        .filter(|name| !name.is_empty())
        .map_or_else(|| id.to_string(), |name| format!("{name} ({id})"))
}

#[cfg(test)]
mod tests {
    use super::{ASKED, PLANNED, expect, forget, id_of, ids, user};
    use crate::system::Real;

    fn times_asked(name: &str) -> usize {
        ASKED
            .lock()
            .map_or(0, |a| a.iter().filter(|n| *n == name).count())
    }

    #[test]
    fn root_is_never_asked_and_another_name_is_asked_once_per_run() {
        assert_eq!(ids(&Real, "root", "root"), Ok((0, 0)));
        assert_eq!(
            times_asked("passwd root") + times_asked("group root"),
            0,
            "root needs no getent"
        );

        let first = user(&Real, "nobody");
        assert_eq!(user(&Real, "nobody"), first);
        assert_eq!(id_of(&Real, "passwd", "nobody"), first);
        assert_eq!(
            times_asked("passwd nobody"),
            1,
            "a name asked again is not asked again"
        );

        let missing = user(&Real, "mesh-owners-test-no-such-user");
        assert!(missing.is_err());
        assert_eq!(user(&Real, "mesh-owners-test-no-such-user"), missing);
        assert_eq!(
            times_asked("passwd mesh-owners-test-no-such-user"),
            1,
            "a refusal is remembered too"
        );
    }

    #[test]
    fn an_account_a_dry_run_would_make_is_found_and_one_made_is_asked_again() {
        let name = "mesh-owners-test-planned";
        assert!(user(&Real, name).is_err());
        expect("passwd", name);
        assert_eq!(user(&Real, name), Ok(PLANNED));
        forget(name);
        assert!(user(&Real, name).is_err());
        assert_eq!(times_asked(&format!("passwd {name}")), 2);
    }
}
