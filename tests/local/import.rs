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

/// What `ansible-inventory --list` says of `file`'s hosts, as the nodes mesh should make: name,
/// address, port, user, sudo, jump and tags. `None` where ansible-core is not installed.
fn oracle(file: &str) -> Option<Vec<serde_json::Value>> {
    let out = std::process::Command::new("ansible-inventory")
        .args(["-i", file, "--list"])
        .env("ANSIBLE_INVENTORY_UNPARSED_WARNING", "False")
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let parents = |host: &str| -> Vec<String> {
        // a group holds the host directly, or through a child that does
        fn holds(list: &serde_json::Value, group: &str, host: &str) -> bool {
            let g = &list[group];
            g["hosts"]
                .as_array()
                .is_some_and(|h| h.iter().any(|x| x == host))
                || g["children"].as_array().is_some_and(|c| {
                    c.iter()
                        .filter_map(|c| c.as_str())
                        .any(|c| holds(list, c, host))
                })
        }
        let mut tags: Vec<String> = list
            .as_object()
            .into_iter()
            .flatten()
            .map(|(g, _)| g.clone())
            .filter(|g| !["_meta", "all", "ungrouped"].contains(&g.as_str()))
            .filter(|g| holds(&list, g, host))
            .collect();
        tags.sort();
        tags
    };
    let mut nodes = Vec::new();
    for (host, vars) in list["_meta"]["hostvars"].as_object()? {
        let text = |k: &str| {
            vars[k]
                .as_str()
                .map(str::to_string)
                .or_else(|| vars[k].as_u64().map(|n| n.to_string()))
        };
        let args = text("ansible_ssh_common_args").unwrap_or_default();
        let jump = args
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .find_map(|w| match w[0] {
                "-J" => Some(w[1].to_string()),
                "-o" => w[1].strip_prefix("ProxyJump=").map(str::to_string),
                _ => None,
            });
        nodes.push(serde_json::json!({
            "name": host,
            "address": text("ansible_host").unwrap_or(host.clone()),
            "port": text("ansible_port").map_or(22, |p| p.parse::<u64>().unwrap_or(0)),
            "user": text("ansible_user").unwrap_or("root".into()),
            "sudo": matches!(text("ansible_become").as_deref(), Some("true" | "True" | "yes" | "1")),
            "jump": jump,
            "tags": parents(host),
        }));
    }
    Some(nodes)
}

#[test]
fn every_fixture_imports_as_ansible_inventory_lists_it() {
    for name in ["prod.ini", "nested.ini"] {
        let file = fixture(name);
        let Some(expected) = oracle(&file) else {
            eprintln!("skipped: ansible-inventory is not installed (pip install ansible-core)");
            return;
        };
        let mesh = Mesh::new();
        mesh.run(&["node", "import", &file, "--from", "ansible"])
            .ok();
        for want in &expected {
            let got = node(&mesh, want["name"].as_str().unwrap_or(""));
            for field in ["address", "port", "user", "sudo", "jump", "tags"] {
                assert_eq!(
                    got[field], want[field],
                    "{name}: {field} of {want} in {got}"
                );
            }
        }
        let export: serde_json::Value =
            serde_json::from_str(&mesh.run(&["inventory", "export"]).ok().stdout).unwrap();
        assert_eq!(
            export["nodes"].as_array().map(Vec::len),
            Some(expected.len()),
            "{name}"
        );
    }
}

#[test]
fn each_host_alias_of_an_ssh_config_becomes_a_node_reached_by_it_and_patterns_are_skipped() {
    let mesh = Mesh::new();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::write(
        &config,
        "Host web1 web2\n  HostName %h.example.org\n  User ops\n\
         Host db1\n  HostName 10.0.0.5\n  Port 2222\n  ProxyJump bastion.example.org\n\
         Host *.example.org\n  IdentityFile ~/.ssh/fleet\nhost=bastion\n",
    )
    .unwrap();
    let said = mesh
        .run(&[
            "node",
            "import",
            config.to_str().unwrap(),
            "--from",
            "ssh-config",
        ])
        .ok()
        .stdout;
    assert!(
        said.contains("skipped *.example.org: a pattern, not a machine"),
        "{said}"
    );
    assert!(said.contains("4 to add"), "{said}");
    for alias in ["web1", "web2", "db1", "bastion"] {
        // reached by its alias: the configuration's HostName, Port, User and ProxyJump stay its
        assert_eq!(node(&mesh, alias)["address"], alias);
    }
    let again = mesh
        .run(&[
            "node",
            "import",
            config.to_str().unwrap(),
            "--from",
            "ssh-config",
        ])
        .ok()
        .stdout;
    assert!(again.contains("nothing to import"), "{again}");
}
