//! `assign` and `unassign` take `--all` as `plan`, `check` and `push` do: every node there is
//! (as it is now), or every node the instance runs on; never clap's "use '-- --all'" tip.

use super::Mesh;

fn assigned(mesh: &Mesh) -> Vec<String> {
    let export: serde_json::Value =
        serde_json::from_str(&mesh.run(&["inventory", "export"]).ok().stdout).unwrap();
    let mut out: Vec<String> = export["assignments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let field = |k: &str| a[k].as_str().unwrap_or("").to_string();
            format!("{} {}", field("node"), field("instance"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn assign_all_reaches_every_node_and_unassign_all_every_node_it_runs_on() {
    let mesh = Mesh::new();
    mesh.demo();
    for n in ["a", "b", "c"] {
        let root = mesh.root(n);
        mesh.run(&["node", "add", n, "--local", root.to_str().unwrap()])
            .ok();
    }
    let done = mesh
        .run(&["assign", "demo", "--all", "--exclude", "c"])
        .ok();
    assert!(!done.stderr.contains("-- --all"), "{}", done.stderr);
    assert_eq!(assigned(&mesh), ["a demo", "b demo"]);
    // a node named beside --all is a usage error, not a guess
    mesh.run(&["assign", "demo", "a", "--all"]).code(64);
    mesh.run(&["unassign", "demo", "--all"]).ok();
    assert!(assigned(&mesh).is_empty(), "{:?}", assigned(&mesh));
    let none = mesh.run(&["unassign", "demo", "--all"]);
    assert_ne!(none.status, 0);
    assert!(
        none.stderr.contains("demo is assigned to no node"),
        "{}",
        none.stderr
    );
}
