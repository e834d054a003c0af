//! A local user racing the helper: in a directory a service account (uid 65534) owns, links of
//! every kind are planted at every name the helper may use; the root-owned files they point to
//! must never change (content, owner, mode) while the helper does its job or refuses, saying why.

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use super::*;

pub(crate) const NOBODY: u32 = 65534;

/// A temp dir (root's, 0700) holding `svc/` (nobody's, 0755), a root-owned `canary` file and a
/// root-owned directory `outside/` with a file `keep` in it.
pub(crate) struct Hostile {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) svc: PathBuf,
    pub(crate) canary: PathBuf,
    pub(crate) outside: PathBuf,
    before: Vec<(PathBuf, Vec<u8>, u32, u32, u32)>,
}

impl Hostile {
    /// `None` where the tests do not run as root: playing another account takes `chown`, and
    /// the test says it was skipped.
    pub(crate) fn new() -> Option<Hostile> {
        if !rustix::process::geteuid().is_root() {
            use std::io::Write;
            let test = std::thread::current()
                .name()
                .unwrap_or("a test")
                .to_string();
            // straight to stderr: the harness captures `eprintln!` of a passing test
            let _ = writeln!(
                std::io::stderr(),
                "skipped host test {test}: not root (it plays another account with chown)"
            );
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let svc = dir.path().join("svc");
        std::fs::create_dir(&svc).unwrap();
        std::os::unix::fs::chown(&svc, Some(NOBODY), Some(NOBODY)).unwrap();
        std::fs::set_permissions(&svc, std::fs::Permissions::from_mode(0o755)).unwrap();
        let canary = dir.path().join("canary");
        std::fs::write(&canary, "same\n").unwrap();
        std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o600)).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "keep\n").unwrap();
        let mut hostile = Hostile {
            dir,
            svc,
            canary,
            outside,
            before: Vec::new(),
        };
        hostile.before = hostile.snapshot();
        Some(hostile)
    }

    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>, u32, u32, u32)> {
        let mut all = vec![self.canary.clone(), self.outside.clone()];
        all.extend(
            std::fs::read_dir(&self.outside)
                .unwrap()
                .map(|e| e.unwrap().path()),
        );
        all.sort();
        all.into_iter()
            .map(|p| {
                let m = std::fs::symlink_metadata(&p).unwrap();
                let bytes = if m.is_file() {
                    std::fs::read(&p).unwrap()
                } else {
                    Vec::new()
                };
                (p, bytes, m.uid(), m.gid(), m.mode())
            })
            .collect()
    }

    /// The canary and everything outside `svc/` are as they were.
    pub(crate) fn untouched(&self) {
        assert_eq!(
            self.snapshot(),
            self.before,
            "a file outside the service account's directory changed"
        );
    }

    /// A symbolic link at `svc/name` to `to`, the service account's, as it would plant it.
    pub(crate) fn link(&self, name: &str, to: &Path) {
        let at = self.svc.join(name);
        symlink(to, &at).unwrap();
        std::os::unix::fs::lchown(&at, Some(NOBODY), Some(NOBODY)).unwrap();
    }

    /// Links at the names an atomic write has used for its temp file (`.NAME.mesh-PID`), for
    /// the pids around this one.
    pub(crate) fn plant_temp_names(&self, name: &str) {
        let pid = std::process::id();
        for p in pid.saturating_sub(5)..pid + 5 {
            self.link(&format!(".{name}.mesh-{p}"), &self.canary);
        }
    }
}

fn refused(result: io::Result<impl std::fmt::Debug>, words: &str) {
    let e = result.expect_err("it was refused");
    assert!(e.to_string().contains(words), "{e}");
}

