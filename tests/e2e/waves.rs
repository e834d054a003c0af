//! A push in waves is honest about what it did: once a wave has changed machines, a node of a
//! later wave that is refused (an assignment that waited for its provider takes part now, and
//! collides) fails alone, recorded, and the run says which machines changed.

use crate::util::{Mesh, node_result};

#[test]
fn a_node_refused_after_its_provider_was_pushed_fails_alone_and_the_applied_ones_are_reported() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "kv", "node1"]).ok();
    mesh.run(&["assign", "kv-client", "node2"]).ok();
    mesh.run(&["push", "--all"]).ok();

    // a second consumer on node2 whose home is the first one's: it waits for its login on
    // node1, so the collision shows only once node1 has made it
    mesh.run(&[
        "assign",
        "kv-client",
        "node2",
        "--as",
        "kvc2",
        "--pin",
        "store=kv@node1",
    ])
    .ok();
    mesh.run(&["place", "kvc2", "node2", "home=/srv/mesh/kv-client/home"])
        .ok();
    let pushed = mesh.run(&["push", "--all", "--json"]).code(2);
    let results = pushed.json();
    assert_eq!(
        node_result(&results, "node1")["outcome"],
        "applied",
        "{results}"
    );
    let node2 = node_result(&results, "node2");
    assert_eq!(node2["outcome"], "failed", "{results}");
    assert_eq!(node2["kind"], "refused", "{results}");
    assert!(
        node2["reason"]
            .as_str()
            .is_some_and(|e| e.contains("nothing was sent to it")),
        "{results}"
    );
    let history = mesh.run(&["history", "node2", "--limit", "1"]).ok().stdout;
    assert!(history.contains("failed"), "{history}");
    let history = mesh.run(&["history", "node1", "--limit", "1"]).ok().stdout;
    assert!(history.contains("applied"), "{history}");

    // taken away again, the fleet goes
    mesh.run(&["unassign", "kvc2", "node2"]).ok();
    mesh.run(&["push", "--all"]).ok();
}
