//! `mesh settings unset MODULE KEY… [--node N | --tag T]` takes keys out of one layer, naming
//! each, and keeps the rest; a key the layer does not set is refused and nothing is removed.

use super::Mesh;

#[test]
fn unset_names_what_it_removes_and_keeps_the_rest_of_the_layer() {
    let mesh = Mesh::new();
    mesh.demo();
    let root = mesh.root("a");
    mesh.run(&["node", "add", "a", "--local", root.to_str().unwrap()])
        .ok();
    mesh.run(&["assign", "sysctl", "a"]).ok();
    mesh.run(&[
        "settings",
        "set",
        "sysctl",
        "--node",
        "a",
        "ip-forward=1",
        "tcp-syncookies=2",
    ])
    .ok();
    let said = mesh
        .run(&[
            "settings",
            "unset",
            "sysctl",
            "--node",
            "a",
            "tcp-syncookies",
        ])
        .ok()
        .stdout;
    assert!(said.contains("removed tcp-syncookies"), "{said}");
    assert!(said.contains("sysctl on a: tcp-syncookies"), "{said}");
    let left = mesh
        .run(&["settings", "show", "sysctl", "--node", "a", "--json"])
        .ok()
        .json();
    assert_eq!(
        left["layer"],
        serde_json::json!({"ip-forward": 1}),
        "{left}"
    );

    let refused = mesh
        .run(&[
            "settings",
            "unset",
            "sysctl",
            "--node",
            "a",
            "ip-forward",
            "nope",
        ])
        .code(1)
        .stderr;
    assert!(
        refused.contains("does not set nope (it sets ip-forward); nothing was removed"),
        "{refused}"
    );
    // the last key gone, the layer goes with it
    mesh.run(&["settings", "unset", "sysctl", "--node", "a", "ip-forward"])
        .ok();
    let gone = mesh
        .run(&["settings", "show", "sysctl", "--node", "a"])
        .ok()
        .stdout;
    assert!(gone.contains("not set"), "{gone}");
}
