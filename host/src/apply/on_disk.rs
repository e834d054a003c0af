//! What a process's files are on the machine against what its declaration writes: its unit file,
//! its environment file and each bundle file, by content, owner and mode, and any file added to
//! its bundle by hand. A process's record keeps only a digest of what was sent; this is how a
//! hand edit, a deleted script or a chmod is seen at all.

use super::Failure;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mesh_wire::Seen;

/// One file a process writes, as its declaration has it.
pub(super) struct Wanted<'a> {
    pub(super) path: PathBuf,
    pub(super) bytes: &'a [u8],
    pub(super) uid: u32,
    pub(super) gid: u32,
    pub(super) mode: u32,
    /// What an operator calls it: "unit file", "bundle file run.sh".
    pub(super) name: String,
    /// Whether its content may be shown (an environment file never is: it holds secrets).
    pub(super) shown: bool,
}

/// How the machine differs from the declaration.
#[derive(Debug, Default)]
pub(super) struct Drift {
    /// Each difference, in words: "bundle file run.sh is missing".
    pub(super) what: Vec<String>,
    /// For each file whose content differs and may be shown: what is there and what is wanted.
    pub(super) seen: Vec<Seen>,
}

impl Drift {
    pub(super) fn is_empty(&self) -> bool {
        self.what.is_empty()
    }
}

/// Compares every wanted file with what is on the machine (read without following a link), and
/// lists the files in `bundle_dir` that no wanted file names.
pub(super) fn compare(
    root: &crate::files::Root,
    wanted: &[Wanted],
    bundle_dir: &Path,
) -> Result<Drift, Failure> {
    let mut drift = Drift::default();
    for w in wanted {
        let found = root
            .read(&w.path)
            .map_err(|e| format!("{}: {e}", w.path.display()))?;
        let differs = match &found {
            None => {
                drift.what.push(format!("{} is missing", w.name));
                true
            }
            Some(f) if f.bytes != w.bytes => {
                drift.what.push(format!("{} was edited", w.name));
                true
            }
            Some(f) => {
                drift.what.extend(other_owner_or_mode(
                    &w.name,
                    (f.uid, f.gid, f.mode),
                    (w.uid, w.gid, w.mode),
                ));
                false
            }
        };
        if differs
            && w.shown
            && let Some(seen) = Seen::of(
                &w.path.display().to_string(),
                found.as_ref().map(|f| f.bytes.as_slice()),
                w.bytes,
            )
        {
            drift.seen.push(seen);
        }
    }
    let keep: BTreeSet<PathBuf> = wanted.iter().map(|w| w.path.clone()).collect();
    let strays = root
        .strays(bundle_dir, &keep)
        .map_err(|e| format!("{}: {e}", bundle_dir.display()))?;
    for stray in strays {
        let name = stray.strip_prefix(bundle_dir).unwrap_or(&stray);
        drift.what.push(format!(
            "bundle file {} was added on the machine",
            name.display()
        ));
    }
    Ok(drift)
}

/// Says how a file's owner and mode differ from the wanted ones, if they do.
pub(super) fn other_owner_or_mode(
    name: &str,
    found: (u32, u32, u32),
    want: (u32, u32, u32),
) -> Option<String> {
    (found != want).then(|| {
        format!(
            "{name} has owner {}:{} and mode {:o}, not {}:{} and {:o}",
            found.0, found.1, found.2, want.0, want.1, want.2
        )
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::{Wanted, compare};
    use crate::apply::testkit::ids;

    fn wanted<'a>(dir: &Path, name: &str, bytes: &'a [u8], shown: bool) -> Wanted<'a> {
        Wanted {
            path: dir.join(name),
            bytes,
            uid: ids().0,
            gid: ids().1,
            mode: 0o755,
            name: format!("bundle file {name}"),
            shown,
        }
    }

    fn put(dir: &Path, name: &str, text: &str, mode: u32) {
        std::fs::write(dir.join(name), text).unwrap();
        std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn files_as_declared_are_no_drift() {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "run.sh", "#!/bin/sh\n", 0o755);
        let drift = compare(
            &crate::files::HOST,
            &[wanted(dir.path(), "run.sh", b"#!/bin/sh\n", true)],
            dir.path(),
        )
        .unwrap();
        assert!(drift.is_empty(), "{drift:?}");
        assert!(drift.seen.is_empty());
    }

    #[test]
    fn an_edit_a_deletion_an_addition_and_a_chmod_are_each_named() {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "edited.sh", "by hand\n", 0o755);
        put(dir.path(), "chmod.sh", "same\n", 0o777);
        put(dir.path(), "added.sh", "new\n", 0o755);
        let drift = compare(
            &crate::files::HOST,
            &[
                wanted(dir.path(), "edited.sh", b"declared\n", true),
                wanted(dir.path(), "chmod.sh", b"same\n", true),
                wanted(dir.path(), "deleted.sh", b"gone\n", true),
            ],
            dir.path(),
        )
        .unwrap();
        let all = drift.what.join("; ");
        for said in [
            "bundle file edited.sh was edited",
            "bundle file chmod.sh has owner",
            "mode 777",
            "bundle file deleted.sh is missing",
            "bundle file added.sh was added on the machine",
        ] {
            assert!(all.contains(said), "{said}: {all}");
        }
        // what changed in content is shown, found against declared
        assert_eq!(drift.seen.len(), 2);
        assert_eq!(drift.seen[0].found.as_deref(), Some("by hand\n"));
        assert_eq!(drift.seen[0].declared, "declared\n");
        assert_eq!(drift.seen[1].found, None);
    }

    #[test]
    fn a_file_that_is_not_shown_is_named_but_never_sent() {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "env", "PASSWORD=\"by hand\"\n", 0o755);
        let drift = compare(
            &crate::files::HOST,
            &[wanted(dir.path(), "env", b"PASSWORD=\"s3cret\"\n", false)],
            dir.path(),
        )
        .unwrap();
        assert_eq!(drift.what, vec!["bundle file env was edited".to_string()]);
        assert!(drift.seen.is_empty());
    }
}
