//! A change's cost is paid by asking systemd on its own socket, not by starting `systemctl`
//!: on a real machine, a reload, a restart and a service's start run no `systemctl`
//! at all, and a reload that fails is reported with systemd's own result and stays owed.

use crate::util::{Mesh, node_result, on};

const PAID: &str = r#"{
  "name": "paid", "version": "1", "description": "A file read by a unit of the test's own, which reloads or restarts as a setting costs.",
  "settings": [
    {"name": "gentle", "type": "string", "meaning": "Read again on reload.", "default": "a", "cost": "reload"},
    {"name": "harsh", "type": "string", "meaning": "Read only at start.", "default": "a", "cost": "restart"}
  ],
  "resources": [{"kind": "file", "path": "/etc/mesh-paid.conf", "template": "paid.conf", "cost": "restart",
                 "units": ["mesh-paid.service"]},
                {"kind": "service", "unit": "mesh-paid.service", "state": "running"}]
}"#;

/// `systemctl`, found first on root's PATH, noting each call before it runs the real one.
const WATCH: &str = "printf '#!/bin/sh\\necho \"$*\" >> /run/mesh-systemctl-calls\\nexec /usr/bin/systemctl \"$@\"\\n' \
    > /usr/local/sbin/systemctl && chmod 755 /usr/local/sbin/systemctl";

/// The unit, reloading by noting it; `reload` is its ExecReload's command.
fn unit(reload: &str) -> String {
    format!(
        "printf '[Service]\\nExecStart=/bin/sleep infinity\\nExecReload={reload}\\n' \
         > /etc/systemd/system/mesh-paid.service && /usr/bin/systemctl daemon-reload"
    )
}

const NOTE_RELOAD: &str = "/bin/sh -c \"echo reloaded >> /run/mesh-paid-reloads\"";

fn calls() -> String {
    on("node1", "cat /run/mesh-systemctl-calls 2>/dev/null; true")
}

#[test]
fn a_reload_and_a_restart_are_asked_of_systemd_without_systemctl_and_a_failed_one_stays_owed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module(
        "paid",
        PAID,
        &[("paid.conf", "gentle ${gentle}\nharsh ${harsh}\n")],
    );
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        &format!(
            "{WATCH}; {}; systemctl start mesh-paid.service",
            unit(NOTE_RELOAD)
        ),
    );
    mesh.run(&["assign", "paid", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        "rm -f /run/mesh-paid-reloads /run/mesh-systemctl-calls",
    );

    // a reload: the unit's own ExecReload ran, once, and no systemctl did
    mesh.run(&["settings", "set", "paid", "gentle=b"]).ok();
    let run = mesh.run(&["push", "node1", "--json"]).ok().json();
    let units = &node_result(&run, "node1")["report"]["units"];
    assert_eq!(units[0]["action"], "reload", "{units}");
    assert_eq!(units[0]["error"], serde_json::Value::Null, "{units}");
    assert_eq!(on("node1", "cat /run/mesh-paid-reloads").trim(), "reloaded");
    assert_eq!(calls(), "", "the helper ran systemctl to pay a reload");

    // a restart: a new invocation, and no systemctl
    let invocation = || {
        on(
            "node1",
            "/usr/bin/systemctl show -p InvocationID --value mesh-paid.service",
        )
    };
    on("node1", "rm -f /run/mesh-systemctl-calls");
    let before = invocation();
    mesh.run(&["settings", "set", "paid", "gentle=b", "harsh=b"])
        .ok();
    let run = mesh.run(&["push", "node1", "--json"]).ok().json();
    let units = &node_result(&run, "node1")["report"]["units"];
    assert_eq!(units[0]["action"], "restart", "{units}");
    assert_ne!(
        invocation(),
        before,
        "a restart gives the unit a new invocation"
    );
    assert_eq!(calls(), "", "the helper ran systemctl to pay a restart");

    // a reload that fails: systemd's result is said, the file stays, the reload stays owed
    on(
        "node1",
        &format!("{}; rm -f /run/mesh-paid-reloads", unit("/bin/false")),
    );
    mesh.run(&["settings", "set", "paid", "gentle=c", "harsh=b"])
        .ok();
    let failed = mesh.run(&["push", "node1"]).code(2);
    assert!(
        failed
            .stdout
            .contains("unit mesh-paid.service: FAILED, still owed")
            && failed.stdout.contains("systemd's job ended \"failed\""),
        "{}",
        failed.stdout
    );
    assert!(on("node1", "cat /etc/mesh-paid.conf").contains("gentle c"));
    on("node1", &unit(NOTE_RELOAD));
    let run = mesh.run(&["push", "node1", "--json"]).ok().json();
    let units = &node_result(&run, "node1")["report"]["units"];
    assert_eq!(units[0]["because"][0], "owed by an earlier push", "{units}");
    assert_eq!(on("node1", "cat /run/mesh-paid-reloads").trim(), "reloaded");
    assert_eq!(calls(), "", "the helper ran systemctl");

    // a service found stopped is started, and its state read, without systemctl
    on(
        "node1",
        "/usr/bin/systemctl stop mesh-paid.service; rm -f /run/mesh-systemctl-calls",
    );
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on("node1", "/usr/bin/systemctl is-active mesh-paid.service").trim(),
        "active"
    );
    assert_eq!(calls(), "", "the helper ran systemctl to start a service");

    mesh.run(&["unassign", "paid", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        "systemctl stop mesh-paid.service; rm -f /etc/systemd/system/mesh-paid.service \
         /usr/local/sbin/systemctl /run/mesh-paid-reloads /run/mesh-systemctl-calls; /usr/bin/systemctl daemon-reload",
    );
}
