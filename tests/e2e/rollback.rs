//! `mesh rollback`: a node sent a generation the inventory kept again, exactly as it
//! was sent, through the same plan and push as any; every file back byte for byte, only what that
//! generation's costs say restarted; the node then held there until `--release`. `--push ID`
//! takes every node of a past push back to the generation it had before it.

use crate::util::{Mesh, invocation, node_result, on};

/// A file, a key merged into a shared file, a process whose command changes with `word`, and
/// one that never changes.
const REWIND: &str = r#"{
  "name": "rewind", "version": "1", "description": "A file, a key and a process that say a word.",
  "settings": [{"name": "word", "type": "string", "meaning": "What it says.", "default": "one", "cost": "restart"}],
  "resources": [
    {"kind": "file", "path": "/etc/mesh-rewind.conf", "template": "rewind.conf"},
    {"kind": "keys", "path": "/etc/mesh-rewind.json", "mode": "0644", "keys": {"word": "${word}"}},
    {"kind": "process", "name": "worker", "description": "Says its word, then sleeps",
     "command": ["/bin/sh", "-c", "echo ${word}; exec sleep infinity"]},
    {"kind": "process", "name": "still", "description": "Sleeps, never changed",
     "command": ["/bin/sh", "-c", "exec sleep infinity"]}
  ]
}"#;

/// A file generation 1 did not have.
const EXTRA: &str = r#"{
  "name": "extra", "version": "1", "description": "One more file.",
  "resources": [{"kind": "file", "path": "/etc/mesh-rewind-extra.conf", "template": "extra.conf"}]
}"#;

/// What generation 1 writes, as its sha256 on the machine.
const WRITTEN: &str = "/etc/mesh-rewind.conf /etc/mesh-rewind.json \
                       /etc/systemd/system/rewind-worker.service";

fn sums(node: &str) -> String {
    on(node, &format!("sha256sum {WRITTEN}"))
}

/// Pushes `nodes` with `word`, returning the generation the push made on each.
fn pushed(mesh: &Mesh, nodes: &[&str], word: &str) -> Vec<u64> {
    mesh.run(&["settings", "set", "rewind", &format!("word={word}")])
        .ok();
    let mut args = vec!["--json", "push"];
    args.extend(nodes);
    let out = mesh.run(&args).ok().json();
    nodes
        .iter()
        .map(|n| {
            let r = node_result(&out, n);
            r["report"]["generation"]["number"]
                .as_u64()
                .unwrap_or_else(|| panic!("{n}: no generation: {r}"))
        })
        .collect()
}

fn generation(mesh: &Mesh, node: &str) -> u64 {
    let out = mesh.run(&["--json", "check", node]).json();
    node_result(&out, node)["report"]["generation"]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("{node}: no generation: {out}"))
}

/// Three pushes of node1: the first generation's number (the lab machine's count goes on from
/// earlier tests) and what it wrote.
fn three_generations(mesh: &Mesh) -> (u64, String) {
    // the keys are merged into a file that holds another's key too
    on(
        "node1",
        r#"printf '{"other": "kept"}\n' >/etc/mesh-rewind.json"#,
    );
    mesh.module("rewind", REWIND, &[("rewind.conf", "word ${word}\n")]);
    mesh.module("extra", EXTRA, &[("extra.conf", "extra\n")]);
    mesh.run(&["assign", "rewind", "node1"]).ok();
    let [one] = pushed(mesh, &["node1"], "one")[..] else {
        panic!("one node pushed")
    };
    let first = sums("node1");
    mesh.run(&["assign", "extra", "node1"]).ok();
    assert_eq!(pushed(mesh, &["node1"], "two"), [one + 1]);
    assert_eq!(pushed(mesh, &["node1"], "three"), [one + 2]);
    let history = mesh.run(&["history", "node1"]).ok().stdout;
    for n in one..=one + 2 {
        assert!(history.contains(&format!("(generation {n}: ")), "{history}");
    }
    (one, first)
}

