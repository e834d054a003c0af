//! A settings layer per tag: between the mesh-wide layer and the node's, named
//! as a value's source, refused at resolution when two tags of one node disagree, kept by export
//! and import, and pushed to the machines that carry the tag.

use crate::util::{Mesh, on, path_str};

fn config(mesh: &Mesh, node: &str) -> serde_json::Value {
    let shown = mesh
        .run(&["config", "motd", "--node", node, "--json"])
        .ok()
        .json();
    shown["settings"]
        .as_array()
        .and_then(|s| s.iter().find(|e| e["name"] == "contact").cloned())
        .unwrap_or_default()
}

#[test]
fn a_tag_layer_sits_between_the_mesh_and_the_node_and_two_disagreeing_tags_are_refused() {
    let mesh = Mesh::new();
    for (n, address) in [
        ("w1", "192.0.2.1"),
        ("w2", "192.0.2.2"),
        ("d1", "192.0.2.3"),
    ] {
        mesh.run(&["node", "add", n, "--address", address]).ok();
        mesh.run(&["assign", "motd", n]).ok();
    }
    mesh.run(&["node", "tag", "w1", "web"]).ok();
    mesh.run(&["node", "tag", "w2", "web", "db"]).ok();
    mesh.run(&["settings", "set", "motd", "contact=mesh-wide"])
        .ok();
    let set = mesh
        .run(&[
            "settings",
            "set",
            "motd",
            "--tag",
            "web",
            "contact=web-team",
        ])
        .ok();
    assert!(set.stdout.contains("for tag web"), "{}", set.stdout);
    assert!(
        set.stdout.contains("w1") && set.stdout.contains("w2") && !set.stdout.contains("d1"),
        "reach names the tagged nodes only: {}",
        set.stdout
    );

    let w1 = config(&mesh, "w1");
    assert_eq!(
        (&w1["value"], &w1["source"], &w1["tag"]),
        (&"web-team".into(), &"tag".into(), &"web".into()),
        "{w1}"
    );
    assert_eq!(config(&mesh, "d1")["source"], "mesh");
    let text = mesh.run(&["config", "motd", "--node", "w1"]).ok().stdout;
    assert!(text.contains("tag web"), "{text}");

    // a tag layer that would make two tags of w2 disagree is refused as it is set, naming both
    let disagree = mesh.run(&["settings", "set", "motd", "--tag", "db", "contact=db-team"]);
    assert_ne!(disagree.status, 0, "{}", disagree.stdout);
    assert!(
        disagree.stderr.contains(
            "motd's contact for tag db would disagree with another tag of w2: tag web sets it \
             to \"web-team\""
        ),
        "{}",
        disagree.stderr
    );
    assert_eq!(
        config(&mesh, "w2")["value"],
        "web-team",
        "nothing was set: {}",
        config(&mesh, "w2")
    );
    // set while no node carries db, then a tag given: refused at resolution, naming both
    mesh.run(&["node", "untag", "w2", "db"]).ok();
    mesh.run(&["settings", "set", "motd", "--tag", "db", "contact=db-team"])
        .ok();
    mesh.run(&["node", "tag", "w2", "db"]).ok();
    let refused = mesh.run(&["plan", "w2"]).code(1);
    let said = format!("{}{}", refused.stdout, refused.stderr);
    assert!(
        said.contains("web sets \"web-team\"") && said.contains("db sets \"db-team\""),
        "{said}"
    );
    assert!(
        mesh.run(&["plan", "w1"]).status == 0,
        "w1 carries one of them only"
    );
    // the node's own layer settles it
    mesh.run(&["settings", "set", "motd", "--node", "w2", "contact=w2-own"])
        .ok();
    assert_eq!(config(&mesh, "w2")["source"], "node");
    mesh.run(&["plan", "w2"]).ok();

    // export and import keep the tag's layer
    let exported = mesh.run(&["inventory", "export"]).ok().stdout;
    assert!(exported.contains("\"tag\": \"web\""), "{exported}");
    mesh.run(&["settings", "clear", "motd", "--tag", "web"])
        .ok();
    assert_eq!(config(&mesh, "w1")["source"], "mesh");
    let file = mesh.dir.path().join("exported.json");
    std::fs::write(&file, &exported).expect("write the export");
    mesh.run(&["inventory", "import", path_str(&file)]).ok();
    assert_eq!(config(&mesh, "w1")["tag"], "web");
    let history = mesh
        .run(&["settings", "show", "motd", "--tag", "web", "--history"])
        .ok()
        .stdout;
    assert!(
        history.contains("web-team") && history.contains("clear"),
        "{history}"
    );
}

#[test]
fn a_machine_carrying_a_tag_is_pushed_its_tag_layers_value() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1"]).ok();
    mesh.run(&["assign", "motd", "node2"]).ok();
    mesh.run(&["node", "tag", "node1", "web"]).ok();
    mesh.run(&["settings", "set", "motd", "contact=everyone"])
        .ok();
    mesh.run(&[
        "settings",
        "set",
        "motd",
        "--tag",
        "web",
        "contact=the-web-team",
    ])
    .ok();
    mesh.run(&["push", "node1", "node2"]).ok();
    assert!(on("node1", "cat /etc/motd").contains("the-web-team"));
    let other = on("node2", "cat /etc/motd");
    assert!(
        other.contains("everyone") && !other.contains("web"),
        "{other}"
    );
    mesh.run(&["node", "untag", "node1", "web"]).ok();
    mesh.run(&["settings", "clear", "motd"]).ok();
    mesh.run(&["settings", "clear", "motd", "--tag", "web"])
        .ok();
}
