//! `-v` says, for each connection, what was reached and how: the user,
//! address and port, the jump host it went through, the host key and what vouched for it (the
//! inventory's pin, or the known_hosts file and line), the keys offered and the one accepted.

use crate::openssh::{
    Openssh, fingerprint, host_key, key_file_fingerprint, lab_key, unpinned_node3,
};
use crate::util::{Mesh, address};

#[test]
fn verbose_names_each_connections_address_user_hop_keys_and_known_hosts_line() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    unpinned_node3(&mesh, &ssh, "22");
    let (node1, node3) = (address("node1"), address("node3"));
    // node3 is reached through node1 (a node: its pin decides), its key in known_hosts line 2
    ssh.write("config", &format!("Host {node3}\n  ProxyJump {node1}\n"));
    ssh.write(
        "known_hosts",
        &format!("# the lab\n{node3} {}\n", host_key("node3", "ed25519")),
    );
    let run = ssh.run(&mesh, &["push", "node3", "-v"]).ok();
    let offered = key_file_fingerprint(&lab_key());
    let hop = format!(
        "node1: ssh root@{node1}:22: host key {} (pinned in the inventory); offered {offered}; accepted {offered}",
        fingerprint(&host_key("node1", "ed25519"))
    );
    let node = format!(
        "node3: ssh root@{node3}:22 via node1: host key {} (known_hosts {}:2); offered {offered}; accepted {offered}",
        fingerprint(&host_key("node3", "ed25519")),
        ssh.file("known_hosts").display()
    );
    for line in [hop, node] {
        assert!(
            run.stderr.lines().any(|l| l == line),
            "{line}\nin:\n{}",
            run.stderr
        );
    }
}
