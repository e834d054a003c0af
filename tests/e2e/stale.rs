//! Two inventories over one machine: B, imported from A's export, never undoes a
//! change A pushed and confirmed since; it is refused `stale` before anything changes, until
//! `mesh check` shows it what the machine has, or it pushes with `--overwrite`.

use std::time::Duration;

use crate::confirm_edges::push_after;
use crate::util::{Mesh, node_result, on, path_str};

/// B: an inventory imported from A's export as it is now.
fn imported(a: &Mesh) -> Mesh {
    let doc = a.run(&["inventory", "export"]).ok().stdout;
    let b = Mesh::bare();
    let file = b.dir.path().join("a.json");
    std::fs::write(&file, doc).unwrap();
    b.run(&["inventory", "import", path_str(&file)]).ok();
    b
}

fn banner(mesh: &Mesh, text: &str) {
    mesh.run(&["settings", "set", "motd", &format!("banner={text}")])
        .ok();
}

fn motd() -> String {
    on("node1", "cat /etc/motd")
}

#[test]
fn a_push_from_a_stale_inventory_is_refused_until_checked_or_told_to_overwrite() {
    let a = Mesh::new();
    let Some(_machines) = a.with_lab() else {
        return;
    };
    a.run(&["assign", "motd", "node1"]).ok();
    banner(&a, "A one");
    a.run(&["push", "node1"]).ok();
    let b = imported(&a);
    // A pushes and it is confirmed; B has not seen it
    banner(&a, "A two");
    let pushed = a.run(&["--json", "push", "node1"]).ok().json();
    let number = node_result(&pushed, "node1")["report"]["generation"]["number"].clone();
    assert!(number.as_u64().is_some_and(|n| n > 0), "{pushed}");
    let a_has = motd();
    assert!(a_has.contains("A two"), "{a_has}");

    banner(&b, "B one");
    let refused = b.run(&["push", "node1"]).code(2);
    for words in [
        "node1: FAILED (stale)",
        "nothing on the machine was changed",
        &format!("generation {number}"),
        "`mesh check node1`",
    ] {
        assert!(
            refused.stdout.contains(words),
            "{words}: {}",
            refused.stdout
        );
    }
    let json = b.run(&["--json", "push", "node1"]).code(2).json();
    let node1 = node_result(&json, "node1");
    assert_eq!(node1["kind"], "stale", "{node1}");
    assert_eq!(node1["generation"]["number"], number, "{node1}");
    assert_eq!(motd(), a_has, "a refused push changed the machine");

    // once B has checked, its plan is made against what the machine has, and its push goes
    b.run(&["check", "node1"]).code(4);
    let plan = b.run(&["plan", "node1"]).stdout;
    assert!(
        plan.contains("/etc/motd") && !plan.contains("no changes"),
        "{plan}"
    );
    b.run(&["push", "node1"]).ok();
    assert!(motd().contains("B one"), "{}", motd());

    // now A is the stale one; --overwrite says so and replaces B's generation
    a.run(&["push", "node1"]).code(2);
    assert!(motd().contains("B one"), "{}", motd());
    let over = a.run(&["push", "node1", "--overwrite"]).ok();
    assert!(
        over.stdout.contains("node1: --overwrite"),
        "{}",
        over.stdout
    );
    assert_eq!(motd(), a_has);
    a.run(&["unassign", "motd", "node1"]).ok();
    a.run(&["push", "node1"]).ok();
}

