//! What an attacker found open in generations and rollback, each closed: a check
//! while another helper applies, a killed rollback checked, holds carried by export and import,
//! a rollback whose waves fail to send, a rollback's plan made from what the machine has now.

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
    let holder = lock_held("-x");
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

/// node1's machine lock, held as an applying helper holds it (`-x`) or a checking one (`-s`),
/// until the returned ssh ends.
fn lock_held(how: &str) -> std::process::Child {
    // -o: flock keeps the lock, not its sleep, so `pkill -x flock` lets go of it
    let held = format!("exec flock -o {how} /var/lib/mesh/lock sleep 60");
    let holder = ssh_command("node1", &held)
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
    // the rollback's helper waits for the lock; its operator is killed meanwhile. The lock is
    // held as a check holds it: the rollback's own read of the machine goes by, its apply waits
    let holder = lock_held("-s");
    let mut rolling = mesh
        .command(&["rollback", "node1", "--to", &one.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("mesh runs");
    let db = rusqlite::Connection::open(mesh.inventory()).expect("inventory opens");
    eventually(Duration::from_secs(30), "the rollback's helper", || {
        // its push begun (the read is done), and its helper on the machine
        let begun: i64 = db
            .query_row(
                "SELECT count(*) FROM pushes WHERE node = 'node1' AND outcome = 'in-flight'",
                [],
                |r| r.get(0),
            )
            .unwrap_or(0);
        let running = on("node1", "ps -eo comm | grep -c '^mesh-host' || true");
        (begun > 0 && running.trim() != "0").then_some(())
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

/// Two files: one that says the word, one that never changes.
const TWO: &str = r#"{
  "name": "note", "version": "1", "description": "Two files, one says a word.",
  "settings": [{"name": "word", "type": "string", "meaning": "What it says.", "default": "one", "cost": "none"}],
  "resources": [
    {"kind": "file", "path": "/etc/mesh-gaps.conf", "template": "gaps.conf"},
    {"kind": "file", "path": "/etc/mesh-gaps-still.conf", "template": "still.conf"}
  ]
}"#;

const FILES: &str = "/etc/mesh-gaps.conf /etc/mesh-gaps-still.conf";

#[test]
fn a_rollbacks_plan_is_made_from_what_the_machine_has_and_puts_its_generation_back() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(1) else {
        return;
    };
    mesh.module(
        "note",
        TWO,
        &[("gaps.conf", "word ${word}\n"), ("still.conf", "still\n")],
    );
    mesh.run(&["assign", "note", "node1"]).ok();
    let one = pushed(&mesh, "one").to_string();
    let first = on("node1", &format!("sha256sum {FILES}"));
    pushed(&mesh, "two");
    pushed(&mesh, "three");
    // both files edited by hand after generation three: the still one is the same in every
    // generation, so only the machine can say it moved
    on(
        "node1",
        "printf 'edited by hand\\n' >/etc/mesh-gaps.conf; \
         printf 'still, edited\\n' >/etc/mesh-gaps-still.conf",
    );
    let edited = on("node1", &format!("sha256sum {FILES}"));
    let dry = mesh
        .run(&["rollback", "node1", "--to", &one, "--dry-run", "--diff"])
        .code(4)
        .stdout;
    for words in [
        "planned against what the machine has:",
        "node1: 0 to add, 2 to change, 0 to remove",
        "-edited by hand",
        "+word one",
        "~ note:file:/etc/mesh-gaps-still.conf (differs on the machine)",
        "-still, edited",
        "+still",
    ] {
        assert!(dry.contains(words), "{words}: {dry}");
    }
    // the diff is from the machine's bytes, not from what generation three confirmed
    assert!(!dry.contains("-word three"), "{dry}");
    let json = mesh
        .run(&["--json", "rollback", "node1", "--to", &one, "--dry-run"])
        .code(4)
        .json();
    let mut drift: Vec<&str> = json[0]["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["drift"] == true)
        .filter_map(|c| c["id"].as_str())
        .collect();
    drift.sort_unstable();
    // both were edited by hand: the one generation one changes anyway is said too (found by an
    // attacker: a hand edit under a change the rollback makes was hidden)
    assert_eq!(
        drift,
        [
            "note:file:/etc/mesh-gaps-still.conf",
            "note:file:/etc/mesh-gaps.conf"
        ],
        "{json}"
    );
    // a dry run changes nothing, on the machine or in the inventory
    assert_eq!(on("node1", &format!("sha256sum {FILES}")), edited);
    assert!(!mesh.run(&["plan", "node1"]).ok().stdout.contains("held at"));

    // a node whose machine cannot be asked is named, and not rolled back (nor held)
    let db = rusqlite::Connection::open(mesh.inventory()).expect("inventory opens");
    let address: String = db
        .query_row("SELECT address FROM nodes WHERE name = 'node1'", [], |r| {
            r.get(0)
        })
        .expect("node1's address");
    db.execute(
        "UPDATE nodes SET address = '192.0.2.1' WHERE name = 'node1'",
        [],
    )
    .expect("moved");
    let unread = mesh
        .run(&["rollback", "node1", "--to", &one, "--connect-timeout", "2"])
        .code(2)
        .stdout;
    assert!(
        unread.contains("node1: not rolled back: what its machine has could not be read"),
        "{unread}"
    );
    db.execute(
        "UPDATE nodes SET address = ?1 WHERE name = 'node1'",
        [&address],
    )
    .expect("back");
    assert!(!mesh.run(&["plan", "node1"]).ok().stdout.contains("held at"));
    assert_eq!(on("node1", &format!("sha256sum {FILES}")), edited);

    mesh.run(&["rollback", "node1", "--to", &one]).ok();
    assert_eq!(on("node1", &format!("sha256sum {FILES}")), first);
    cleaned(&mesh);
}

#[test]
fn an_inventory_imported_from_an_export_keeps_a_rollbacks_hold() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(1) else {
        return;
    };
    mesh.module("note", NOTE, &[("gaps.conf", "word ${word}\n")]);
    mesh.run(&["assign", "note", "node1"]).ok();
    let one = pushed(&mesh, "one");
    pushed(&mesh, "two");
    mesh.run(&["rollback", "node1", "--to", &one.to_string()])
        .ok();
    let exported = mesh.run(&["inventory", "export"]).ok().stdout;
    assert!(exported.contains("\"held-at\""), "{exported}");
    let file = mesh.inventory().with_file_name("a.json");
    std::fs::write(&file, &exported).expect("written");
    // B: another inventory, made from A's export
    let b = mesh.inventory().with_file_name("b.db");
    let in_b = |args: &[&str]| {
        crate::util::Run::from(
            mesh.command(args)
                .env("MESH_INVENTORY", &b)
                .output()
                .expect("mesh runs"),
        )
    };
    let file = file.to_str().expect("a path");
    in_b(&["inventory", "import", file]).ok();
    let held = format!("node1: held at generation {one} by rollback");
    let plan = in_b(&["plan", "node1"]).code(3).stdout;
    assert!(plan.contains(&held), "{plan}");
    let json = in_b(&["--json", "plan", "node1"]).code(3).json();
    let entry = node_result(&json, "node1");
    assert_eq!(entry["outcome"], "held", "{json}");
    assert_eq!(entry["held"]["generation"], one, "{json}");
    // B's push leaves it at generation one, though B's declaration says two
    let push = in_b(&["push", "node1"]).code(3).stdout;
    assert!(push.contains(&held), "{push}");
    assert_eq!(on("node1", "cat /etc/mesh-gaps.conf"), "word one\n");
    // released in B, B's push sends B's declaration
    in_b(&["rollback", "node1", "--release"]).ok();
    in_b(&["push", "node1"]).ok();
    assert_eq!(on("node1", "cat /etc/mesh-gaps.conf"), "word two\n");
    mesh.run(&["check", "node1"]).ok();
    cleaned(&mesh);
}
