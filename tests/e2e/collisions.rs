//! What must stay single on a machine (`resolve::collisions`): a module whose settings bring two
//! of its own resources to one path on a node is refused by `plan` and by `push`, naming the
//! instance and the path, before anything reaches the machine. Before, the push wrote the file
//! twice and then could not record it (the inventory keeps each resource once: `UNIQUE
//! constraint failed: confirmed.node, confirmed.id`), and the next push was refused as stale
//! until a `mesh check`. Found by an attacker.

use crate::util::{Mesh, on};

const NODE: &str = "node3";

/// Two files whose paths are settings.
const TWO: &str = r#"{
  "name": "two", "version": "1", "description": "Two files whose paths are settings.",
  "settings": [
    {"name": "first", "type": "string", "meaning": "The first file.", "default": "/etc/mesh-two-a.conf", "cost": "none"},
    {"name": "second", "type": "string", "meaning": "The second file.", "default": "/etc/mesh-two-b.conf", "cost": "none"}
  ],
  "resources": [
    {"kind": "file", "path": "${first}", "template": "a.conf"},
    {"kind": "file", "path": "${second}", "template": "b.conf"}
  ]
}"#;

const BOTH: &str = "cat /etc/mesh-two-a.conf /etc/mesh-two-b.conf";

#[test]
fn two_resources_a_nodes_settings_bring_to_one_path_are_refused_and_nothing_is_sent() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on(NODE, "rm -f /etc/mesh-two-a.conf /etc/mesh-two-b.conf");
    mesh.module("two", TWO, &[("a.conf", "first\n"), ("b.conf", "second\n")]);
    mesh.run(&["assign", "two", NODE]).ok();
    mesh.run(&["push", NODE]).ok();
    assert_eq!(on(NODE, BOTH), "first\nsecond\n");

    mesh.run(&[
        "settings",
        "set",
        "two",
        "--node",
        NODE,
        "second=/etc/mesh-two-a.conf",
    ])
    .ok();
    let said = "two declares the file /etc/mesh-two-a.conf twice";
    let plan = mesh.run(&["plan", NODE]).code(1).stderr;
    assert!(plan.contains(said), "{plan}");
    let push = mesh.run(&["push", NODE]).code(1).stderr;
    assert!(
        push.contains(said) && push.contains("nothing was sent"),
        "{push}"
    );
    assert_eq!(on(NODE, BOTH), "first\nsecond\n", "the machine was changed");

    // set apart again: nothing to do, and the push is not refused as stale
    mesh.run(&["settings", "clear", "two", "--node", NODE]).ok();
    let again = mesh.run(&["push", NODE]).ok().stdout;
    assert!(again.contains("0 changed"), "{again}");
    mesh.run(&["unassign", "two", NODE]).ok();
    mesh.run(&["push", NODE]).ok();
    assert_eq!(
        on(
            NODE,
            "ls /etc/mesh-two-a.conf /etc/mesh-two-b.conf 2>/dev/null | wc -l"
        )
        .trim(),
        "0"
    );
}
