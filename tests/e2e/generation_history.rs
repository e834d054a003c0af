//! Every push a node confirms is a generation, kept in the inventory as it was sent:
//! `mesh history NODE` names each with its push and what changed, and `mesh history show
//! NODE@GEN` its resources, whatever the settings say today.

use crate::util::{Mesh, node_result};

fn pushed_generation(mesh: &Mesh, banner: &str) -> u64 {
    mesh.run(&["settings", "set", "motd", &format!("banner={banner}")])
        .ok();
    let pushed = mesh.run(&["--json", "push", "node1"]).ok().json();
    let node1 = node_result(&pushed, "node1");
    node1["report"]["generation"]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("no generation: {node1}"))
}

#[test]
fn each_confirmed_push_is_a_generation_kept_as_sent_and_listed_with_what_changed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1"]).ok();
    let first = pushed_generation(&mesh, "G one");
    let second = pushed_generation(&mesh, "G two");
    assert_eq!(second, first + 1);
    // today's settings are not what a generation had
    mesh.run(&["settings", "set", "motd", "banner=G three"])
        .ok();

    let history = mesh.run(&["history", "node1"]).ok().stdout;
    for words in [
        format!("(generation {first}: "),
        format!("(generation {second}: 1 changed)"),
    ] {
        assert!(history.contains(&words), "{words}: {history}");
    }
    for (number, banner) in [(first, "G one"), (second, "G two")] {
        let at = format!("node1@{number}");
        let shown = mesh.run(&["--json", "history", "show", &at]).ok().json();
        assert_eq!(shown["generation"], number, "{shown}");
        assert!(shown["push"].as_i64().is_some(), "{shown}");
        let resources = shown["resources"].to_string();
        assert!(resources.contains(banner), "{at}: {resources}");
        let text = mesh.run(&["history", "show", &at]).ok().stdout;
        assert!(
            text.contains(&format!("generation {number} of node1: push #"))
                && text.contains("motd:file:/etc/motd"),
            "{text}"
        );
    }
    let none = mesh.run(&["history", "show", "node1@999999"]).code(1);
    assert!(
        none.stderr.contains("keeps no generation 999999 of node1"),
        "{}",
        none.stderr
    );
    mesh.run(&["unassign", "motd", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}
