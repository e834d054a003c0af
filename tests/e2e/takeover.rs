//! A process never takes the name of a unit the machine already has: assigned under the instance
//! name of a packaged service (`--as redis-server`), the push fails for that resource, and the
//! machine's own redis-server keeps running from its own unit.

use crate::util::{Mesh, node_result, on, states};

const SLEEPER: &str = r#"{
  "name": "sleeper", "version": "1", "description": "A process that only sleeps.",
  "resources": [{"kind": "process", "description": "It sleeps", "command": ["/bin/sleep", "infinity"],
                 "user": "nobody", "bundle": []}]
}"#;

#[test]
fn a_process_named_after_a_packaged_unit_is_refused_and_the_package_keeps_running() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on("node1", "systemctl start redis-server.service");
    let before = on(
        "node1",
        "systemctl show -p FragmentPath -p MainPID --value redis-server.service",
    );
    mesh.module("sleeper", SLEEPER, &[]);
    mesh.run(&["assign", "sleeper", "node1", "--as", "redis-server"])
        .ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let node1 = node_result(&push, "node1");
    let failed: Vec<String> = node1["report"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["state"] == "failed")
        .map(|r| r["detail"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        failed
            .iter()
            .any(|d| d.contains("the machine already has a unit redis-server.service")),
        "{:?}",
        states(node1)
    );
    assert_eq!(
        on(
            "node1",
            "systemctl show -p FragmentPath -p MainPID --value redis-server.service"
        ),
        before,
        "the machine's redis-server was replaced or restarted"
    );
    assert_eq!(
        on(
            "node1",
            "test -e /etc/systemd/system/redis-server.service && echo there || echo none"
        )
        .trim(),
        "none"
    );
    mesh.run(&["unassign", "redis-server", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on("node1", "systemctl is-active redis-server.service").trim(),
        "active"
    );
}
