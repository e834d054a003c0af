//! `mesh-host --root DIR`: the real helper binary applies a declaration to a directory standing
//! for the machine's `/`, as whoever runs the test (no root needed), and gives it back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mesh_wire::{
    Cost, Costing, Declaration, DirectorySpec, FileSpec, Key, KeysSpec, Report, Resource, Spec,
    State, VERSION,
};

/// Our own uid and gid: what a non-root helper can give a file.
fn ids() -> (String, String) {
    let m = std::fs::metadata("/proc/self").unwrap();
    (m.uid().to_string(), m.gid().to_string())
}

fn costing() -> Costing {
    Costing {
        source: "s".into(),
        settings: BTreeMap::new(),
        cost: Cost::None,
        units: vec![],
    }
}

fn resource(id: &str, spec: Spec) -> Resource {
    Resource {
        id: id.into(),
        instance: "t".into(),
        module: "t@1".into(),
        confirm: false,
        spec,
    }
}

fn file(path: &str, content: &str) -> Resource {
    let (owner, group) = ids();
    resource(
        &format!("t:file:{path}"),
        Spec::File(FileSpec {
            path: path.into(),
            owner,
            group,
            mode: 0o640,
            content: content.into(),
            validate: vec![],
            secret: false,
            sealed: None,
            effective: None,
            costing: costing(),
        }),
    )
}

fn directory(path: &str) -> Resource {
    let (owner, group) = ids();
    resource(
        &format!("t:directory:{path}"),
        Spec::Directory(DirectorySpec {
            path: path.into(),
            owner,
            group,
            mode: 0o750,
        }),
    )
}

fn keys(path: &str) -> Resource {
    let (owner, group) = ids();
    resource(
        &format!("t:keys:{path}"),
        Spec::Keys(KeysSpec {
            path: path.into(),
            owner,
            group,
            mode: 0o644,
            keys: vec![Key {
                path: vec!["log-opts".into(), "max-size".into()],
                value: serde_json::json!("10m"),
            }],
            costing: costing(),
        }),
    )
}

fn declaration(resources: Vec<Resource>) -> Declaration {
    Declaration {
        version: VERSION,
        node: "n".into(),
        resources,
        expects_record: false,
        confirm_within: None,
        confirm_removals: Vec::new(),
        keep: Vec::new(),
        planned: None,
    }
}

/// `mesh-host --root ROOT apply` with `d` on its stdin.
fn apply(root: &Path, d: &Declaration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mesh-host"))
        .arg("--root")
        .arg(root)
        .arg("apply")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let json = serde_json::to_vec(d).unwrap();
    // a helper that refuses before reading (a root that is not there) closes its stdin early
    let _ = child.stdin.take().unwrap().write_all(&json);
    child.wait_with_output().unwrap()
}

fn report(out: &Output) -> Report {
    assert!(
        out.status.success(),
        "mesh-host failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn states(r: &Report) -> Vec<State> {
    r.resources.iter().map(|o| o.state).collect()
}

/// Everything under `root` but the helper's own state: each path, what it is, its content or
/// target, owner and mode.
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut next = vec![root.to_path_buf()];
    while let Some(dir) = next.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if rel.starts_with("var/lib/mesh") {
                continue;
            }
            let m = std::fs::symlink_metadata(&path).unwrap();
            let what = if m.is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if m.is_dir() {
                next.push(path.clone());
                "dir".to_string()
            } else {
                format!("file {:?}", std::fs::read(&path).unwrap())
            };
            out.insert(
                rel,
                format!("{what} {}:{} {:o}", m.uid(), m.gid(), m.mode()),
            );
        }
    }
    out
}

/// A small machine: `/etc` with a file the mesh will replace and a JSON file whose keys it will
/// own, and an empty `/var/lib`.
fn machine() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for dir in ["etc/app", "etc/docker", "var/lib"] {
        std::fs::create_dir_all(r.join(dir)).unwrap();
    }
    std::fs::write(r.join("etc/app/app.conf"), "the machine's own\n").unwrap();
    std::fs::write(
        r.join("etc/docker/daemon.json"),
        "{\n  \"debug\": true\n}\n",
    )
    .unwrap();
    root
}

