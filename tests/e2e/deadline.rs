//! Nothing hangs for ever: a node whose check command hangs is ended by
//! `--timeout`, named with the step it was in and recorded as failed, while the other nodes are
//! applied, printed and recorded; on the machine the helper kills the hung step and lets go of its
//! lock, so the next push goes through.

use std::time::{Duration, Instant};

use crate::util::{Mesh, on};

/// A file whose check hangs on a machine that has `/run/mesh-stall` (so on one node only).
const STALL: &str = r#"{
  "name": "stall", "version": "1", "description": "A file whose check hangs where it is told to.",
  "settings": [{"name": "level", "type": "string", "meaning": "The level.", "default": "1", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/mesh-stall.conf", "template": "stall.conf",
                 "validate": ["/bin/sh", "-c", "[ ! -e /run/mesh-stall ] || sleep 100000"]}]
}"#;

/// The same module, fixed: its check no longer hangs.
const FIXED: &str = r#"{
  "name": "stall", "version": "1", "description": "A file whose check hangs where it is told to.",
  "settings": [{"name": "level", "type": "string", "meaning": "The level.", "default": "1", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/mesh-stall.conf", "template": "stall.conf",
                 "validate": ["/bin/true"]}]
}"#;

/// How many `sleep 100000` run on the node (the shell running this is not one).
fn hung_sleeps(node: &str) -> usize {
    on(node, "ps -eo args | grep -c '^sleep 100000$' || true")
        .trim()
        .parse()
        .unwrap_or(0)
}

#[test]
fn a_hung_check_is_ended_by_the_timeout_and_the_others_are_applied_and_recorded() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("stall", STALL, &[("stall.conf", "level ${level}\n")]);
    for node in ["node1", "node2", "node3"] {
        on(node, "rm -f /etc/mesh-stall.conf /run/mesh-stall");
    }
    mesh.run(&["push", "--all"]).ok();
    on("node2", "touch /run/mesh-stall");
    mesh.run(&["assign", "stall", "node1", "node2", "node3"])
        .ok();

    let started = Instant::now();
    let run = mesh.run(&["push", "--all", "--timeout", "20"]).code(2);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(20) && took < Duration::from_secs(60),
        "the push took {took:?}"
    );
    assert!(
        run.stdout.contains(
            "node2: FAILED (timeout): node2: did not finish within 20 s (--timeout) while applying"
        ),
        "{}",
        run.stdout
    );
    for node in ["node1", "node3"] {
        assert!(
            run.stdout.contains(&format!("{node}: applied: 1 created")),
            "{}",
            run.stdout
        );
        assert_eq!(on(node, "cat /etc/mesh-stall.conf"), "level 1\n");
    }
    // recorded like any failure, the others as applied
    let history = mesh.run(&["history", "--json"]).ok().json();
    let outcome = |node: &str| {
        history
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["node"] == node))
            .map(|r| r["outcome"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(outcome("node1").as_deref(), Some("applied"), "{history}");
    assert_eq!(outcome("node3").as_deref(), Some("applied"), "{history}");
    assert_eq!(outcome("node2").as_deref(), Some("failed"), "{history}");
    let reason = history
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["node"] == "node2"))
        .map(|r| r["reason"].to_string())
        .unwrap_or_default();
    assert!(reason.contains("did not finish within 20 s"), "{reason}");

    // the helper on node2 heard its operator go: the hung check is gone, and with the module
    // fixed the next push takes the lock and applies
    mesh.module("stall", FIXED, &[("stall.conf", "level ${level}\n")]);
    let again = mesh.run(&["push", "node2"]).ok();
    assert!(again.stdout.contains("node2: applied"), "{}", again.stdout);
    assert_eq!(on("node2", "cat /etc/mesh-stall.conf"), "level 1\n");
    assert_eq!(hung_sleeps("node2"), 0);
    on("node2", "rm -f /run/mesh-stall");
}
