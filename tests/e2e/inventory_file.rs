//! A team shares one inventory: `mesh inventory export` writes a sorted text
//! document that round-trips byte for byte through `import` into a fresh file and plans the same;
//! an import over an existing inventory shows its changes first and removes nothing unless
//! `--replace`; a malformed or newer document is refused naming the field; generated secrets
//! never appear. `plan` composes without contacting machines: the nodes are never reached.

use crate::requirements::inventory_secret;
use crate::util::{Mesh, path_str};

/// A provider of `db` with a port the host gives out and a generated password.
const STORE: &str = r#"{
  "name": "store", "version": "1", "description": "Provides a database.",
  "requires": [{"name": "machine", "kind": "host", "fact": {}}, {"name": "listen", "kind": "host", "port": {}}],
  "provides": [{"name": "db", "fields": {
    "host": {"type": "string", "value": "${machine.address}"},
    "port": {"type": "integer", "value": "${listen.port}"},
    "password": {"type": "string", "secret": true, "generate": true}}}],
  "resources": [{"kind": "file", "path": "/etc/store.conf", "template": "store.conf"}]
}"#;

/// A consumer of `db` (not of its password), with a directory and settings.
const APP: &str = r#"{
  "name": "app", "version": "1", "description": "Uses a database.",
  "settings": [{"name": "pool", "type": "integer", "meaning": "Connections it keeps.", "default": 5, "cost": "none"},
               {"name": "labels", "type": "object", "meaning": "Labels.", "default": {}, "cost": "none"}],
  "requires": [
    {"name": "db", "kind": "module", "provision": "db", "fields": {"host": {"type": "string"}, "port": {"type": "integer"}}},
    {"name": "data", "kind": "host", "directory": {"mode": "0750"}}
  ],
  "resources": [{"kind": "file", "path": "${data.path}/app.conf", "template": "app.conf"}]
}"#;

const QUEUE: &str = r#"{
  "name": "queue", "version": "1", "description": "Provides the mesh's queue.",
  "requires": [{"name": "machine", "kind": "host", "fact": {}}],
  "provides": [{"name": "jobs", "seat": true, "fields": {"host": {"type": "string", "value": "${machine.name}"}}}],
  "resources": []
}"#;

/// A fleet using everything the document holds: tags, ports, pins, placements, layers, a seat.
pub fn fleet() -> Mesh {
    let mesh = Mesh::new();
    mesh.module("store", STORE, &[("store.conf", "port ${listen.port}\n")]);
    mesh.module(
        "app",
        APP,
        &[(
            "app.conf",
            "db=${db.host}:${db.port} pool=${pool} labels=${labels}\n",
        )],
    );
    mesh.module("queue", QUEUE, &[]);
    for (n, address) in [
        ("n1", "192.0.2.1"),
        ("n2", "192.0.2.2"),
        ("n3", "192.0.2.3"),
    ] {
        mesh.run(&["node", "add", n, "--address", address]).ok();
    }
    for args in [
        &["node", "tag", "n2", "web", "eu"][..],
        &["node", "tag", "n3", "web"],
        &[
            "node",
            "set",
            "n3",
            "--jump",
            "ops@bastion:2222,n1",
            "--port",
            "2200",
        ],
        &["assign", "store", "n1"],
        &["assign", "store", "n2"],
        &["assign", "app", "@web", "--pin", "db=store@n1"],
        &["assign", "queue", "n1"],
        &["seat", "set", "jobs", "queue@n1"],
        &["place", "app", "n3", "data=/srv/elsewhere"],
        &["settings", "set", "app", "pool=7"],
        &[
            "settings",
            "set",
            "app",
            "--node",
            "n2",
            r#"labels={"z": 1, "a": {"y": 2, "b": 3}}"#,
        ],
    ] {
        mesh.run(args).ok();
    }
    mesh
}

pub fn export(mesh: &Mesh) -> String {
    mesh.run(&["inventory", "export"]).ok().stdout
}

