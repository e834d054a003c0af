//! Every built-in module but `apt-repo` (which needs a signed repository of its own, tried in
//! `kinds_apt_repository`) on one lab machine at once. Where two touch one thing they must agree
//! (`sysctl` and dockerd over `net.ipv4.ip_forward`; the firewall's table beside Docker's rules;
//! `users`' keys beside `sshd`'s policy), so one push is followed by a clean `check`. Then the
//! round trip of everything a module keeps on purpose when it is taken off (`backup`'s archives,
//! `users`' home): assign, push, unassign, push, assign, push, check clean, and what was kept is
//! the new account's.

use crate::util::{Mesh, node_result, on, states};

const NODE: &str = "node1";

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
        mesh.run(&["assign", m, NODE]).ok();
    }
}

/// In the order a consumer goes before its provider.
fn unassign_all(mesh: &Mesh) {
    for m in MODULES.iter().rev() {
        mesh.run(&["unassign", m, NODE]).ok();
    }
}

/// A push of `NODE`, then a `check` that finds nothing to change, and a second push that
/// changes nothing: the modules agree on the machine.
fn converged(mesh: &Mesh, when: &str) {
    let push = mesh.run(&["push", NODE]).ok();
    let check = mesh.run(&["check", NODE]);
    assert_eq!(
        check.status, 0,
        "{when}: check after a push is not clean:\n{}\n{}\npush:\n{}",
        check.stdout, check.stderr, push.stdout
    );
    let again = mesh.run(&["push", NODE, "--json"]).ok().json();
    let moved: Vec<(String, String)> = states(node_result(&again, NODE))
        .into_iter()
        .filter(|(_, state)| state != "unchanged")
        .collect();
    assert!(moved.is_empty(), "{when}: a second push changed {moved:?}");
    let units = &node_result(&again, NODE)["report"]["units"];
    assert!(
        units.as_array().is_none_or(|u| u.is_empty()),
        "{when}: a second push touched units: {units}"
    );
}

#[test]
fn every_built_in_module_on_one_machine_converges_and_what_one_keeps_comes_back_its_own() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // whatever an earlier test left is given back first
    mesh.run(&["push", "--all"]).ok();
    on(
        NODE,
        "userdel meshops 2>/dev/null; userdel mesh-backup 2>/dev/null; \
         rm -rf /home/meshops /var/backups/mesh-backup; sysctl -qw net.ipv4.ip_forward=0; true",
    );
    settings(&mesh);
    assign_all(&mesh);
    converged(&mesh, "everything assigned");
    // dockerd and sysctl agree: forwarding is on, as container-runtime wants
    assert_eq!(on(NODE, "sysctl -n net.ipv4.ip_forward"), "1\n");
    assert_eq!(
        on(
            NODE,
            "cat /etc/sysctl.d/99-zz-mesh-net.ipv4.ip_forward.conf"
        ),
        "net.ipv4.ip_forward = 1\n"
    );
    // Docker's own rules and the mesh's table stand side by side
    let tables = on(NODE, "nft list tables");
    assert!(tables.contains("table inet mesh"), "{tables}");
    on(NODE, "systemctl start backup.service");
    let archive = on(NODE, "ls /var/backups/mesh-backup");
    assert!(archive.contains(".tar.gz"), "{archive}");
    on(
        NODE,
        "runuser -u meshops -- sh -c 'echo kept > /home/meshops/note'",
    );

    unassign_all(&mesh);
    converged(&mesh, "everything taken off");
    assert_eq!(
        on(NODE, "getent passwd mesh-backup meshops || echo gone"),
        "gone\n"
    );
    // kept on purpose, owned now by no account
    assert!(on(NODE, "ls /var/backups/mesh-backup").contains(".tar.gz"));
    assert_eq!(on(NODE, "cat /home/meshops/note"), "kept\n");

    assign_all(&mesh);
    converged(&mesh, "everything assigned again");
    let owners = on(
        NODE,
        "stat -c '%U %n' /var/backups/mesh-backup /var/backups/mesh-backup/*.tar.gz \
         /home/meshops /home/meshops/note /home/meshops/.ssh/authorized_keys",
    );
    for line in owners.lines() {
        let owner = line.split(' ').next().unwrap_or("");
        assert!(
            owner == "mesh-backup" || owner == "meshops",
            "not the new account's: {owners}"
        );
    }

    unassign_all(&mesh);
    mesh.run(&["push", NODE]).ok();
    on(
        NODE,
        "rm -rf /home/meshops /var/backups/mesh-backup; sysctl -qw net.ipv4.ip_forward=0",
    );
}
