//! `mesh node adopt`: it takes nodes as every other verb does, and a new machine
//! (no record, no signs of the mesh) keeps what it has as its own: adopting it takes nothing, and
//! what a push replaces there is given back byte for byte when it is undeclared.

use crate::util::{Mesh, node_result, on, rebuild};

/// /etc/motd as the machine has it: content, owner and mode.
pub(crate) fn motd(node: &str) -> String {
    on(
        node,
        "sha256sum /etc/motd | cut -d' ' -f1; stat -c '%u:%g %a' /etc/motd",
    )
}

/// The nodes a `--json` answer names, in order.
fn answered(json: &serde_json::Value) -> Vec<String> {
    json.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["node"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn adopt_takes_names_globs_tags_and_exclude_as_every_other_verb() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["node", "tag", "node2", "spare"]).ok();

    let both = mesh.run(&["node", "adopt", "node1", "node2", "--json"]);
    let both = both.json();
    assert_eq!(answered(&both), ["node1", "node2"], "{both}");
    for node in ["node1", "node2"] {
        assert_eq!(node_result(&both, node)["mode"], "adopt", "{both}");
    }
    let globbed = mesh
        .run(&["node", "adopt", "node*", "--exclude", "node[13]", "--json"])
        .json();
    assert_eq!(answered(&globbed), ["node2"], "{globbed}");
    let tagged = mesh.run(&["node", "adopt", "@spare", "--json"]).json();
    assert_eq!(answered(&tagged), ["node2"], "{tagged}");

    // a selector that matches nothing is refused, naming it, and nothing is asked
    let refused = mesh.run(&["node", "adopt", "node2", "nodeX"]).code(1);
    assert!(refused.stderr.contains("nodeX"), "{}", refused.stderr);
    assert!(
        mesh.run(&["node", "adopt"])
            .code(1)
            .stderr
            .contains("--all")
    );
}

#[test]
fn adopting_a_new_machine_keeps_what_it_has_and_unassigning_gives_it_back_byte_for_byte() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    rebuild(&mesh, "node2");
    // Debian's own message of the day, with an owner and mode of the host's
    on("node2", "chown 1:1 /etc/motd; chmod 0640 /etc/motd");
    let debians = motd("node2");
    mesh.run(&["assign", "motd", "node2"]).ok();

    let adopted = mesh.run(&["node", "adopt", "node2"]).ok().stdout;
    assert!(adopted.contains("node2: new"), "{adopted}");
    assert!(!adopted.contains("lost"), "{adopted}");
    assert!(!adopted.contains("cannot give back"), "{adopted}");
    assert_eq!(motd("node2"), debians, "adopting changed the machine");

    mesh.run(&["push", "node2"]).ok();
    assert!(
        on("node2", "cat /etc/motd").contains("managed by mesh"),
        "the push wrote the mesh's motd"
    );
    mesh.run(&["unassign", "motd", "node2"]).ok();
    let plan = mesh.run(&["plan", "node2"]).ok().stdout;
    assert!(
        plan.contains("restores /etc/motd as the host had it"),
        "{plan}"
    );
    mesh.run(&["push", "node2"]).ok();
    assert_eq!(
        motd("node2"),
        debians,
        "Debian's /etc/motd, byte for byte, owner and mode"
    );
}
