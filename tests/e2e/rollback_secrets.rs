//! A provider rolled back alone takes its secret back to what the generation had while its
//! consumers on other nodes keep today's (found by an attacker: the consumer was then
//! refused, and the plan said nothing). The rollback's plan names the secret and the consumers it
//! leaves behind, and the way to take them back together; a rollback of the push that moved it
//! reaches them and leaves none behind.

use crate::util::{Mesh, node_result};

fn generation(out: &serde_json::Value, node: &str) -> u64 {
    node_result(out, node)["report"]["generation"]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("{node}: no generation: {out}"))
}

#[test]
fn a_provider_rolled_back_alone_names_the_consumers_it_leaves_on_todays_secret() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "kv", "node1"]).ok();
    mesh.run(&["assign", "kv-client", "node2"]).ok();
    let out = mesh.run(&["--json", "push", "node1", "node2"]).ok().json();
    let before = generation(&out, "node1");

    mesh.run(&["secret", "rotate", "kv", "kv.password"]).ok();
    mesh.run(&["push", "node1", "node2"]).ok();
    let history = mesh
        .run(&["--json", "history", "node1", "--limit", "1"])
        .ok()
        .json();
    let rotated = history[0]["id"]
        .as_i64()
        .expect("the push's id")
        .to_string();

    let alone = mesh
        .run(&[
            "rollback",
            "node1",
            "--to",
            &before.to_string(),
            "--dry-run",
        ])
        .code(4)
        .stdout;
    assert!(
        alone.contains(&format!(
            "goes back to the secret generation {before} had (one set or rotated since comes back)"
        )) && alone.contains("kv-client@node2")
            && alone.contains("mesh rollback --push ID"),
        "{alone}"
    );
    let json = mesh
        .run(&[
            "--json",
            "rollback",
            "node1",
            "--to",
            &before.to_string(),
            "--dry-run",
        ])
        .code(4)
        .json();
    let back = &node_result(&json, "node1")["secrets_back"];
    assert_eq!(back[0]["consumers"][0]["node"], "node2", "{json}");

    // the push that moved it reaches the consumer too: nobody is left on today's secret
    let together = mesh
        .run(&["rollback", "--push", &rotated, "--dry-run"])
        .code(4)
        .stdout;
    assert!(
        together.contains("goes back to the secret") && !together.contains("still read today's"),
        "{together}"
    );
}
