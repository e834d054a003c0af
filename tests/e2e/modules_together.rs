//! Every built-in module but `apt-repo` (which needs a signed repository of its own, tried in
//! `kinds_apt_repository`) on each machine of a mixed fleet at once: node1 Debian 12, node2
//! Debian 13. Where two touch one thing they must agree
//! (`sysctl` and dockerd over `net.ipv4.ip_forward`; the firewall's table beside Docker's rules;
//! `users`' keys beside `sshd`'s policy), so one push is followed by a clean `check`; taken off,
//! every machine is as it was. Then the
//! round trip of everything a module keeps on purpose when it is taken off (`backup`'s archives,
//! `users`' home): assign, push, unassign, push, assign, push, check clean, and what was kept is
//! the new account's.

use crate::util::{Mesh, node_result, on, states};

const FLEET: [&str; 2] = ["node1", "node2"];

/// Every built-in module this test assigns, and the settings it gives them.
const MODULES: [&str; 11] = [
    "motd",
    "sysctl",
    "container-runtime",
    "firewall",
    "sshd",
    "users",
    "backup",
    "resolver",
    "kv",
    "kv-client",
    "node-exporter",
];

fn settings(mesh: &Mesh) {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("ops");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "ops@mesh.test", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(made.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let keys = serde_json::json!([public.trim()]).to_string();
    mesh.run(&[
        "settings",
        "set",
        "container-runtime",
        "insecure-registries=[]",
    ])
    .ok();
    mesh.run(&[
        "settings",
        "set",
        "users",
        "login=meshops",
        &format!("keys={keys}"),
    ])
    .ok();
}

fn assign_all(mesh: &Mesh) {
    for m in MODULES {
        mesh.run(&["assign", m, "--all"]).ok();
    }
}

/// What the modules touch on a machine, as a text to compare: everything under /etc (but the
/// `-` backups the account tools keep), the kernel settings, the services' states, the accounts.
fn snapshot(node: &str) -> String {
    on(
        node,
        "find /etc -xdev ! -name '*-' -printf '%p %m %u %g %l\\n' | sort; \
         find /etc -xdev -type f ! -name '*-' -exec sha256sum {} + | sort -k2; \
         sysctl net.ipv4.ip_forward net.ipv6.conf.all.forwarding net.ipv4.tcp_syncookies \
           net.ipv4.ping_group_range; \
         systemctl is-active docker redis-server systemd-resolved prometheus-node-exporter || true; \
         getent passwd | cut -d: -f1,3 | sort; nft list tables",
    )
}

/// In the order a consumer goes before its provider.
fn unassign_all(mesh: &Mesh) {
    for m in MODULES.iter().rev() {
        mesh.run(&["unassign", m, "--all"]).ok();
    }
}

/// A push of the fleet, then a `check` that finds nothing to change, and a second push that
/// changes nothing: the modules agree on every machine.
fn converged(mesh: &Mesh, when: &str) {
    let push = mesh.run(&["push", "--all"]).ok();
    let check = mesh.run(&["check", "--all"]);
    assert_eq!(
        check.status, 0,
        "{when}: check after a push is not clean:\n{}\n{}\npush:\n{}",
        check.stdout, check.stderr, push.stdout
    );
    let again = mesh.run(&["push", "--all", "--json"]).ok().json();
    for node in FLEET {
        let moved: Vec<(String, String)> = states(node_result(&again, node))
            .into_iter()
            .filter(|(_, state)| state != "unchanged")
            .collect();
        assert!(
            moved.is_empty(),
            "{when}: a second push changed {moved:?} on {node}"
        );
        let units = &node_result(&again, node)["report"]["units"];
        assert!(
            units.as_array().is_none_or(|u| u.is_empty()),
            "{when}: a second push touched units on {node}: {units}"
        );
    }
}

/// A default that depends on the release comes from the machine's facts: `apt-repo`'s suite is
/// each machine's own codename, and `mesh config` says so. Planned only: the lab has no
/// repository of each release to fetch from.
fn release_defaults(mesh: &Mesh) {
    let dir = tempfile::tempdir().unwrap();
    let key = crate::kinds_apt_repository::key(dir.path(), "gnupg");
    mesh.run(&[
        "settings",
        "set",
        "apt-repo",
        "uri=file:/srv/mesh-none",
        &format!("key={key}"),
    ])
    .ok();
    mesh.run(&["assign", "apt-repo", "--all"]).ok();
    for (node, suite) in [("node1", "bookworm"), ("node2", "trixie")] {
        let config = mesh
            .run(&["config", "--node", node, "apt-repo", "--json"])
            .ok()
            .json();
        let row = config["settings"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == "suite"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            (&row["value"], &row["source"], &row["fact"]),
            (&suite.into(), &"fact".into(), &"host.os.codename".into()),
            "{node}: {config}"
        );
        let plan = mesh.run(&["plan", node, "--diff"]).ok().stdout;
        assert!(
            plan.contains(&format!("+Suites: {suite}\n")),
            "{node}: {plan}"
        );
    }
    mesh.run(&["unassign", "apt-repo", "--all"]).ok();
    mesh.run(&["settings", "clear", "apt-repo"]).ok();
}

#[test]
fn every_built_in_module_on_a_mixed_fleet_converges_and_what_one_keeps_comes_back_its_own() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_release(2, "bookworm:1,trixie:1") else {
        return;
    };
    assert!(on("node1", "cat /etc/os-release").contains("VERSION_ID=\"12\""));
    assert!(on("node2", "cat /etc/os-release").contains("VERSION_ID=\"13\""));
    // whatever an earlier test left is given back first; forwarding is as a running dockerd
    // leaves it, since it sets it again each time it starts
    mesh.run(&["push", "--all"]).ok();
    let mut found = Vec::new();
    for node in FLEET {
        on(
            node,
            "userdel meshops 2>/dev/null; userdel mesh-backup 2>/dev/null; \
             rm -rf /home/meshops /var/backups/mesh-backup; systemctl restart docker; true",
        );
        found.push(snapshot(node));
    }
    settings(&mesh);
    assign_all(&mesh);
    converged(&mesh, "everything assigned");
    for node in FLEET {
        // dockerd and sysctl agree: forwarding is on, as container-runtime wants
        assert_eq!(on(node, "sysctl -n net.ipv4.ip_forward"), "1\n", "{node}");
        assert_eq!(
            on(
                node,
                "cat /etc/sysctl.d/99-zz-mesh-net.ipv4.ip_forward.conf"
            ),
            "net.ipv4.ip_forward = 1\n"
        );
        let tables = on(node, "nft list tables");
        assert!(tables.contains("table inet mesh"), "{node}: {tables}");
        on(node, "systemctl start backup.service");
        let archive = on(node, "ls /var/backups/mesh-backup");
        assert!(archive.contains(".tar.gz"), "{node}: {archive}");
        on(
            node,
            "runuser -u meshops -- sh -c 'echo kept > /home/meshops/note'",
        );
    }

    release_defaults(&mesh);
    unassign_all(&mesh);
    converged(&mesh, "everything taken off");
    for (node, found) in FLEET.iter().zip(&found) {
        let now = snapshot(node);
        if &now != found {
            let diff = similar::TextDiff::from_lines(found.as_str(), now.as_str());
            panic!(
                "{node} is not as it was:\n{}",
                diff.unified_diff().context_radius(1)
            );
        }
        // kept on purpose, owned now by no account
        assert!(on(node, "ls /var/backups/mesh-backup").contains(".tar.gz"));
        assert_eq!(on(node, "cat /home/meshops/note"), "kept\n");
    }

    assign_all(&mesh);
    converged(&mesh, "everything assigned again");
    for node in FLEET {
        let owners = on(
            node,
            "stat -c '%U %n' /var/backups/mesh-backup /var/backups/mesh-backup/*.tar.gz \
             /home/meshops /home/meshops/note /home/meshops/.ssh/authorized_keys",
        );
        for line in owners.lines() {
            let owner = line.split(' ').next().unwrap_or("");
            assert!(
                owner == "mesh-backup" || owner == "meshops",
                "{node}: not the new account's: {owners}"
            );
        }
    }

    unassign_all(&mesh);
    mesh.run(&["push", "--all"]).ok();
    for node in FLEET {
        on(node, "rm -rf /home/meshops /var/backups/mesh-backup");
    }
}