#[test]
fn two_inventories_racing_never_undo_a_confirmed_change_and_every_refusal_is_stale() {
    let a = Mesh::new();
    let Some(_machines) = a.with_lab() else {
        return;
    };
    a.run(&["assign", "motd", "node1"]).ok();
    a.run(&["push", "node1"]).ok();
    let b = imported(&a);
    let mut kept = motd();
    let (mut a_won, mut b_won) = (0, 0);
    for round in 0..20u64 {
        banner(&a, &format!("A {round}"));
        banner(&b, &format!("B {round}"));
        // one side in three first checks (it then plans against the machine), the other may be
        // stale; who starts first alternates, the other a little later or at once
        if round % 3 == 1 {
            b.run(&["check", "node1"]);
        } else if round % 3 == 2 {
            a.run(&["check", "node1"]);
        }
        let lag = Duration::from_millis((round * 53) % 250);
        let (a_delay, b_delay) = if round % 2 == 0 {
            (lag, Duration::ZERO)
        } else {
            (Duration::ZERO, lag)
        };
        let (pushed_a, pushed_b) = (push_after(&a, a_delay, "10"), push_after(&b, b_delay, "10"));
        let (pushed_a, pushed_b) = (pushed_a.join().unwrap(), pushed_b.join().unwrap());
        let sides = [
            ("A", node_result(&pushed_a, "node1").clone()),
            ("B", node_result(&pushed_b, "node1").clone()),
        ];
        let now = motd();
        let mut applied = Vec::new();
        for (side, result) in &sides {
            if result["outcome"] == "applied" {
                applied.push(*side);
            } else {
                assert_eq!(
                    result["kind"], "stale",
                    "round {round}: {side} failed, not stale: {result}"
                );
            }
        }
        match applied.as_slice() {
            // a refused push changed nothing
            [] => assert_eq!(now, kept, "round {round}: {sides:?}"),
            [side] => {
                assert!(
                    now.contains(&format!("{side} {round}")),
                    "round {round}: {side} applied, the machine has {now}: {sides:?}"
                );
                if *side == "A" {
                    a_won += 1
                } else {
                    b_won += 1
                }
                kept = now;
            }
            // both went through: the second undid the first without being told
            _ => panic!("round {round}: both applied: {sides:?}"),
        }
    }
    println!("20 rounds: A won {a_won}, B won {b_won}");
    assert!(a_won > 0 && b_won > 0, "A won {a_won}, B won {b_won}");
    a.run(&["unassign", "motd", "node1"]).ok();
    a.run(&["push", "node1", "--overwrite"]).ok();
}

/// Found by an attacker: a copy of A's own inventory, taken while a push was being sent (so its
/// last push reads as unrecorded), took every later generation of A as that push's and undid
/// them. It may take only the one generation that push could have made.
#[test]
fn a_backup_taken_mid_push_never_undoes_the_pushes_made_since() {
    let a = Mesh::new();
    let Some(_machines) = a.with_lab() else {
        return;
    };
    a.run(&["assign", "motd", "node1"]).ok();
    banner(&a, "A one");
    a.run(&["push", "node1"]).ok();
    // the backup, as if copied while the next push was being sent
    let backup = Mesh::bare();
    std::fs::copy(a.inventory(), backup.inventory()).unwrap();
    let db = rusqlite::Connection::open(backup.inventory()).unwrap();
    db.execute(
        "INSERT INTO pushes (node, started_at, digest, outcome) VALUES ('node1', '2026-12-02T00:00:00Z', 'sha256:0', 'in-flight')",
        [],
    )
    .unwrap();
    drop(db);
    for text in ["A two", "A three"] {
        banner(&a, text);
        a.run(&["push", "node1"]).ok();
    }
    let a_has = motd();
    banner(&backup, "restored");
    let refused = backup.run(&["--json", "push", "node1"]).code(2).json();
    assert_eq!(node_result(&refused, "node1")["kind"], "stale", "{refused}");
    assert_eq!(motd(), a_has, "the backup undid A's later pushes");
}

/// Found by an attacker: a backup copied while a push was in flight, and one push of the live
/// inventory since (one past what the backup planned against, by the same inventory id): the
/// backup took that generation for its own lost push's and undid it. The generation names the
/// push that made it, and the backup's lost push is another.
#[test]
fn a_backup_taken_mid_push_never_takes_the_one_push_made_since_for_its_own() {
    let a = Mesh::new();
    let Some(_machines) = a.with_lab() else {
        return;
    };
    a.run(&["assign", "motd", "node1"]).ok();
    banner(&a, "A one");
    a.run(&["push", "node1"]).ok();
    let backup = Mesh::bare();
    std::fs::copy(a.inventory(), backup.inventory()).unwrap();
    let db = rusqlite::Connection::open(backup.inventory()).unwrap();
    db.execute(
        "INSERT INTO pushes (node, started_at, digest, outcome, nonce) VALUES ('node1', '2026-12-02T00:00:00Z', 'sha256:0', 'in-flight', '0123456789abcdef')",
        [],
    )
    .unwrap();
    drop(db);
    banner(&a, "A two");
    a.run(&["push", "node1"]).ok();
    let a_has = motd();
    banner(&backup, "restored");
    let refused = backup.run(&["--json", "push", "node1"]).code(2).json();
    assert_eq!(node_result(&refused, "node1")["kind"], "stale", "{refused}");
    assert_eq!(
        motd(),
        a_has,
        "the backup undid A's push made since it was copied"
    );
}

