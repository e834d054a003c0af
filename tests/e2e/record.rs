//! The record is the machine's memory, and its loss is never silent: a machine whose
//! record was deleted is refused by the next push, naming what was found and how to recover, and
//! nothing on it changes; `mesh node adopt` recovers it, and the host's own /etc/issue still comes
//! back byte for byte. A record of a version the helper does not know is refused, naming it.

use crate::util::{Mesh, node_result, on, states};

const MEMORY: &str = r#"{
  "name": "memory", "version": "1", "description": "A replaced file and a process, to lose the record over.",
  "settings": [{"name": "greeting", "type": "string", "meaning": "What the worker says.", "default": "hello", "cost": "none"}],
  "resources": [
    {"kind": "file", "path": "/etc/issue", "template": "issue", "mode": "0644"},
    {"kind": "process", "name": "worker", "description": "A worker that says its greeting",
     "command": ["/bin/sh", "run.sh"], "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

const RUN_SH: &str = "echo ${greeting} >/run/memory-worker\nexec sleep infinity\n";

/// /etc/issue as the host has it: content, owner and mode.
fn issue() -> String {
    on(
        "node1",
        "sha256sum /etc/issue | cut -d' ' -f1; stat -c '%u:%g %a' /etc/issue",
    )
}

/// Everything a push would touch on node1, to show a refused push touched nothing.
fn snapshot() -> String {
    on(
        "node1",
        "cd /var/lib/mesh; sha256sum /etc/issue /etc/systemd/system/memory-worker.service \
         bundles/memory-worker/run.sh; stat -c '%n %u:%g %a %Y' /etc/issue; \
         ls -A originals kept bundles; cat /run/memory-worker; \
         systemctl show -p ActiveEnterTimestamp -p MainPID memory-worker.service",
    )
}

/// A machine with nothing of the mesh's on it, whatever an earlier run of these tests left.
fn clean(mesh: &Mesh) {
    if mesh.run(&["push", "node1"]).status != 0 {
        mesh.run(&["node", "adopt", "node1"]).ok();
        mesh.run(&["push", "node1"]).ok();
    }
}

#[test]
fn a_machine_whose_record_was_deleted_is_refused_until_adopted_and_loses_nothing() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    clean(&mesh);
    on("node1", "chown 1:1 /etc/issue; chmod 0604 /etc/issue");
    let original = issue();
    mesh.module(
        "memory",
        MEMORY,
        &[("issue", "Managed by mesh.\n"), ("run.sh", RUN_SH)],
    );
    mesh.run(&["assign", "memory", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", "cat /etc/issue"), "Managed by mesh.\n");

    on("node1", "rm /var/lib/mesh/record.json");
    // what the next push would change, were it to go ahead
    mesh.module(
        "memory",
        MEMORY,
        &[("issue", "Managed by mesh, again.\n"), ("run.sh", RUN_SH)],
    );
    mesh.run(&["settings", "set", "memory", "greeting=bonjour"])
        .ok();
    let before = snapshot();

    let refused = mesh.run(&["push", "node1"]).code(2);
    for words in [
        "node1: FAILED (record)",
        "/var/lib/mesh/record.json is missing",
        "kept originals in /var/lib/mesh/originals",
        "unit files the mesh wrote in /etc/systemd/system: memory-worker.service",
        "process bundles in /var/lib/mesh/bundles: memory-worker",
        "nothing on the machine was changed",
        "mesh node adopt node1",
    ] {
        assert!(
            refused.stdout.contains(words),
            "the refusal does not say {words:?}:\n{}",
            refused.stdout
        );
    }
    // a dry run is refused too
    let checked = mesh.run(&["check", "node1"]).code(2);
    assert!(
        checked.stdout.contains("mesh node adopt node1"),
        "{}",
        checked.stdout
    );
    assert_eq!(snapshot(), before, "the refused push changed the machine");
    assert_eq!(
        on("node1", "test -e /var/lib/mesh/record.json || echo none").trim(),
        "none"
    );

    let adopted = mesh.run(&["node", "adopt", "node1"]).ok().stdout;
    assert!(adopted.contains("node1: adopted"), "{adopted}");
    assert!(
        adopted.contains("everything it took can be given back as the host had it"),
        "{adopted}"
    );
    assert!(adopted.contains("next: mesh push node1"), "{adopted}");
    assert_eq!(snapshot(), before, "adopting changed the machine");
    let history = mesh.run(&["history", "node1"]).ok().stdout;
    assert!(history.contains("adopted"), "{history}");

    // a push is then clean: the file is rewritten, the process the mesh made is the mesh's
    let push = mesh.run(&["push", "node1", "--json"]).ok().json();
    let node1 = node_result(&push, "node1");
    assert_eq!(node1["outcome"], "applied", "{node1}");
    assert!(states(node1).iter().all(|(_, s)| s != "failed"), "{node1}");
    assert_eq!(on("node1", "cat /etc/issue"), "Managed by mesh, again.\n");
    assert_eq!(on("node1", "cat /run/memory-worker"), "bonjour\n");

    // and the host's own /etc/issue comes back as it had it
    mesh.run(&["unassign", "memory", "node1"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(
        plan.contains("- memory:file:/etc/issue — restores /etc/issue as the host had it"),
        "{plan}"
    );
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        issue(),
        original,
        "/etc/issue byte for byte, owner and mode"
    );
    assert_eq!(
        on(
            "node1",
            "ls /etc/systemd/system/memory-worker.service /var/lib/mesh/bundles/memory-worker 2>&1 | grep -c 'No such file'"
        )
        .trim(),
        "2"
    );
}

#[test]
fn a_record_of_a_version_the_helper_does_not_know_is_refused_naming_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    clean(&mesh);
    mesh.run(&["assign", "motd", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let motd = on("node1", "sha256sum /etc/motd");

    on(
        "node1",
        "sed -i 's/\"version\": 1,/\"version\": 99,/' /var/lib/mesh/record.json",
    );
    mesh.run(&["unassign", "motd", "node1"]).ok();
    let refused = mesh.run(&["push", "node1"]);
    // put the record back before anything is asserted: other tests share the machine
    on(
        "node1",
        "sed -i 's/\"version\": 99,/\"version\": 1,/' /var/lib/mesh/record.json",
    );
    let refused = refused.code(2);
    for words in [
        "node1: FAILED (record)",
        "/var/lib/mesh/record.json is version 99",
        "knows only version 1",
    ] {
        assert!(
            refused.stdout.contains(words),
            "the refusal does not say {words:?}:\n{}",
            refused.stdout
        );
    }
    assert_eq!(on("node1", "sha256sum /etc/motd"), motd, "nothing changed");
    mesh.run(&["push", "node1"]).ok();
}

/// Keys merged into a shared JSON file, the kind of resource that leaves nothing of its own on
/// the machine but the record.
const SHARED: &str = r#"{
  "name": "shared", "version": "1", "description": "A key in a file the host owns.",
  "resources": [{"kind": "keys", "path": "/etc/mesh-shared.json", "keys": {"mesh": {"on": true}}}]
}"#;

#[test]
fn a_machine_whose_whole_state_directory_is_gone_is_refused_because_the_inventory_knows_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    clean(&mesh);
    on(
        "node1",
        "printf '{\"host\": \"own\"}' >/etc/mesh-shared.json",
    );
    mesh.module("shared", SHARED, &[]);
    mesh.run(&["assign", "shared", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    // everything the mesh kept on the machine is gone, its helper too: nothing there says mesh
    on("node1", "rm -rf /var/lib/mesh");
    let before = on("node1", "cat /etc/mesh-shared.json");

    let refused = mesh.run(&["push", "node1"]).code(2);
    for words in [
        "node1: FAILED (record)",
        "the operator's inventory, which holds what this machine's helper answered before",
        "mesh node adopt node1",
    ] {
        assert!(
            refused.stdout.contains(words),
            "the refusal does not say {words:?}:\n{}",
            refused.stdout
        );
    }
    assert_eq!(on("node1", "cat /etc/mesh-shared.json"), before);

    // adopted, the key is the mesh's with its value before the mesh lost: it stays when undeclared
    let adopted = mesh.run(&["node", "adopt", "node1"]).ok().stdout;
    assert!(adopted.contains("node1: adopted"), "{adopted}");
    mesh.run(&["push", "node1"]).ok();
    mesh.run(&["unassign", "shared", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let after = on("node1", "cat /etc/mesh-shared.json");
    assert!(
        after.contains("\"host\""),
        "the host's own key is gone: {after}"
    );
    on("node1", "rm -f /etc/mesh-shared.json");
}
