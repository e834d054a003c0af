//! A new account's home that is already there. One that belongs to an account of the machine
//! (root's `/root`, a system account's directory, `/home/alice`) is refused: the new user's keys
//! would be written there, and undeclaring it would delete another's home. One left by no
//! account is taken, and what it holds of the account that left it becomes the new one's: so a
//! module undeclared (its account removed, its home kept on purpose, as `backup` keeps its
//! archives) can be assigned again and finds what it left.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use mesh_wire::{FIRST_LOGIN_ID, UserSpec};

use super::super::Failure;
use super::super::accounts::Passwd;
use crate::files::Root;

/// The owner (uid, gid) a home already there was left by, for [`take`]: `None` when there is
/// none; refused when it belongs to an account the machine has.
pub(super) fn left(
    root: &Root,
    system: &dyn crate::system::System,
    spec: &UserSpec,
) -> Result<Option<(u32, u32)>, Failure> {
    let home = spec.home_or_default();
    let Ok(m) = std::fs::symlink_metadata(root.real(Path::new(&home))) else {
        return Ok(None);
    };
    if !m.is_dir() {
        return Err(format!(
            "user {}'s home {home} is already there and is not a directory; name another",
            spec.name
        )
        .into());
    }
    let Some(owner) = system.getent("passwd", &m.uid().to_string())? else {
        return Ok(Some((m.uid(), m.gid())));
    };
    let owner = owner.split(':').next().unwrap_or_default().to_string();
    if m.uid() < FIRST_LOGIN_ID {
        return Err(format!(
            "user {}'s home {home} is already there and belongs to uid {} ({owner}): a new \
             account does not take a system directory as its home; name another",
            spec.name,
            m.uid()
        )
        .into());
    }
    Err(format!(
        "user {}'s home {home} is already there and belongs to user {owner} (uid {}): a new \
         account does not take another's home; name another home",
        spec.name,
        m.uid()
    )
    .into())
}

/// Gives the new account `p` what its home holds of the account that left it (`was`): each entry
/// owned by that uid (its group too, where that was the old one's), links themselves, never what
/// they point to, and never past the home's own file system.
pub(super) fn take(
    root: &Root,
    spec: &UserSpec,
    was: (u32, u32),
    p: &Passwd,
) -> Result<String, Failure> {
    let home = spec.home_or_default();
    if was == (p.uid, p.gid) {
        return Ok(format!("took its home {home} as it was left"));
    }
    let top = root.real(Path::new(&home));
    let device = std::fs::symlink_metadata(&top)
        .map_err(|e| format!("user {}'s home {home}: {e}", spec.name))?
        .dev();
    let mut taken = 0usize;
    let mut pending = vec![top];
    while let Some(path) = pending.pop() {
        let m = std::fs::symlink_metadata(&path)
            .map_err(|e| format!("user {}'s home {}: {e}", spec.name, path.display()))?;
        if m.dev() != device {
            continue;
        }
        if m.uid() == was.0 {
            let gid = (m.gid() == was.1).then_some(p.gid);
            std::os::unix::fs::lchown(&path, Some(p.uid), gid)
                .map_err(|e| format!("user {}'s home {}: {e}", spec.name, path.display()))?;
            taken += 1;
        }
        if m.is_dir() {
            let entries = std::fs::read_dir(&path)
                .map_err(|e| format!("user {}'s home {}: {e}", spec.name, path.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("user {}'s home {home}: {e}", spec.name))?;
                pending.push(entry.path());
            }
        }
    }
    Ok(format!(
        "took its home {home} as it was left by uid {} ({taken} entries now its own)",
        was.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(home: &Path) -> UserSpec {
        UserSpec {
            name: "ops".into(),
            system: true,
            uid: None,
            home: Some(home.to_string_lossy().into_owned()),
            shell: None,
            groups: None,
            authorized_keys: None,
            remove_home: false,
        }
    }

    #[test]
    fn a_home_of_an_account_the_machine_has_is_refused_and_a_missing_one_is_made() {
        let (dir, paths) = crate::apply::testkit::sandbox();
        let system = paths.system.as_ref();
        let home = dir.path().join("home");
        assert_eq!(left(&paths.machine, system, &spec(&home)).unwrap(), None);
        std::fs::create_dir(&home).unwrap();
        let (uid, gid) = crate::apply::testkit::ids();
        // the machine has an account of that uid: root, or one the model names
        let model = serde_json::json!({
            "users": {"alice": {"uid": uid, "gid": gid, "home": "/home/alice", "shell": "/bin/sh"}},
            "groups": {"alice": gid},
        });
        let at = paths.root.join(crate::record::Paths::SYSTEM);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join("model.json"), model.to_string()).unwrap();
        let e = left(&paths.machine, system, &spec(&home))
            .unwrap_err()
            .to_string();
        let owner = if uid == 0 { "root" } else { "alice" };
        assert!(e.contains(owner), "{e}");
        let said = if uid < FIRST_LOGIN_ID {
            "a new account does not take a system directory as its home"
        } else {
            "a new account does not take another's home"
        };
        assert!(e.contains(said), "{e}");
        // a file where the home should be is no home
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let e = left(&paths.machine, system, &spec(&file))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a directory"), "{e}");
    }
}
