//! What a change costs a unit, on a real machine (seed 000): the strongest cost among the settings
//! that moved in a file; `systemctl show -p InvocationID` changes on a restart, not on a reload.

use crate::util::{Mesh, node_result, on};

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

fn invocation() -> String {
    on(
        "node1",
        "systemctl show -p InvocationID --value ssh.service",
    )
    .trim()
    .to_string()
}

fn push(mesh: &Mesh) -> serde_json::Value {
    let run = mesh.run(&["push", "node1", "--json"]).ok().json();
    node_result(&run, "node1")["report"]["units"].clone()
}

#[test]
fn the_strongest_cost_among_moved_settings_is_paid_once_per_unit() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
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
    let before = invocation();
    mesh.run(&["settings", "set", "costed", "gentle=b"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok();
    assert!(
        plan.stdout.contains("ssh.service will reload"),
        "{}",
        plan.stdout
    );
    let units = push(&mesh);
    assert_eq!(units[0]["unit"], "ssh.service");
    assert_eq!(units[0]["action"], "reload", "{units}");
    assert_eq!(
        invocation(),
        before,
        "a reload must not restart ssh.service"
    );

    // a reload key and a restart key moved in the same file: one restart
    mesh.run(&["settings", "set", "costed", "gentle=c", "harsh=c"])
        .ok();
    let units = push(&mesh);
    assert_eq!(units.as_array().map(Vec::len), Some(1), "{units}");
    assert_eq!(units[0]["action"], "restart", "{units}");
    let restarted = invocation();
    assert_ne!(
        restarted, before,
        "a restart gives ssh.service a new invocation"
    );

    // a key that costs nothing moved: the file changes, the unit is left alone
    mesh.run(&["settings", "set", "costed", "gentle=c", "harsh=c", "idle=z"])
        .ok();
    let units = push(&mesh);
    assert_eq!(units, serde_json::json!([]), "{units}");
    assert_eq!(invocation(), restarted);
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
