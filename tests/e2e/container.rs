//! Containers and the held move (seed 003, guards 2 and 3), on lab machines running Docker: a
//! container is recreated only when its spec changes and the plan names the fields; a push that
//! would move a running container's data is held for that node only, and goes with `--move`.

use crate::util::{Mesh, node_result, on};

const APP: &str = r#"{
  "name": "app", "version": "1", "description": "A container that keeps its data in a directory of the machine.",
  "settings": [
    {"name": "data-dir", "type": "string", "meaning": "Where its data lives on the machine.", "default": "/srv/app-a", "cost": "none"},
    {"name": "greeting", "type": "string", "meaning": "A value it reads from its environment.", "default": "hi", "cost": "none"}
  ],
  "resources": [{"kind": "container", "image": "mesh-sleeper", "command": ["/usr/bin/sleep", "infinity"],
                 "environment": {"GREETING": "${greeting}"},
                 "mounts": [{"source": "${data-dir}", "target": "/data"}]}]
}"#;

/// An image made from the machine's own sleep and the two libraries it needs: the lab has no
/// registry to pull from.
pub const IMAGE: &str = "tar -ch -C / usr/bin/sleep lib/x86_64-linux-gnu/libc.so.6 lib64/ld-linux-x86-64.so.2 2>/dev/null \
    | docker import - mesh-sleeper >/dev/null";

fn container(node: &str, format: &str) -> String {
    on(node, &format!("docker inspect --format '{format}' app"))
        .trim()
        .to_string()
}

#[test]
fn a_container_is_recreated_only_when_its_spec_changes_and_a_data_move_is_held() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("app", APP, &[]);
    mesh.run(&["push", "--all"]).ok();
    for n in ["node1", "node2"] {
        on(
            n,
            &format!("docker rm -f app >/dev/null 2>&1; rm -rf /srv/app-a /srv/app-b; {IMAGE}"),
        );
        mesh.run(&["assign", "app", n]).ok();
    }
    mesh.run(&["push", "node1", "node2"]).ok();
    let first = container("node1", "{{.Id}}");
    assert_eq!(container("node1", "{{.State.Running}}"), "true");
    assert_eq!(
        container("node1", "{{index .Config.Labels \"mesh.instance\"}}"),
        "app"
    );

    // unchanged: the plan is empty and a push leaves the container alone
    let plan = mesh.run(&["plan", "node1", "node2", "--diff"]).ok().stdout;
    assert_eq!(plan, "node1: no changes\nnode2: no changes\n");
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        container("node1", "{{.Id}}"),
        first,
        "an unchanged container was recreated"
    );

    // a changed field: named by the plan, and the container is recreated with it
    mesh.run(&["settings", "set", "app", "greeting=hello"]).ok();
    let plan = mesh.run(&["plan", "node1", "--diff"]).ok().stdout;
    assert!(
        plan.contains("~ app:container:app (environment) — the container will be recreated"),
        "{plan}"
    );
    assert!(plan.contains("+environment GREETING=hello"), "{plan}");
    mesh.run(&["push", "node1", "node2"]).ok();
    assert_ne!(container("node1", "{{.Id}}"), first);
    assert!(container("node1", "{{json .Config.Env}}").contains("GREETING=hello"));

    // node1's data would move: held, naming the module, the mount and both directories;
    // node2 in the same push goes ahead
    on("node1", "echo precious >/srv/app-a/file");
    mesh.run(&[
        "settings",
        "set",
        "app",
        "--node",
        "node1",
        "data-dir=/srv/app-b",
    ])
    .ok();
    mesh.run(&["settings", "set", "app", "greeting=bonjour"])
        .ok();
    let held = mesh
        .run(&["push", "node1", "node2", "--json"])
        .code(3)
        .json();
    let node1 = node_result(&held, "node1");
    assert_eq!(node1["outcome"], "held", "{held}");
    let reason = node1["reason"].as_str().unwrap_or("");
    for words in [
        "app (app@1) container app",
        "/data",
        "/srv/app-a",
        "/srv/app-b",
        "--move app",
    ] {
        assert!(reason.contains(words), "{words:?} not in {reason}");
    }
    assert_eq!(node_result(&held, "node2")["outcome"], "applied");
    assert!(container("node2", "{{json .Config.Env}}").contains("GREETING=bonjour"));
    assert_eq!(
        container("node1", "{{range .Mounts}}{{.Source}}{{end}}"),
        "/srv/app-a",
        "a held node is not touched"
    );
    // acknowledged, it goes
    mesh.run(&["push", "node1", "--move", "app"]).ok();
    assert_eq!(
        container("node1", "{{range .Mounts}}{{.Source}}{{end}}"),
        "/srv/app-b"
    );

    // undeclared: stopped and removed, the host directories kept
    for n in ["node1", "node2"] {
        mesh.run(&["unassign", "app", n]).ok();
    }
    mesh.run(&["push", "node1", "node2"]).ok();
    assert_eq!(on("node1", "docker ps -aq --filter name=^app$").trim(), "");
    assert_eq!(on("node1", "cat /srv/app-a/file"), "precious\n");
    assert_eq!(
        on("node1", "test -d /srv/app-b && echo kept").trim(),
        "kept"
    );
    on("node1", "rm -rf /srv/app-a /srv/app-b");
    on("node2", "rm -rf /srv/app-a");
}
