//! StrictHostKeyChecking `no`: where the node's key is pinned (`mesh node trust`)
//! the pin decides and the line changes nothing, so the push goes ahead; where known_hosts
//! decides and has no entry, the unknown key is refused naming the line ssh would have
//! followed. An older mesh refused the configuration outright, `node trust` included.

use crate::openssh::{Openssh, fingerprint, host_key, lab_key, pushed_motd};
use crate::util::{Mesh, address, node_result};

#[test]
fn strict_host_key_checking_no_is_refused_only_where_known_hosts_decides() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let node1 = address("node1");
    ssh.write(
        "config",
        &format!(
            "Host strict1\n  HostName {node1}\n  IdentityFile {}\n\
             Host *\n  StrictHostKeyChecking no\n",
            lab_key()
        ),
    );
    ssh.write("known_hosts", "");
    mesh.run(&["node", "remove", "node1"]).ok();
    ssh.run(&mesh, &["node", "add", "web", "--address", "strict1"])
        .ok();
    ssh.run(&mesh, &["assign", "motd", "web"]).ok();
    // known_hosts decides and has nothing: refused, the line named
    let refused = ssh.run(&mesh, &["push", "web", "--json"]).code(2).json();
    let result = node_result(&refused, "web");
    assert_eq!(result["kind"], "host-key", "{refused}");
    let reason = result["reason"].to_string();
    let line = format!(
        "StrictHostKeyChecking no ({}:5)",
        ssh.file("config").display()
    );
    assert!(
        reason.contains(&line) && reason.contains("mesh node trust web"),
        "{reason}"
    );
    // pinned: the pin decides
    let seen = fingerprint(&host_key("node1", "ed25519"));
    ssh.run(&mesh, &["node", "trust", "web", "--fingerprint", &seen])
        .ok();
    let pushed = ssh.run(&mesh, &["push", "web", "--json"]).ok().json();
    pushed_motd(&pushed, "web", "node1");
}
