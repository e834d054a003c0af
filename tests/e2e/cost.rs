//! What a change costs a unit, on a real machine (seed 000): the strongest cost among the settings
//! that moved in a file; `systemctl show -p InvocationID` changes on a restart, not on a reload.

use crate::util::{Mesh, invocation, node_result, on};

const COSTED: &str = r#"{
  "name": "costed", "version": "1", "description": "A file read by ssh.service, to measure what changes cost.",
  "settings": [
    {"name": "gentle", "type": "string", "meaning": "A key the daemon re-reads on reload.", "default": "a", "cost": "reload"},
    {"name": "harsh", "type": "string", "meaning": "A key the daemon reads only at start.", "default": "a", "cost": "restart"},
    {"name": "idle", "type": "string", "meaning": "A key read on every use.", "default": "a", "cost": "none"}
  ],
  "resources": [{"kind": "file", "path": "/etc/mesh-costed.conf", "template": "costed.conf", "cost": "restart",
                 "units": ["ssh.service"]}]
}"#;

fn push(mesh: &Mesh) -> serde_json::Value {
    let run = mesh.run(&["push", "node1", "--json"]).ok().json();
    node_result(&run, "node1")["report"]["units"].clone()
}

#[test]
fn the_strongest_cost_among_moved_settings_is_paid_once_per_unit() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module(
        "costed",
        COSTED,
        &[(
            "costed.conf",
            "gentle ${gentle}\nharsh ${harsh}\nidle ${idle}\n",
        )],
    );
    mesh.run(&["assign", "costed", "node1"]).ok();
    push(&mesh);

    // only a reload-cost key moved: reloaded, the same invocation goes on
    let before = invocation("node1", "ssh.service");
    mesh.run(&["settings", "set", "costed", "gentle=b"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok();
    // the plan names the setting that moved and what it costs, before anything moves
    for said in [
        "~ costed:file:/etc/mesh-costed.conf (content; settings moved: gentle)",
        "! ssh.service will reload (because of costed:file:/etc/mesh-costed.conf: gentle)",
    ] {
        assert!(
            plan.stdout.contains(said),
            "{said:?} not in {}",
            plan.stdout
        );
    }
    let units = push(&mesh);
    assert_eq!(units[0]["unit"], "ssh.service");
    assert_eq!(units[0]["action"], "reload", "{units}");
    assert_eq!(
        invocation("node1", "ssh.service"),
        before,
        "a reload must not restart ssh.service"
    );

    // a reload key and a restart key moved in the same file: one restart
    mesh.run(&["settings", "set", "costed", "gentle=c", "harsh=c"])
        .ok();
    let units = push(&mesh);
    assert_eq!(units.as_array().map(Vec::len), Some(1), "{units}");
    assert_eq!(units[0]["action"], "restart", "{units}");
    let restarted = invocation("node1", "ssh.service");
    assert_ne!(
        restarted, before,
        "a restart gives ssh.service a new invocation"
    );

    // a key that costs nothing moved: the file changes, the unit is left alone
    mesh.run(&["settings", "set", "costed", "gentle=c", "harsh=c", "idle=z"])
        .ok();
    let units = push(&mesh);
    assert_eq!(units, serde_json::json!([]), "{units}");
    assert_eq!(invocation("node1", "ssh.service"), restarted);
    assert!(on("node1", "cat /etc/mesh-costed.conf").contains("idle z"));

    // a hand edit (drift) is rewritten at the file's declared cost
    on("node1", "echo edited >> /etc/mesh-costed.conf");
    let units = push(&mesh);
    assert_eq!(units[0]["action"], "restart", "{units}");

    mesh.run(&["unassign", "costed", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on(
            "node1",
            "test -e /etc/mesh-costed.conf && echo there || echo gone"
        )
        .trim(),
        "gone"
    );
}

const FLAKY: &str = r#"{
  "name": "flaky", "version": "1", "description": "A file read at start by a unit whose start can be made to fail.",
  "settings": [{"name": "level", "type": "integer", "meaning": "A value read only at start.", "default": 1, "cost": "restart"}],
  "resources": [{"kind": "file", "path": "/etc/mesh-flaky.conf", "template": "flaky.conf", "cost": "restart",
                 "units": ["mesh-flaky.service"]}]
}"#;

/// A unit that refuses to start while /run/mesh-flaky-refuses exists.
const FLAKY_UNIT: &str = "printf '[Service]\\nExecStartPre=/bin/sh -c \"test ! -e /run/mesh-flaky-refuses\"\\nExecStart=/bin/sleep infinity\\n' \
    > /etc/systemd/system/mesh-flaky.service && systemctl daemon-reload && systemctl start mesh-flaky.service";

#[test]
fn a_restart_that_fails_is_reported_and_still_owed_at_the_next_push() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("flaky", FLAKY, &[("flaky.conf", "level ${level}\n")]);
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        &format!("rm -f /run/mesh-flaky-refuses; {FLAKY_UNIT}"),
    );
    mesh.run(&["assign", "flaky", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();

    on("node1", "touch /run/mesh-flaky-refuses");
    mesh.run(&["settings", "set", "flaky", "level=2"]).ok();
    let failed = mesh.run(&["push", "node1"]).code(2);
    assert!(
        failed
            .stdout
            .contains("unit mesh-flaky.service: FAILED, still owed"),
        "{}",
        failed.stdout
    );
    assert_eq!(on("node1", "cat /etc/mesh-flaky.conf"), "level 2\n");

    // nothing changed since, but the restart is still owed: the next push pays it
    on("node1", "rm /run/mesh-flaky-refuses");
    let units = push(&mesh);
    assert_eq!(units[0]["unit"], "mesh-flaky.service", "{units}");
    assert_eq!(units[0]["action"], "restart", "{units}");
    assert_eq!(units[0]["error"], serde_json::Value::Null, "{units}");
    assert_eq!(units[0]["because"][0], "owed by an earlier push", "{units}");
    assert_eq!(
        on("node1", "systemctl is-active mesh-flaky.service").trim(),
        "active"
    );
    // paid: the push after owes nothing
    assert_eq!(push(&mesh), serde_json::json!([]));

    mesh.run(&["unassign", "flaky", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        "systemctl stop mesh-flaky.service; rm -f /etc/systemd/system/mesh-flaky.service; systemctl daemon-reload",
    );
}