#[test]
fn a_rollback_puts_back_generation_one_byte_for_byte_and_holds_the_node_until_released() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(1) else {
        return;
    };
    let (one, first) = three_generations(&mesh);
    let gen1 = one.to_string();
    let third = sums("node1");
    assert_ne!(first, third);
    let (worker, still) = (
        invocation("node1", "rewind-worker.service"),
        invocation("node1", "rewind-still.service"),
    );

    // the plan from what the machine has to what generation 1 had, and nothing sent
    let dry = mesh
        .run(&["rollback", "node1", "--to", &gen1, "--dry-run"])
        .code(4);
    assert!(
        dry.stdout
            .contains(&format!("node1: rollback to generation {one} (push #")),
        "{}",
        dry.stdout
    );
    let planned = mesh
        .run(&["--json", "rollback", "node1", "--to", &gen1, "--dry-run"])
        .code(4)
        .json();
    let changes = planned[0]["changes"].to_string();
    for id in [
        "rewind:file:/etc/mesh-rewind.conf",
        "extra:file:/etc/mesh-rewind-extra.conf",
    ] {
        assert!(changes.contains(id), "{id}: {changes}");
    }
    let units = planned[0]["units"].to_string();
    assert!(units.contains("rewind-worker.service"), "{units}");
    assert!(!units.contains("rewind-still.service"), "{units}");
    assert_eq!(sums("node1"), third);

    let rolled = mesh.run(&["rollback", "node1", "--to", &gen1]).ok().stdout;
    let line = format!(
        "node1: held at generation {one} by rollback (mesh rollback node1 --release to release)"
    );
    assert!(rolled.contains(&line), "{rolled}");
    assert_eq!(sums("node1"), first, "every file back byte for byte");
    assert!(on("node1", "cat /etc/mesh-rewind.json").contains("\"other\""));
    assert_eq!(
        on(
            "node1",
            "test -e /etc/mesh-rewind-extra.conf && echo there || echo gone"
        )
        .trim(),
        "gone",
        "what generation 1 did not have is given back as found"
    );
    assert_ne!(invocation("node1", "rewind-worker.service"), worker);
    assert_eq!(invocation("node1", "rewind-still.service"), still);
    assert_eq!(
        generation(&mesh, "node1"),
        one + 3,
        "a new generation, with the first's content"
    );
    let history = mesh.run(&["history", "node1", "--limit", "1"]).ok().stdout;
    // three changed back, and the file generation 1 did not have given back
    let made = format!(
        "(generation {}: 3 changed, 1 removed; rollback to generation {one})",
        one + 3
    );
    assert!(history.contains(&made), "{history}");
    let checked = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(checked.contains(&line), "check says the hold: {checked}");

    // held: plan says so and what differs; push leaves it
    let plan = mesh.run(&["plan", "node1"]).code(3).stdout;
    assert!(
        plan.contains(&line)
            && plan.contains(&format!("differs from generation {one} in 4 resources")),
        "{plan}"
    );
    let push = mesh.run(&["--json", "push", "--all"]).code(3).json();
    let held = node_result(&push, "node1");
    assert_eq!(held["held"]["generation"], one, "{held}");
    assert_eq!(held["kind"], "rollback", "{held}");
    assert_eq!(sums("node1"), first);
    assert_eq!(generation(&mesh, "node1"), one + 3);

    // released, a push brings the third's content back as a generation of its own, the fifth
    mesh.run(&["rollback", "node1", "--release"]).ok();
    assert_eq!(pushed(&mesh, &["node1"], "three"), [one + 4]);
    assert_eq!(sums("node1"), third);
    mesh.run(&["unassign", "rewind", "node1"]).ok();
    mesh.run(&["unassign", "extra", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

#[test]
fn a_rollback_of_a_push_takes_each_of_its_nodes_back_to_the_generation_before_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(3) else {
        return;
    };
    let all = ["node1", "node2", "node3"];
    mesh.module("rewind", REWIND, &[("rewind.conf", "word ${word}\n")]);
    for n in all {
        mesh.run(&["assign", "rewind", n]).ok();
    }
    let before = pushed(&mesh, &all, "before");
    let sums_before: Vec<String> = all.iter().map(|n| sums(n)).collect();
    let after = pushed(&mesh, &all, "after");
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(a, &(b + 1));
    }
    let history = mesh
        .run(&["--json", "history", "node2", "--limit", "1"])
        .ok()
        .json();
    let id = history[0]["id"]
        .as_i64()
        .expect("the push's id")
        .to_string();

    mesh.run(&["rollback", "--push", &id, "--dry-run"]).code(4);
    // in waves, as a push: the canary first
    let rolled = mesh
        .run(&["rollback", "--push", &id, "--canary", "1"])
        .ok()
        .stdout;
    assert!(rolled.contains("wave 1 of 2 (canary): node1"), "{rolled}");
    for (i, n) in all.iter().enumerate() {
        assert_eq!(sums(n), sums_before[i], "{n}");
        assert_eq!(generation(&mesh, n), after[i] + 1, "{n}");
    }
    let plan = mesh.run(&["plan", "--all"]).code(3).stdout;
    for (n, b) in all.iter().zip(&before) {
        let line = format!("{n}: held at generation {b} by rollback");
        assert!(plan.contains(&line), "{plan}");
    }
    mesh.run(&["rollback", "node*", "--release"]).ok();
    for n in all {
        mesh.run(&["unassign", "rewind", n]).ok();
    }
    mesh.run(&["push", "--all"]).ok();
}
