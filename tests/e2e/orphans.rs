//! No silent orphaning: a provider that answers consumers is not taken away
//! unless told `--force`, naming each consumer; a consumer whose provider is gone is held alone
//! and the rest of the fleet goes ahead; the consumer's own removal always goes through. `plan`
//! composes without contacting machines, so the nodes here are never reached.

use crate::util::Mesh;

const STORE: &str = r#"{
  "name": "store", "version": "1", "description": "Provides a database.",
  "requires": [{"name": "machine", "kind": "host", "fact": {}}],
  "provides": [{"name": "db", "fields": {"host": {"type": "string", "value": "${machine.address}"}}}],
  "resources": [{"kind": "file", "path": "/etc/store.conf", "template": "store.conf"}]
}"#;

const APP: &str = r#"{
  "name": "app", "version": "1", "description": "Uses a database.",
  "requires": [{"name": "db", "kind": "module", "provision": "db", "fields": {"host": {"type": "string"}}}],
  "resources": [{"kind": "file", "path": "/etc/app.conf", "template": "app.conf"}]
}"#;

const PLAIN: &str = r#"{
  "name": "plain", "version": "1", "description": "Needs nothing.",
  "resources": [{"kind": "file", "path": "/etc/plain.conf", "template": "plain.conf"}]
}"#;

fn mesh() -> Mesh {
    let mesh = Mesh::new();
    mesh.module("store", STORE, &[("store.conf", "store\n")]);
    mesh.module("app", APP, &[("app.conf", "db=${db.host}\n")]);
    mesh.module("plain", PLAIN, &[("plain.conf", "plain\n")]);
    mesh.add_offline_nodes();
    mesh
}

#[test]
fn a_provider_with_consumers_is_not_unassigned_unless_forced_and_its_consumer_is_held_alone() {
    let mesh = mesh();
    mesh.run(&["assign", "store", "n1"]).ok();
    mesh.run(&["assign", "app", "n2", "--pin", "db=store@n1"])
        .ok();
    // answered by the rules (the only provider), not pinned
    mesh.run(&["assign", "app", "n3", "--as", "reader"]).ok();
    mesh.run(&["assign", "plain", "n3"]).ok();

    let refused = mesh.run(&["unassign", "store", "n1"]).code(1).stderr;
    for said in [
        "store answers consumers; nothing was unassigned",
        "store@n1 answers app@n2 (module app, requirement db, pinned)",
        "store@n1 answers reader@n3 (module app, requirement db)",
        "--force",
    ] {
        assert!(refused.contains(said), "missing {said:?} in:\n{refused}");
    }
    // nothing was taken away
    assert!(
        mesh.run(&["plan", "n1"])
            .ok()
            .stdout
            .contains("n1: 1 to add"),
        "store left n1"
    );

    // a consumer's own removal always goes through
    mesh.run(&["unassign", "reader", "n3"]).ok();
    let forced = mesh.run(&["unassign", "store", "n1", "--force"]).ok();
    assert!(
        forced
            .stderr
            .contains("store@n1 answers app@n2 (module app, requirement db, pinned)"),
        "{}",
        forced.stderr
    );

    // the consumer whose provider is gone is held, named with its missing provider; every other
    // node is planned as usual
    let plan = mesh.run(&["plan", "--all"]).code(3).stdout;
    assert!(
        plan.contains("n2: app is HELD, keeping what it has: app: requirement \"db\" (provision db) is pinned to store@n1"),
        "{plan}"
    );
    assert!(plan.contains("n3: 1 to add"), "{plan}");
    assert!(plan.contains("n1: no changes"), "{plan}");
    let json = mesh.run(&["plan", "--all", "--json"]).code(3).json();
    let n2 = json
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["node"] == "n2")
        .unwrap();
    assert_eq!(n2["held"][0]["instance"], "app");
    assert!(n2["changes"].as_array().unwrap().is_empty(), "{n2}");

    // and its own removal goes through, after which nothing is held
    mesh.run(&["unassign", "app", "n2"]).ok();
    mesh.run(&["plan", "--all"]).ok();
}