#[test]
fn a_file_a_directory_and_keys_applied_under_a_root_then_undeclared_give_the_root_back_byte_for_byte()
 {
    let root = machine();
    let r = root.path();
    let before = tree(r);
    let d = declaration(vec![
        file("/etc/app/app.conf", "mesh's\n"),
        file("/etc/app/new.conf", "new\n"),
        directory("/srv/app/data"),
        keys("/etc/docker/daemon.json"),
    ]);

    let applied = report(&apply(r, &d));
    // directories are made before files, whatever the order declared
    assert_eq!(
        states(&applied),
        vec![
            State::Created,
            State::Changed,
            State::Created,
            State::Changed
        ],
        "{:?}",
        applied.resources
    );
    // every declared path is under the root, and the state too
    assert_eq!(
        std::fs::read_to_string(r.join("etc/app/app.conf")).unwrap(),
        "mesh's\n"
    );
    assert_eq!(
        std::fs::read_to_string(r.join("etc/app/new.conf")).unwrap(),
        "new\n"
    );
    assert!(r.join("srv/app/data").is_dir());
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r.join("etc/docker/daemon.json")).unwrap()).unwrap();
    assert_eq!(doc["log-opts"]["max-size"], "10m");
    assert_eq!(doc["debug"], true);
    assert!(r.join("var/lib/mesh/record.json").is_file());

    // applied again: nothing changes
    let again = report(&apply(r, &d));
    assert!(
        states(&again).iter().all(|s| *s == State::Unchanged),
        "{:?}",
        again.resources
    );

    let undone = report(&apply(r, &declaration(vec![])));
    assert!(
        states(&undone).iter().all(|s| *s == State::Removed),
        "{:?}",
        undone.resources
    );
    assert_eq!(tree(r), before, "the root is not as it was");
}

#[test]
fn a_link_under_the_root_does_not_lead_the_helper_out_of_it() {
    let root = machine();
    let outside = tempfile::tempdir().unwrap();
    let r = root.path();
    // `/etc/evil` under the root leads to a directory outside it, as `/etc` would
    symlink(outside.path(), r.join("etc/evil")).unwrap();
    let d = declaration(vec![
        file("/etc/evil/x.conf", "escaped\n"),
        directory("/etc/evil/d"),
        file("/etc/app/ok.conf", "ok\n"),
    ]);
    let applied = report(&apply(r, &d));
    assert_eq!(
        states(&applied),
        vec![State::Failed, State::Failed, State::Created],
        "{:?}",
        applied.resources
    );
    assert!(
        applied.resources[0].detail.contains("symbolic link"),
        "{}",
        applied.resources[0].detail
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "the helper wrote through the link"
    );
}

#[test]
fn a_root_that_is_not_a_directory_is_refused_before_anything() {
    let dir = tempfile::tempdir().unwrap();
    let out = apply(&dir.path().join("missing"), &declaration(vec![]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--root"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn under_a_root_what_the_helper_asked_of_systemd_is_recorded_for_the_test_to_read() {
    let root = machine();
    let r = root.path();
    // the recording machine knows a unit whose file is under the root
    std::fs::create_dir_all(r.join("etc/systemd/system")).unwrap();
    std::fs::write(r.join("etc/systemd/system/web.service"), "[Service]\n").unwrap();
    let web = resource(
        "t:service:web",
        Spec::Service(mesh_wire::ServiceSpec {
            unit: "web.service".into(),
            running: Some(true),
            enabled: None,
            on_removal: Default::default(),
            ready: None,
        }),
    );
    let applied = report(&apply(r, &declaration(vec![web])));
    assert_eq!(
        states(&applied),
        vec![State::Changed],
        "{:?}",
        applied.resources
    );
    let calls = std::fs::read_to_string(r.join("var/lib/mesh/system/calls")).unwrap();
    assert_eq!(
        calls
            .lines()
            .filter(|c| *c == "systemctl start web.service")
            .count(),
        1,
        "{calls}"
    );
    let model: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r.join("var/lib/mesh/system/model.json")).unwrap())
            .unwrap();
    assert_eq!(model["units"]["web.service"]["active"], true);
}
