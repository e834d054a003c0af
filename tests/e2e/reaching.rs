//! Reaching machines when the operator's side is hostile: files mesh
//! reads that are not files, a node's machine reached while another's key file is a trap.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Mesh, Run, lab_state, node_result, on, path_str};

/// Runs `mesh` as `command`, killed and failed if it is not done within `limit` (a hang is the
/// bug these tests look for, so it must fail the test, not stall it).
fn within(mut command: Command, limit: Duration) -> (Run, Duration) {
    let start = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mesh runs");
    let ended = crate::util::within(limit, || child.try_wait().expect("mesh is waited for"));
    if ended.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("mesh was still running after {limit:?}");
    }
    let out = child.wait_with_output().expect("mesh's output");
    (Run::from(out), start.elapsed())
}

/// A copy of the lab key at `path`, then replaced by what `trap` makes there.
fn trapped_key(mesh: &Mesh, node: &str, path: &Path, trap: &str) {
    std::fs::copy(lab_state().join("id_ed25519"), path).expect("copy the lab key");
    mesh.run(&["node", "set", node, "--identity", path_str(path)])
        .ok();
    std::fs::remove_file(path).expect("take the key away");
    let made = Command::new("sh")
        .args(["-c", trap, "trap"])
        .arg(path)
        .status()
        .expect("sh runs");
    assert!(made.success(), "{trap}");
}

#[test]
fn a_fifo_or_dev_zero_identity_fails_its_node_fast_naming_the_file_and_the_others_are_applied() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    let (fifo, zero) = (dir.path().join("fifo_key"), dir.path().join("zero_key"));
    trapped_key(&mesh, "node1", &fifo, "mkfifo \"$1\"");
    trapped_key(&mesh, "node2", &zero, "ln -s /dev/zero \"$1\"");
    mesh.run(&["assign", "motd", "node1", "node2", "node3"])
        .ok();
    on("node3", "rm -f /etc/motd");
    let (run, took) = within(
        mesh.command(&["push", "--all", "--timeout", "30", "--json"]),
        Duration::from_secs(90),
    );
    let pushed = run.code(2).json();
    assert!(took < Duration::from_secs(30), "took {took:?}");
    for (node, path, what) in [
        ("node1", &fifo, "FIFO"),
        ("node2", &zero, "character device"),
    ] {
        let result = node_result(&pushed, node);
        assert_eq!(result["kind"], "auth", "{result}");
        let reason = result["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains(path_str(path)) && reason.contains(what),
            "{reason}"
        );
    }
    assert_eq!(node_result(&pushed, "node3")["outcome"], "applied");
    assert!(on("node3", "cat /etc/motd").contains("managed by mesh"));
}
