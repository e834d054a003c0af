//! `mesh check`: the helper's dry run on each machine finds drift the inventory cannot know of (a
//! file edited by hand, a unit stopped) and reports nothing on a converged machine.

use crate::util::{Mesh, on};

const WATCHED: &str = r#"{
  "name": "watched", "version": "1", "description": "A file and a running unit to drift from.",
  "resources": [
    {"kind": "file", "path": "/etc/mesh-watched.conf", "template": "watched.conf"},
    {"kind": "service", "unit": "mesh-watched.service", "state": "running"}
  ]
}"#;

#[test]
fn check_finds_a_hand_edit_and_a_stopped_unit_and_nothing_on_a_converged_machine() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("watched", WATCHED, &[("watched.conf", "as declared\n")]);
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        "printf '[Service]\\nExecStart=/bin/sleep infinity\\n' >/etc/systemd/system/mesh-watched.service && systemctl daemon-reload",
    );
    mesh.run(&["assign", "watched", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let converged = mesh.run(&["check", "node1"]).ok();
    assert!(
        converged
            .stdout
            .contains("0 created, 0 changed, 2 unchanged"),
        "{}",
        converged.stdout
    );

    on("node1", "echo 'by hand' >>/etc/mesh-watched.conf");
    let drift = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(
        drift.contains("changed watched:file:/etc/mesh-watched.conf: would rewrite /etc/mesh-watched.conf (it was changed on the machine)"),
        "{drift}"
    );
    // check changed nothing
    assert!(on("node1", "cat /etc/mesh-watched.conf").contains("by hand"));

    mesh.run(&["push", "node1"]).ok();
    on("node1", "systemctl stop mesh-watched.service");
    let stopped = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(
        stopped.contains(
            "changed watched:service:mesh-watched.service: would start mesh-watched.service"
        ),
        "{stopped}"
    );
    mesh.run(&["push", "node1"]).ok();
    mesh.run(&["check", "node1"]).ok();

    mesh.run(&["unassign", "watched", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        "systemctl stop mesh-watched.service; rm -f /etc/systemd/system/mesh-watched.service; systemctl daemon-reload",
    );
}

#[test]
fn check_says_the_nodes_in_the_order_of_their_names_and_one_node_is_one_node() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1", "node2", "node3"])
        .ok();
    mesh.run(&["push", "--all"]).ok();
    // the nodes answer in any order; what is said is in the order of their names
    for _ in 0..3 {
        let run = mesh.run(&["check", "--all"]).ok();
        let said: Vec<&str> = run
            .stdout
            .lines()
            .filter_map(|l| l.split(':').next())
            .filter(|n| n.starts_with("node"))
            .collect();
        assert_eq!(said, ["node1", "node2", "node3"], "{}", run.stdout);
    }
    let one = mesh.run(&["check", "node2"]).ok();
    assert!(one.stdout.contains("1 node: 1 checked"), "{}", one.stdout);
}

#[test]
fn a_plan_of_a_never_asked_node_says_each_addition_may_take_over_and_that_check_asks_it() {
    // the first plan said `1 to add` and a diff from an empty /etc/motd, where the
    // push then found the machine's own /etc/motd and changed it
    let mesh = Mesh::new();
    mesh.add_offline_nodes();
    mesh.module(
        "greet",
        r#"{"name": "greet", "version": "1", "description": "A greeting.",
  "resources": [{"kind": "file", "path": "/etc/motd", "template": "motd"}]}"#,
        &[("motd", "hello\n")],
    );
    mesh.run(&["assign", "greet", "n1"]).ok();
    let plan = mesh.run(&["plan", "n1", "--diff"]).ok().stdout;
    for words in [
        "n1: 1 to add, 0 to change, 0 to remove (first push to this node: the machine was never \
         asked what it has, so each + may add or take over what is there; `mesh check n1` asks it)",
        "+ greet:file:/etc/motd — add, or take over what the machine has",
        "(against nothing: what the machine has is not known until asked)",
    ] {
        assert!(plan.contains(words), "{words:?} not in:\n{plan}");
    }
    let json = mesh.run(&["plan", "n1", "--json"]).ok().json();
    let n1 = &json[0];
    assert_eq!(n1["never_asked"]["ask_with"], "mesh check n1", "{n1}");
    assert_eq!(n1["changes"][0]["or_take_over"], true, "{n1}");
}
