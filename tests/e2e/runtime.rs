//! The built-in container-runtime module on three lab machines running Docker (seed 000's "Live"
//! row): its settings reach every machine's daemon at the next push, a node's own value survives
//! a mesh-wide change, and Docker's shared daemon.json keeps the keys the mesh does not own.

use crate::util::{Mesh, NODES, invocation, node_result, on};

/// The log options a container created now gets from the running daemon: proof that dockerd
/// read the file, not only that the file was written. The image is a one-file tarball: the lab
/// has no registry.
fn daemon_log_opts(node: &str) -> String {
    on(
        node,
        "set -e; tar -cC /usr/bin true | docker import - mesh-probe >/dev/null; \
         id=$(docker create mesh-probe /true); \
         docker inspect -f '{{index .HostConfig.LogConfig.Config \"max-size\"}} {{index .HostConfig.LogConfig.Config \"max-file\"}}' \"$id\"; \
         docker rm \"$id\" >/dev/null",
    )
    .trim()
    .to_string()
}

fn docker_info(node: &str, field: &str) -> String {
    on(node, &format!("docker info --format '{{{{{field}}}}}'"))
        .trim()
        .to_string()
}

fn unit_actions(push: &serde_json::Value, node: &str) -> Vec<String> {
    node_result(push, node)["report"]["units"]
        .as_array()
        .map(|units| {
            units
                .iter()
                .map(|u| {
                    format!(
                        "{} {}",
                        u["unit"].as_str().unwrap_or(""),
                        u["action"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_mesh_wide_runtime_setting_reaches_every_daemon_and_a_node_override_survives_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // whatever an earlier test left is given back first
    mesh.run(&["push", "--all"]).ok();
    // node2's operator keeps a key of their own in Docker's file
    on(
        "node2",
        "printf '{\"debug\": true}\\n' > /etc/docker/daemon.json",
    );

    for n in NODES {
        mesh.run(&["assign", "container-runtime", n]).ok();
    }
    // the operator's setting has no default: refused by name until it is set
    let refused = mesh.run(&["plan", "--all"]).code(1);
    assert!(
        refused
            .stderr
            .contains("\"insecure-registries\" (the operator's) has no default"),
        "{}",
        refused.stderr
    );
    mesh.run(&[
        "settings",
        "set",
        "container-runtime",
        "insecure-registries=[\"10.0.0.1:5000\"]",
    ])
    .ok();
    let push = mesh.run(&["push", "--all", "--json"]).ok().json();
    for n in NODES {
        assert_eq!(
            daemon_log_opts(n),
            "10m 3",
            "{n}: the defaults reach the daemon"
        );
        assert_eq!(docker_info(n, ".LiveRestoreEnabled"), "true", "{n}");
        assert!(
            docker_info(n, "json .RegistryConfig.IndexConfigs").contains("10.0.0.1:5000"),
            "{n}"
        );
        assert_eq!(
            unit_actions(&push, n),
            vec!["docker.service restart"],
            "{n}"
        );
    }

    // node3 says its own log size; a mesh-wide change then moves node1 and node2 only
    mesh.run(&[
        "settings",
        "set",
        "container-runtime",
        "--node",
        "node3",
        "log-max-size=20m",
    ])
    .ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(daemon_log_opts("node3"), "20m 3");
    let set = mesh
        .run(&[
            "settings",
            "set",
            "container-runtime",
            "log-max-size=50m",
            "insecure-registries=[\"10.0.0.1:5000\"]",
        ])
        .ok();
    assert!(
        set.stdout
            .contains("container-runtime on node1: log-max-size"),
        "{}",
        set.stdout
    );
    assert!(
        set.stdout
            .contains("container-runtime on node2: log-max-size"),
        "{}",
        set.stdout
    );
    assert!(
        !set.stdout.contains("on node3"),
        "node3 overrides the key: {}",
        set.stdout
    );
    let config = mesh
        .run(&["config", "container-runtime", "--node", "node3", "--json"])
        .ok()
        .json();
    let source = |key: &str| {
        config["settings"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == key))
            .map(|s| (s["value"].clone(), s["source"].clone()))
    };
    assert_eq!(
        source("log-max-size"),
        Some(("20m".into(), "node".into())),
        "{config}"
    );
    assert_eq!(
        source("insecure-registries").map(|(_, s)| s),
        Some("mesh".into())
    );
    assert_eq!(source("log-max-file"), Some((3.into(), "default".into())));

    let push = mesh.run(&["push", "--all", "--json"]).ok().json();
    assert_eq!(daemon_log_opts("node1"), "50m 3");
    assert_eq!(daemon_log_opts("node2"), "50m 3");
    assert_eq!(
        daemon_log_opts("node3"),
        "20m 3",
        "the node's own value survives"
    );
    // a log option is read only at start: the daemon restarts, once
    assert_eq!(unit_actions(&push, "node1"), vec!["docker.service restart"]);
    let node3 = node_result(&push, "node3")["report"]["resources"].clone();
    assert!(
        node3
            .as_array()
            .is_some_and(|r| r.iter().all(|o| o["state"] == "unchanged")),
        "node3 did not move: {node3}"
    );

    // live-restore is re-read on a reload: the same daemon goes on
    let before = invocation("node1", "docker.service");
    mesh.run(&[
        "settings",
        "set",
        "container-runtime",
        "log-max-size=50m",
        "insecure-registries=[\"10.0.0.1:5000\"]",
        "live-restore=false",
    ])
    .ok();
    let push = mesh.run(&["push", "node1", "--json"]).ok().json();
    assert_eq!(unit_actions(&push, "node1"), vec!["docker.service reload"]);
    assert_eq!(docker_info("node1", ".LiveRestoreEnabled"), "false");
    assert_eq!(
        invocation("node1", "docker.service"),
        before,
        "a reload must not restart dockerd"
    );

    // the operator's own key stayed through every push
    let file: serde_json::Value =
        serde_json::from_str(&on("node2", "cat /etc/docker/daemon.json")).unwrap();
    assert_eq!(file["debug"], true, "{file}");
    // and one the operator adds meanwhile, after the mesh wrote its keys, stays through the
    // give-back too
    on(
        "node2",
        "sed -i '1a\\  \"experimental\": false,' /etc/docker/daemon.json",
    );

    // unassigned: node2's file is the operator's again, node1's (the mesh made it) is gone,
    // and dockerd, running before the mesh, is left running
    for n in NODES {
        mesh.run(&["unassign", "container-runtime", n]).ok();
    }
    let push = mesh.run(&["push", "--all", "--json"]).ok().json();
    // giving the keys back is a change too: the daemon restarts to read the file as it was
    assert_eq!(unit_actions(&push, "node2"), vec!["docker.service restart"]);
    let file: serde_json::Value =
        serde_json::from_str(&on("node2", "cat /etc/docker/daemon.json")).unwrap();
    assert_eq!(
        file,
        serde_json::json!({"debug": true, "experimental": false})
    );
    assert_eq!(docker_info("node2", ".LiveRestoreEnabled"), "false");
    assert_eq!(
        on(
            "node1",
            "test -e /etc/docker/daemon.json && echo there || echo gone"
        )
        .trim(),
        "gone"
    );
    for n in NODES {
        assert_eq!(on(n, "systemctl is-active docker.service").trim(), "active");
    }
    on(
        "node2",
        "rm -f /etc/docker/daemon.json; systemctl restart docker.service",
    );
}