#[test]
fn an_export_round_trips_byte_for_byte_and_plans_the_same() {
    let mesh = fleet();
    // the plan gives out the store's ports and generates its password
    let plan = mesh.run(&["plan", "--all", "--json"]).ok().stdout;
    let first = export(&mesh);
    for words in [
        "\"mesh-inventory\": 1",
        "\"eu\"",
        "\"jump\": \"ops@bastion:2222,n1\"",
        "\"db\": \"store@n1\"",
        "/srv/elsewhere",
        "\"jobs\"",
    ] {
        assert!(first.contains(words), "{words} not in\n{first}");
    }
    assert!(first.contains("\"store.listen\": 2"), "{first}");
    // sorted: the object a setting holds too
    assert!(first.find("\"a\"") < first.find("\"z\""), "{first}");
    // never a generated secret
    let secret = inventory_secret(&mesh);
    assert!(!first.contains(&secret), "the secret is in the export");

    let file = mesh.dir.path().join("fleet.json");
    std::fs::write(&file, &first).unwrap();
    let fresh = mesh.dir.path().join("fresh.db");
    let imported = mesh
        .command(&["inventory", "import", path_str(&file)])
        .env("MESH_INVENTORY", &fresh)
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    let said = String::from_utf8_lossy(&imported.stdout);
    assert!(
        said.contains("+ node n1") && said.contains("+ assignment app on n2"),
        "{said}"
    );
    let again = mesh
        .command(&["inventory", "export"])
        .env("MESH_INVENTORY", &fresh)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&again.stdout), first);
    let replanned = mesh
        .command(&["plan", "--all", "--json"])
        .env("MESH_INVENTORY", &fresh)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&replanned.stdout), plan);
}

#[test]
fn an_import_over_an_inventory_shows_its_changes_and_removes_only_when_told() {
    let mesh = fleet();
    let before = export(&mesh);
    // the file drops n3 and the tag eu, moves n2's port, and adds a mesh-wide layer value
    let mut doc: serde_json::Value = serde_json::from_str(&before).unwrap();
    let nodes = doc["nodes"].as_array_mut().unwrap();
    nodes.retain(|n| n["name"] != "n3");
    nodes[1]["port"] = 2222.into();
    nodes[1]["tags"] = serde_json::json!(["web"]);
    doc["assignments"]
        .as_array_mut()
        .unwrap()
        .retain(|a| a["node"] != "n3");
    let file = mesh.dir.path().join("fleet.json");
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();

    let dry = mesh
        .run(&["inventory", "import", path_str(&file), "--dry-run"])
        .ok();
    for line in [
        // n2 was added without --port: its port was the ssh configuration's, else 22
        "~ node n2: port unset → 2222",
        "- node n3",
        "- assignment app on n3",
        "- tag eu of node n2",
    ] {
        assert!(dry.stdout.contains(line), "{line} not in\n{}", dry.stdout);
    }
    assert_eq!(export(&mesh), before, "a dry run changed the inventory");

    let refused = mesh.run(&["inventory", "import", path_str(&file)]).code(1);
    assert!(
        refused.stderr.contains("this would remove node n3, ")
            && refused.stderr.contains("assignment app on n3")
            && refused.stderr.contains("or say --replace to remove them"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        export(&mesh),
        before,
        "a refused import changed the inventory"
    );

    mesh.run(&["inventory", "import", path_str(&file), "--replace"])
        .ok();
    let after = export(&mesh);
    assert!(
        !after.contains("\"n3\"") && !after.contains("\"eu\""),
        "{after}"
    );
    assert!(after.contains("\"port\": 2222"), "{after}");
    // n2 kept its assignments and layer: edited, not replaced
    let config = mesh.run(&["config", "app", "--node", "n2"]).ok().stdout;
    assert!(config.contains("node"), "{config}");
}

#[test]
fn a_malformed_or_newer_document_is_refused_naming_the_field() {
    let mesh = fleet();
    let good = export(&mesh);
    let file = mesh.dir.path().join("bad.json");
    for (text, words) in [
        (
            good.replacen("\"address\"", "\"adress\"", 1),
            "unknown field `adress`",
        ),
        (
            good.replace("\"mesh-inventory\": 1", "\"mesh-inventory\": 2"),
            "was written by a newer mesh (mesh-inventory 2; this mesh reads 1)",
        ),
        (
            good.replace("\"mesh-inventory\": 1,", ""),
            "not a mesh inventory export: it has no `mesh-inventory` field",
        ),
        (
            good.replacen("\"192.0.2.1\"", "\"not an address!\"", 1),
            "nodes[0].address: \"not an address!\" is not a host name or an IP address",
        ),
        (
            good.replacen("\"192.0.2.2\"", "\"192.0.2.1\"", 1),
            "nodes[1].address: n2 reaches 192.0.2.1:22, as the node n1 does; one machine is one node",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let run = mesh
            .run(&["inventory", "import", path_str(&file), "--replace"])
            .code(1);
        assert!(run.stderr.contains(words), "{words} not in {}", run.stderr);
    }
    assert_eq!(export(&mesh), good);
}
