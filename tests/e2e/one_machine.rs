//! One machine is one node, however it is named: an ssh configuration alias of a node's address
//! is refused by `node add`, a host key another node has pinned by `node trust`, and a node that
//! offers another node's pinned key (reached through an alias and known_hosts, as an inventory
//! written before these checks could hold it) is refused by `push` and `check` on the handshake,
//! before anything is sent.

use crate::util::{Mesh, Run, address, path_str};

#[test]
fn an_ssh_alias_of_a_node_is_refused_when_added_trusted_and_pushed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let ssh = home.path().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let node1 = address("node1");
    std::fs::write(
        ssh.join("config"),
        format!("Host n1a\n  HostName {node1}\n"),
    )
    .unwrap();
    let run = |args: &[&str]| -> Run {
        Run::from(
            mesh.command(args)
                .env("HOME", home.path())
                // ssh's own files are the passwd home's whatever HOME says: name this home's
                .env("MESH_SSH_CONFIG", ssh.join("config"))
                .env("MESH_SSH_KNOWN_HOSTS", ssh.join("known_hosts"))
                .env("MESH_SSH_SYSTEM_CONFIG", ssh.join("none"))
                .env("MESH_SSH_SYSTEM_KNOWN_HOSTS", ssh.join("none"))
                .output()
                .unwrap(),
        )
    };

    // (b) the alias reaches node1's address: refused, naming node1
    let added = run(&["node", "add", "n1a", "--address", "n1a"]).code(1);
    assert!(
        added.stderr.contains("node1") && added.stderr.contains("one machine is one node"),
        "{}",
        added.stderr
    );

    // an inventory written before the check holds such a node, unpinned, with node1's key in
    // known_hosts for the alias's address
    let db = rusqlite::Connection::open(mesh.inventory()).unwrap();
    db.execute(
        "INSERT INTO nodes (name, address, port, user, identity, sudo, host_key, lab, root, jump,
             port_given, user_given)
         SELECT 'n1a', 'n1a', port, user, identity, sudo, NULL, lab, root, jump, port_given,
             user_given FROM nodes WHERE name = 'node1'",
        [],
    )
    .unwrap();
    let key: String = db
        .query_row("SELECT host_key FROM nodes WHERE name = 'node1'", [], |r| {
            r.get(0)
        })
        .unwrap();
    drop(db);
    std::fs::write(ssh.join("known_hosts"), format!("{node1} {key}\n")).unwrap();
    let shown = run(&["node", "show", "node1"]).ok().stdout;
    let fingerprint = shown
        .lines()
        .find_map(|l| l.strip_prefix("host key:"))
        .unwrap()
        .trim()
        .to_string();

    // (a) pinning node1's key on another node is refused, naming node1
    let trusted = run(&["node", "trust", "n1a", "--fingerprint", &fingerprint]).code(1);
    assert!(
        trusted
            .stderr
            .contains("node1 has this host key: one machine is one node"),
        "{}",
        trusted.stderr
    );

    // (c) reached anyway, the machine's verified key is node1's: refused before anything is sent
    for args in [&["push", "n1a"][..], &["check", "n1a"]] {
        let refused = run(args);
        assert_ne!(
            refused.status, 0,
            "{args:?} went ahead:\n{}",
            refused.stdout
        );
        let said = format!("{}{}", refused.stdout, refused.stderr);
        assert!(
            said.contains("which node1 has pinned: n1a is node1's machine"),
            "{args:?}: {said}"
        );
    }

    // and its export is refused by an import: n1a and node1 reach one machine
    let file = mesh.dir.path().join("fleet.json");
    std::fs::write(&file, run(&["inventory", "export"]).ok().stdout).unwrap();
    let fresh = mesh.dir.path().join("fresh.db");
    let imported = Run::from(
        mesh.command(&["inventory", "import", path_str(&file)])
            .env("HOME", home.path())
            .env("MESH_SSH_CONFIG", ssh.join("config"))
            .env("MESH_SSH_KNOWN_HOSTS", ssh.join("known_hosts"))
            .env("MESH_SSH_SYSTEM_CONFIG", ssh.join("none"))
            .env("MESH_INVENTORY", &fresh)
            .output()
            .unwrap(),
    )
    .code(1);
    assert!(
        imported.stderr.contains(&format!(
            "nodes[1].address: node1 reaches {node1}:22, as the node n1a does; one machine is one node"
        )),
        "{}",
        imported.stderr
    );
}
