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
    let holder = lock_held();
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
    assert_eq!(
        mesh.run(&["--json", "history", "node1"]).ok().stdout,
        before
    );
    let_go(holder);
    mesh.run(&["check", "node1"]).ok();
    cleaned(&mesh);
}

/// The generation node1's push just made.
fn pushed(mesh: &Mesh, word: &str) -> u64 {
    mesh.run(&["settings", "set", "note", &format!("word={word}")])
        .ok();
    let out = mesh.run(&["--json", "push", "node1"]).ok().json();
    let r = node_result(&out, "node1");
    r["report"]["generation"]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("no generation: {r}"))
}

/// node1's machine lock, held as an applying helper holds it, until the returned ssh ends.
fn lock_held() -> std::process::Child {
    // -o: flock keeps the lock, not its sleep, so `pkill -x flock` lets go of it
    let holder = ssh_command("node1", "exec flock -o -x /var/lib/mesh/lock sleep 60")
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
    holder
}

fn let_go(mut holder: std::process::Child) {
    crate::util::ssh("node1", "pkill -x flock");
    let _ = holder.kill();
    let _ = holder.wait();
}

#[test]
fn a_check_after_a_killed_rollback_records_the_generation_it_sent() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(1) else {
        return;
    };
    mesh.module("note", NOTE, &[("gaps.conf", "word ${word}\n")]);
    mesh.run(&["assign", "note", "node1"]).ok();
    let one = pushed(&mesh, "one");
    pushed(&mesh, "two");
    // the rollback's helper waits for the lock; its operator is killed meanwhile
    let holder = lock_held();
    let mut rolling = mesh
        .command(&["rollback", "node1", "--to", &one.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("mesh runs");
    eventually(Duration::from_secs(30), "the rollback's helper", || {
        let running = on("node1", "ps -eo comm | grep -c '^mesh-host' || true");
        (running.trim() != "0").then_some(())
    });
    rolling.kill().expect("killed");
    let _ = rolling.wait();
    // let go: the helper applies generation one with nobody listening
    let_go(holder);
    eventually(Duration::from_secs(60), "generation one applied", || {
        let now = on("node1", "cat /etc/mesh-gaps.conf");
        (now == "word one\n").then_some(())
    });
    eventually(Duration::from_secs(30), "the helper done", || {
        let running = on("node1", "ps -eo comm | grep -c '^mesh-host' || true");
        (running.trim() == "0").then_some(())
    });
    let checked = mesh.run(&["check", "node1"]).stdout;
    assert!(
        checked.contains(&format!(
            "node1: its last push, a rollback to generation {one}, was cut short"
        )),
        "{checked}"
    );
    // released, the plan says what the machine (at generation one) lacks of the inventory's
    mesh.run(&["rollback", "node1", "--release"]).ok();
    let plan = mesh.run(&["plan", "node1"]).stdout;
    assert!(plan.contains("node1: 0 to add, 1 to change"), "{plan}");
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", "cat /etc/mesh-gaps.conf"), "word two\n");
    cleaned(&mesh);
}

#[test]
fn a_rollback_that_cannot_send_gives_back_each_nodes_hold_and_says_so() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(1) else {
        return;
    };
    mesh.module("note", NOTE, &[("gaps.conf", "word ${word}\n")]);
    mesh.run(&["assign", "note", "node1"]).ok();
    let one = pushed(&mesh, "one");
    let two = pushed(&mesh, "two");
    mesh.run(&["rollback", "node1", "--to", &one.to_string()])
        .ok();
    // the inventory refuses to begin any push: the rollback fails before sending
    let db = rusqlite::Connection::open(mesh.inventory()).expect("inventory opens");
    db.execute_batch(
        "CREATE TRIGGER fault BEFORE INSERT ON pushes WHEN NEW.outcome = 'in-flight'
         BEGIN SELECT RAISE(ABORT, 'test fault: no push begins'); END;",
    )
    .expect("trigger");
    let failed = mesh.run(&["rollback", "node1", "--to", &two.to_string()]);
    assert_ne!(failed.status, 0, "{}", failed.stdout);
    for words in [
        "test fault: no push begins",
        &format!("node1 (held at generation {one} again)"),
    ] {
        assert!(failed.stderr.contains(words), "{words}: {}", failed.stderr);
    }
    db.execute_batch("DROP TRIGGER fault").expect("dropped");
    let plan = mesh.run(&["plan", "node1"]).code(3).stdout;
    assert!(
        plan.contains(&format!("node1: held at generation {one} by rollback")),
        "{plan}"
    );
    assert_eq!(on("node1", "cat /etc/mesh-gaps.conf"), "word one\n");
    cleaned(&mesh);
}
