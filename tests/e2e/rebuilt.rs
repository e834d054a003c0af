//! A machine rebuilt at the same address: a blank disk, new host keys pinned, the
//! inventory keeping what it knew. It is new, not a machine that lost its record: the plan says
//! the machine may be another until it is asked; `check` finds it new and records that, so the
//! plan then shows everything to add; a push to it applies in full, and never says "no changes"
//! while it sends nothing.

use crate::adopt::motd;
use crate::util::{Mesh, node_result, on, rebuild, states};

/// The plan of `node` says it has nothing to do.
fn no_changes(mesh: &Mesh, node: &str) {
    let plan = mesh.run(&["plan", node]).ok().stdout;
    assert!(plan.contains(&format!("{node}: no changes")), "{plan}");
}

/// The push applied all of the declaration to `node` (Debian's /etc/motd replaced and kept as
/// its original), and the plan then has nothing left to do.
fn applied_in_full(mesh: &Mesh, push: &serde_json::Value, node: &str) {
    let result = node_result(push, node);
    assert_eq!(result["outcome"], "applied", "{result}");
    assert_eq!(
        states(result),
        [("motd:file:/etc/motd".to_string(), "changed".to_string())],
        "{result}"
    );
    let detail = result["report"]["resources"][0]["detail"].as_str();
    assert!(
        detail.is_some_and(|d| d.contains("the original is kept")),
        "{result}"
    );
    assert!(on(node, "cat /etc/motd").contains("managed by mesh"));
    no_changes(mesh, node);
}

#[test]
fn a_rebuilt_machine_is_found_new_by_check_and_the_plan_then_shows_everything_to_add() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    no_changes(&mesh, "node3");

    rebuild(&mesh, "node3");
    let debians = motd("node3");
    // the plan is made without asking the machine: it says the machine may be another
    let plan = mesh.run(&["plan", "node3"]).ok().stdout;
    assert!(
        plan.contains(
            "another machine may be at its address (rebuilt); the next check or push asks it"
        ),
        "{plan}"
    );

    // the machine is asked: new, not lost
    let check = mesh.run(&["check", "node3", "--json"]).code(4).json();
    let node3 = node_result(&check, "node3");
    assert_eq!(node3["outcome"], "checked", "{node3}");
    assert_eq!(node3["report"]["new_machine"], true, "{node3}");
    let plan = mesh.run(&["plan", "node3"]).ok().stdout;
    for words in [
        "node3: new: `mesh check` found no record and no signs of the mesh",
        "node3: 1 to add, 0 to change, 0 to remove",
        "+ motd:file:/etc/motd",
    ] {
        assert!(
            plan.contains(words),
            "the plan does not say {words:?}:\n{plan}"
        );
    }
    let history = mesh.run(&["history", "node3"]).ok().stdout;
    assert!(history.contains("new"), "{history}");

    // the push applies everything (the machine's own motd replaced, kept as its original)
    let push = mesh.run(&["push", "node3", "--json"]).ok().json();
    applied_in_full(&mesh, &push, "node3");
    mesh.run(&["unassign", "motd", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(
        motd("node3"),
        debians,
        "the rebuilt machine's own /etc/motd"
    );
}

#[test]
fn a_push_to_a_rebuilt_machine_applies_in_full_even_behind_and_unchecked() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node2"]).ok();
    mesh.run(&["push", "node2"]).ok();

    rebuild(&mesh, "node2");
    // `--behind` sends to a node whose machine may be another, rather than skip it
    let push = mesh
        .run(&["push", "--all", "--behind", "--json"])
        .ok()
        .json();
    applied_in_full(&mesh, &push, "node2");
    // and it is the inventory's machine again: a record lost now is refused, never taken for new
    on("node2", "rm -rf /var/lib/mesh");
    let refused = mesh.run(&["push", "node2"]).code(2).stdout;
    assert!(refused.contains("node2: FAILED (record)"), "{refused}");
    mesh.run(&["node", "adopt", "node2"]).ok();
    mesh.run(&["unassign", "motd", "node2"]).ok();
    mesh.run(&["push", "node2"]).ok();
}
