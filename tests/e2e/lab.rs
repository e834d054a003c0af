//! The lab itself: a machine rebuilt in place is blank, at its address, with a new host key pinned.

use crate::util::{Mesh, lab_state, on, rebuild};

fn host_key(node: &str) -> String {
    let file = lab_state()
        .join("nodes")
        .join(node)
        .join("upper/etc/ssh/ssh_host_ed25519_key.pub");
    std::fs::read_to_string(file).expect("the node's host key")
}

#[test]
fn a_rebuilt_lab_machine_is_blank_at_its_address_with_its_new_host_key_pinned() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert!(on("node3", "test -d /var/lib/mesh && echo yes").contains("yes"));
    let before = mesh.run(&["node", "show", "node3", "--json"]).ok().json();
    let key_before = host_key("node3");

    rebuild(&mesh, "node3");

    assert_eq!(
        on("node3", "test -e /var/lib/mesh && echo there || echo blank").trim(),
        "blank",
        "a rebuilt machine has nothing of the mesh"
    );
    let after = mesh.run(&["node", "show", "node3", "--json"]).ok().json();
    assert_eq!(before["address"], after["address"]);
    assert_ne!(key_before, host_key("node3"), "new host keys");
    // the new key is pinned: mesh reaches the machine (a dry run asks it)
    let check = mesh.run(&["check", "node3", "--json"]);
    assert!(
        !check.stdout.contains("host-key"),
        "the rebuilt machine's key is pinned: {}",
        check.stdout
    );
}

/// The `THP_enabled` line of a `/proc/PID/status`.
fn thp(status: &str) -> String {
    status
        .lines()
        .find(|l| l.starts_with("THP_enabled:"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The operator runs without transparent huge pages (`src/main.rs`), a setting its children
/// inherit through exec: the lab's machines must not, or every process on them would run as no
/// machine of a fleet does.
#[test]
fn the_lab_machines_boot_with_transparent_huge_pages_as_the_host_gives_them() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    // this test's own process was never told otherwise
    let host = thp(&std::fs::read_to_string("/proc/self/status").expect("the test's status"));
    assert!(!host.is_empty(), "this kernel says no THP_enabled");
    let machine = thp(&on("node1", "cat /proc/1/status"));
    assert_eq!(machine, host, "node1's systemd");
}
