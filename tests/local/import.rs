//! `mesh node import FILE --from ansible`: an Ansible INI inventory's hosts as nodes, its groups
//! as tags, variables as Ansible orders them (a host's over its group's over its parent's).
//! The expected nodes are read off the fixture by Ansible's rules (`ansible-inventory --list`
//! is not run here). Importing again changes nothing; a node with other values is a change taken
//! only with --replace; one refusal stores nothing.

use super::Mesh;

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/ansible/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn node(mesh: &Mesh, name: &str) -> serde_json::Value {
    let export: serde_json::Value =
        serde_json::from_str(&mesh.run(&["inventory", "export"]).ok().stdout).unwrap();
    export["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no node {name} in {export}"))
}

#[test]
fn an_ansible_inventory_becomes_nodes_and_tags_and_a_second_import_changes_nothing() {
    let mesh = Mesh::new();
    let prod = fixture("prod.ini");
    let dry = mesh
        .run(&["node", "import", &prod, "--from", "ansible", "--dry-run"])
        .ok()
        .stdout;
    assert!(dry.contains("6 to add, 0 changed"), "{dry}");
    assert!(dry.contains("not read: http_port (3 hosts)"), "{dry}");
    assert!(dry.contains("not read: ntp_server (5 hosts)"), "{dry}");
    let export = mesh.run(&["inventory", "export"]).ok().stdout;
    assert!(
        !export.contains("web01"),
        "a dry run stores nothing: {export}"
    );

    let done = mesh
        .run(&["node", "import", &prod, "--from", "ansible"])
        .ok()
        .stdout;
    assert!(done.contains("host keys are not"), "{done}");
    let web = node(&mesh, "web02.example.org");
    assert_eq!(web["address"], "web02.example.org");
    assert_eq!(web["sudo"], true, "prod's ansible_become: {web}");
    assert_eq!(web["jump"], "admin@198.51.100.7", "{web}");
    assert_eq!(web["tags"], serde_json::json!(["prod", "web"]));
    let db = node(&mesh, "db-b");
    assert_eq!(
        (&db["address"], &db["port"]),
        (&"10.0.0.6".into(), &2222.into())
    );
    // the child group's false over the parent's true; the host's user over the group's
    assert_eq!(db["sudo"], false, "{db}");
    assert_eq!(db["user"], "postgres", "{db}");
    assert_eq!(node(&mesh, "db-a")["user"], "deploy");
    let bastion = node(&mesh, "bastion");
    assert_eq!(bastion["tags"], serde_json::json!([]));
    assert_eq!(bastion["host-key"], serde_json::Value::Null);

    let again = mesh
        .run(&["node", "import", &prod, "--from", "ansible"])
        .ok()
        .stdout;
    assert!(
        again.contains("0 to add, 0 changed, 6 as the inventory has them"),
        "{again}"
    );
    assert!(again.contains("nothing to import"), "{again}");

    // another value for a node the inventory has: shown, refused, then taken with --replace
    let dir = tempfile::tempdir().unwrap();
    let moved = dir.path().join("moved.ini");
    std::fs::write(
        &moved,
        std::fs::read_to_string(&prod)
            .unwrap()
            .replace("10.0.0.6", "10.0.0.9"),
    )
    .unwrap();
    let moved = moved.to_str().unwrap();
    let refused = mesh
        .run(&["node", "import", moved, "--from", "ansible"])
        .code(1);
    assert!(
        refused
            .stdout
            .contains("~ db-b: address 10.0.0.6 -> 10.0.0.9"),
        "{}",
        refused.stdout
    );
    assert!(refused.stderr.contains("--replace"), "{}", refused.stderr);
    assert_eq!(node(&mesh, "db-b")["address"], "10.0.0.6");
    mesh.run(&["node", "import", moved, "--from", "ansible", "--replace"])
        .ok();
    assert_eq!(node(&mesh, "db-b")["address"], "10.0.0.9");
}

#[test]
fn a_malformed_inventory_is_refused_with_its_line_and_nothing_is_stored() {
    let mesh = Mesh::new();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.ini");
    std::fs::write(&bad, "[web]\nweb1\nweb[2:3 ansible_port=22\n").unwrap();
    let refused = mesh
        .run(&["node", "import", bad.to_str().unwrap(), "--from", "ansible"])
        .code(1)
        .stderr;
    assert!(refused.contains("bad.ini:3: "), "{refused}");
    // two hosts on one machine: the second refused, the first not kept either
    std::fs::write(
        &bad,
        "[web]\nweb1 ansible_host=192.0.2.1\nweb2 ansible_host=192.0.2.1\n",
    )
    .unwrap();
    mesh.run(&["node", "import", bad.to_str().unwrap(), "--from", "ansible"])
        .code(1);
    let export = mesh.run(&["inventory", "export"]).ok().stdout;
    assert!(!export.contains("web1"), "{export}");
}
