//! What an attacker found open in generations and rollback (issue 22), each closed: a check
//! while another helper applies, a killed rollback checked, holds carried by export and import,
//! a rollback whose waves fail to send, a rollback's plan made against what the machine has now.

use std::time::Duration;

use crate::util::{Mesh, eventually, node_result, on, ssh_command};

const NOTE: &str = r#"{
  "name": "note", "version": "1", "description": "One file that says a word.",
  "settings": [{"name": "word", "type": "string", "meaning": "What it says.", "default": "one", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/mesh-gaps.conf", "template": "gaps.conf"}]
}"#;

/// node1 with `note` assigned and pushed once.
fn noted(mesh: &Mesh) {
    mesh.module("note", NOTE, &[("gaps.conf", "word ${word}\n")]);
    mesh.run(&["assign", "note", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

fn cleaned(mesh: &Mesh) {
    mesh.run(&["rollback", "node1", "--release"]).ok();
    mesh.run(&["unassign", "note", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

#[test]
fn a_check_while_another_helper_applies_says_so_and_records_nothing() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(1) else {
        return;
    };
    noted(&mesh);
    // the machine's lock held as an apply holds it (a helper still running after its
    // operator was killed), longer than a helper waits for it
    let mut holder = ssh_command("node1", "exec flock -o -x /var/lib/mesh/lock sleep 45")
        .stdin(std::process::Stdio::null())
        .spawn()
        .expect("ssh runs");
    eventually(Duration::from_secs(20), "the lock is held", || {
        let free = on(
            "node1",
            "flock -n /var/lib/mesh/lock true && echo free || echo held",
        );
        (free.trim() == "held").then_some(())
    });
    let before = mesh.run(&["--json", "history", "node1"]).ok().stdout;
    let checked = mesh.run(&["check", "node1"]).code(2);
    let said = format!("{}{}", checked.stdout, checked.stderr);
    for words in [
        "node1: another mesh-host is applying on the machine",
        "nothing was read and nothing is recorded",
        "`mesh check node1` again once it is done",
    ] {
        assert!(said.contains(words), "{words}: {said}");
    }
    assert_eq!(mesh.run(&["--json", "history", "node1"]).ok().stdout, before);
    let _ = holder.kill();
    let _ = holder.wait();
    // flock holds the lock (-o: not its sleep)
    crate::util::ssh("node1", "pkill -x flock");
    mesh.run(&["check", "node1"]).ok();
    cleaned(&mesh);
}
