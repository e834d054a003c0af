//! A module's `wants` of another module's setting on the same node: `container-runtime` needs
//! `sysctl`'s `ip-forward` at 1 (dockerd sets it so as it starts). Beside it, sysctl's default
//! follows the want; a layer that says otherwise is refused at plan naming both modules, the
//! setting and the layer; a node without container-runtime keeps sysctl's own default.

use super::Mesh;

fn forward(mesh: &Mesh, node: &str) -> serde_json::Value {
    let config = mesh
        .run(&["config", "--node", node, "sysctl", "--json"])
        .ok()
        .json();
    config["settings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == "ip-forward")
        .cloned()
        .unwrap_or_else(|| panic!("no ip-forward in {config}"))
}

#[test]
fn a_setting_another_module_wants_follows_it_and_a_layer_against_it_is_refused_at_plan() {
    let mesh = Mesh::new();
    // the built-in modules alone, and a folder of the operator's own as every mesh here has
    mesh.demo();
    for n in ["a", "b"] {
        let root = mesh.root(n);
        mesh.run(&["node", "add", n, "--local", root.to_str().unwrap()])
            .ok();
        mesh.run(&["assign", "sysctl", n]).ok();
    }
    mesh.run(&["assign", "container-runtime", "a"]).ok();
    mesh.run(&[
        "settings",
        "set",
        "container-runtime",
        "insecure-registries=[]",
    ])
    .ok();

    let a = forward(&mesh, "a");
    assert_eq!(
        (&a["value"], &a["source"]),
        (&1.into(), &"wanted".into()),
        "{a}"
    );
    assert_eq!(a["wanted"]["by"], "container-runtime", "{a}");
    let text = mesh.run(&["config", "--node", "a", "sysctl"]).ok().stdout;
    assert!(text.contains("wanted by container-runtime"), "{text}");
    let b = forward(&mesh, "b");
    assert_eq!(
        (&b["value"], &b["source"]),
        (&0.into(), &"default".into()),
        "{b}"
    );
    mesh.run(&["plan", "a", "b"]).ok();

    // the operator's own 0, mesh-wide: refused where container-runtime is, taken where not
    mesh.run(&["settings", "set", "sysctl", "ip-forward=0"])
        .ok();
    let refused = mesh.run(&["plan", "a"]).code(1).stderr;
    for word in [
        "sysctl: setting \"ip-forward\" is 0 (from the mesh layer)",
        "container-runtime on a needs it 1",
        "mesh settings show sysctl`",
    ] {
        assert!(refused.contains(word), "{word:?} not in {refused}");
    }
    mesh.run(&["plan", "b"]).ok();
    assert_eq!(forward(&mesh, "b")["value"], 0);

    // a's own layer saying 1 is what the want asks: planned, from the node's layer
    mesh.run(&["settings", "set", "sysctl", "--node", "a", "ip-forward=1"])
        .ok();
    mesh.run(&["plan", "a"]).ok();
    assert_eq!(forward(&mesh, "a")["source"], "node");
    // and one saying 0 names the node's layer to change
    mesh.run(&["settings", "set", "sysctl", "--node", "a", "ip-forward=0"])
        .ok();
    let refused = mesh.run(&["plan", "a"]).code(1).stderr;
    assert!(
        refused.contains("(from the node layer)")
            && refused.contains("mesh settings show sysctl --node a`"),
        "{refused}"
    );
    // container-runtime taken off: nothing wants it any more, the layers rule again
    mesh.run(&["unassign", "container-runtime", "a"]).ok();
    mesh.run(&["plan", "a"]).ok();
    assert_eq!(forward(&mesh, "a")["value"], 0);
}
