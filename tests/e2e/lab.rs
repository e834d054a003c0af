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