/// Found by an attacker: after the machine lost its record (adopted again, so it has no
/// generation) and B pushed, B's generation has a lower number than the one A last saw; A took it
/// for an older one of its own and undid B's push unseen.
#[test]
fn a_lower_generation_from_another_inventory_is_not_undone_unseen() {
    let a = Mesh::new();
    let Some(_machines) = a.with_lab() else {
        return;
    };
    a.run(&["assign", "motd", "node1"]).ok();
    banner(&a, "A one");
    a.run(&["push", "node1"]).ok();
    let b = imported(&a);
    for text in ["A two", "A three"] {
        banner(&a, text);
        a.run(&["push", "node1"]).ok();
    }
    on("node1", "rm /var/lib/mesh/record.json");
    a.run(&["node", "adopt", "node1"]).ok();
    banner(&b, "B after the loss");
    b.run(&["push", "node1"]).ok();
    assert!(motd().contains("B after the loss"), "{}", motd());
    banner(&a, "A four");
    let refused = a.run(&["--json", "push", "node1"]).code(2).json();
    assert_eq!(node_result(&refused, "node1")["kind"], "stale", "{refused}");
    assert!(motd().contains("B after the loss"), "{}", motd());
    // once A has checked, it knows the machine's generation and its push goes through
    a.run(&["check", "node1"]).code(4);
    a.run(&["push", "node1"]).ok();
    assert!(motd().contains("A four"), "{}", motd());
}

/// The helper this mesh uploaded, as it lies on the machine.
fn helper_there() -> String {
    let sum = std::process::Command::new("sha256sum")
        .arg(crate::helper::helper())
        .output()
        .expect("sha256sum runs");
    let sum = String::from_utf8_lossy(&sum.stdout);
    let sha = sum.split_whitespace().next().expect("a digest").to_string();
    format!("/var/lib/mesh/bin/mesh-host-{sha}")
}

/// Found by an attacker: a machine rolled back at its console to another inventory's
/// generation, once checked, made `plan` say `no changes` while the push changed it back.
#[test]
fn after_a_check_finds_the_machine_rolled_back_to_another_inventorys_generation_the_plan_shows_the_change()
 {
    let a = Mesh::new();
    let Some(_machines) = a.with_lab() else {
        return;
    };
    a.run(&["assign", "motd", "node1"]).ok();
    banner(&a, "A one");
    a.run(&["push", "node1"]).ok();
    let b = imported(&a);
    b.run(&["check", "node1"]).ok();
    banner(&b, "B one");
    let pushed = b.run(&["--json", "push", "node1"]).ok().json();
    let from_b = node_result(&pushed, "node1")["report"]["generation"]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("{pushed}"));
    a.run(&["check", "node1"]).code(4);
    banner(&a, "A two");
    a.run(&["push", "node1"]).ok();
    assert!(motd().contains("A two"), "{}", motd());
    // root at the console takes it back to B's generation, which A does not keep
    on("node1", &format!("{} rollback {from_b}", helper_there()));
    assert!(motd().contains("B one"), "{}", motd());
    let checked = a.run(&["check", "node1"]).code(4);
    assert!(
        checked
            .stdout
            .contains("plans are made against it from now on"),
        "{}",
        checked.stdout
    );
    let plan = a.run(&["plan", "node1"]).ok();
    assert!(
        !plan.stdout.contains("no changes") && plan.stdout.contains("/etc/motd"),
        "{}",
        plan.stdout
    );
    let pushed = a.run(&["--json", "push", "node1"]).ok().json();
    assert!(motd().contains("A two"), "{}", motd());
    assert!(
        pushed.to_string().contains("/etc/motd"),
        "the push changed what the plan said: {pushed}"
    );
}