#[test]
fn a_write_among_planted_links_changes_only_its_own_file() {
    let Some(h) = Hostile::new() else {
        return;
    };
    h.plant_temp_names("target");
    h.link("target", &h.canary);
    let target = h.svc.join("target");
    HOST.write_atomically(&target, b"mine\n", Some((NOBODY, NOBODY)), 0o640)
        .unwrap();
    h.untouched();
    let m = std::fs::symlink_metadata(&target).unwrap();
    assert!(m.is_file(), "the link was replaced by the file");
    assert_eq!((m.uid(), m.mode() & 0o7777), (NOBODY, 0o640));
    assert_eq!(std::fs::read(&target).unwrap(), b"mine\n");
    // and no temp file is left behind
    let left: Vec<String> = std::fs::read_dir(&h.svc)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn owner_and_mode_are_never_set_through_a_link() {
    let Some(h) = Hostile::new() else {
        return;
    };
    h.link("link", &h.canary);
    h.link("dir", &h.outside);
    std::fs::hard_link(&h.canary, h.svc.join("hard")).unwrap();
    refused(
        HOST.set_owner_mode(&h.svc.join("link"), NOBODY, NOBODY, 0o666),
        "not a regular file",
    );
    refused(
        HOST.set_owner_mode(&h.svc.join("hard"), NOBODY, NOBODY, 0o666),
        "hard link",
    );
    refused(
        HOST.set_dir_owner_mode(&h.svc.join("dir"), NOBODY, NOBODY, 0o777),
        "a directory there can be swapped for another",
    );
    // a real directory there too: its owner could have renamed root's own into its place
    std::fs::create_dir(h.svc.join("swapped")).unwrap();
    refused(
        HOST.set_dir_owner_mode(&h.svc.join("swapped"), NOBODY, NOBODY, 0o755),
        "which user nobody (65534) can write",
    );
    h.untouched();
}

#[test]
fn a_hard_link_where_others_can_write_is_not_read() {
    let Some(h) = Hostile::new() else {
        return;
    };
    std::fs::hard_link(&h.canary, h.svc.join("hard")).unwrap();
    refused(HOST.read(&h.svc.join("hard")), "nobody");
    // the same file with one name, in a directory only root writes, is read
    assert_eq!(HOST.read(&h.canary).unwrap().unwrap().bytes, b"same\n");
    h.untouched();
}

#[test]
fn a_path_through_a_link_someone_else_planted_is_refused() {
    let Some(h) = Hostile::new() else {
        return;
    };
    h.link("sub", &h.outside);
    refused(
        HOST.write_atomically(&h.svc.join("sub/new"), b"x", None, 0o644),
        "(owned by nobody",
    );
    refused(HOST.make_dir(&h.svc.join("sub/deeper")), "symbolic link");
    refused(HOST.remove(&h.svc.join("sub/keep")), "symbolic link");
    refused(HOST.read(&h.svc.join("sub/keep")), "symbolic link");
    h.untouched();
    assert!(!h.outside.join("new").exists() && !h.outside.join("deeper").exists());

    // a link root made where only root writes is not walked through either: two paths would
    // name one file, or a path would leave every rule (/proc/self/root/...)
    symlink(&h.outside, h.dir.path().join("rootlink")).unwrap();
    let through = h.dir.path().join("rootlink/new");
    refused(
        HOST.write_atomically(&through, b"x", None, 0o644),
        "the mesh never walks through a link",
    );
    assert!(!h.outside.join("new").exists());
}

#[test]
fn a_bundle_is_pruned_and_removed_without_following_its_links() {
    let Some(h) = Hostile::new() else {
        return;
    };
    let bundle = h.dir.path().join("bundle");
    std::fs::create_dir_all(bundle.join("sub")).unwrap();
    std::fs::write(bundle.join("run.sh"), "x").unwrap();
    std::fs::write(bundle.join("old.sh"), "x").unwrap();
    std::fs::write(bundle.join("sub/old"), "x").unwrap();
    symlink(&h.outside, bundle.join("out")).unwrap();
    symlink(&h.canary, bundle.join("canary")).unwrap();
    let keep: BTreeSet<PathBuf> = [bundle.join("run.sh")].into();
    HOST.prune(&bundle, &keep).unwrap();
    let left: Vec<_> = std::fs::read_dir(&bundle)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("run.sh")]);
    h.untouched();

    symlink(&h.outside, bundle.join("out")).unwrap();
    std::fs::hard_link(&h.canary, bundle.join("hard")).unwrap();
    HOST.remove_tree(&bundle).unwrap();
    assert!(!bundle.exists());
    h.untouched();
}

#[test]
fn a_file_made_huge_is_refused_not_read_or_kept() {
    let Some(h) = Hostile::new() else {
        return;
    };
    let big = h.svc.join("auth.conf");
    // sparse: it costs whoever made it nothing
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(200 << 20).unwrap();
    refused(
        HOST.read(&big),
        "the mesh reads and keeps files of at most 16 MiB",
    );
    h.untouched();
}
