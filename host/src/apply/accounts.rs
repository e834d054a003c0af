//! The machine's accounts, read with its own `getent` and `id` (never glibc's NSS from this
//! static helper: see `owners`) and changed with `useradd`, `usermod`, `userdel`, `groupadd`
//! and `groupdel`, each asked of the machine's [`System`].

use super::Failure;
use crate::system::{Call, System, SystemError};

/// A user as `getent passwd` answers for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Passwd {
    pub(super) uid: u32,
    pub(super) gid: u32,
    pub(super) home: String,
    pub(super) shell: String,
}

/// The user `name`, if the machine has it.
pub(super) fn passwd(system: &dyn System, name: &str) -> Result<Option<Passwd>, SystemError> {
    let Some(line) = system.getent("passwd", name)? else {
        return Ok(None);
    };
    // name:password:uid:gid:gecos:home:shell
    let fields: Vec<&str> = line.split(':').collect();
    let unreadable = || SystemError::Unreadable {
        call: Call::Getent {
            database: "passwd".into(),
            key: name.to_string(),
        },
        why: format!("not name:password:uid:gid:gecos:home:shell: {line:?}"),
    };
    if fields.len() != 7 {
        return Err(unreadable());
    }
    Ok(Some(Passwd {
        uid: fields[2].parse().map_err(|_| unreadable())?,
        gid: fields[3].parse().map_err(|_| unreadable())?,
        home: fields[5].to_string(),
        shell: fields[6].to_string(),
    }))
}

/// The gid of the group `name`, if the machine has it.
pub(super) fn group(system: &dyn System, name: &str) -> Result<Option<u32>, SystemError> {
    let Some(line) = system.getent("group", name)? else {
        return Ok(None);
    };
    line.split(':')
        .nth(2)
        .and_then(|gid| gid.parse().ok())
        .map(Some)
        .ok_or_else(|| SystemError::Unreadable {
            call: Call::Getent {
                database: "group".into(),
                key: name.to_string(),
            },
            why: format!("no gid in {line:?}"),
        })
}

/// Stops the systemd user manager of `uid`, if it runs: logind keeps one for some seconds after
/// its last session ends (`UserStopDelaySec=`), and `userdel` refuses a user any process runs
/// as. A session still open is not ended here: `userdel` then fails, saying so.
pub(super) fn stop_user_manager(system: &dyn System, uid: u32) {
    let _ = system.systemctl("stop", &format!("user@{uid}.service"));
}

/// Runs one of the accounts commands (`useradd` …) with `args`, the account's name last after
/// `--`; what this run asked of `getent` about the name is asked again after.
pub(super) fn change(
    system: &dyn System,
    program: &str,
    args: &[String],
    name: &str,
) -> Result<(), Failure> {
    let changed = system.change_account(program, args, name);
    crate::owners::forget(name);
    changed.map_err(Failure::from)
}

/// A user's shell and supplementary groups, if the machine has it: what a revert keeps of an
/// account a push may change.
pub(crate) fn account_of(
    system: &dyn System,
    name: &str,
) -> Result<Option<(String, Vec<String>)>, SystemError> {
    let Some(found) = passwd(system, name)? else {
        return Ok(None);
    };
    Ok(Some((found.shell, system.supplementary(name)?)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn root_is_read_from_getent_and_a_missing_name_is_none() {
        let root = super::passwd(&crate::system::Real, "root")
            .unwrap()
            .unwrap();
        assert_eq!((root.uid, root.gid), (0, 0));
        assert_eq!(super::group(&crate::system::Real, "root").unwrap(), Some(0));
        assert_eq!(
            super::passwd(&crate::system::Real, "mesh-no-such-user-x").unwrap(),
            None
        );
        assert_eq!(
            super::group(&crate::system::Real, "mesh-no-such-group-x").unwrap(),
            None
        );
    }
}
