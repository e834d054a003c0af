//! Contracts are shared: `mesh module check` refuses a consumer that widens
//! the contract of what it requires, naming the module's file and field and the contract's file.

use crate::util::Mesh;

#[test]
fn module_check_names_the_file_and_field_that_widen_a_contract() {
    let mesh = Mesh::new();
    let cat = mesh.module(
        "app",
        r#"{"name": "app", "version": "1", "description": "An app.",
            "requires": [{"name": "store", "kind": "module", "provision": "kv",
                          "fields": {"host": {"type": "string"}, "shard": {"type": "integer"}}}],
            "resources": []}"#,
        &[],
    );
    // the built-in contract kv has no field "shard"
    let refused = mesh
        .run(&["module", "check", cat.to_str().unwrap()])
        .code(1)
        .stderr;
    assert!(
        refused.contains("app/module.json: requires[0].fields.shard: widens the contract kv (catalogue/contracts/kv.json)"),
        "{refused}"
    );
    // and the catalogue it is in treats it as broken: nothing that uses it goes ahead
    mesh.run(&["node", "add", "n1", "--address", "192.0.2.1"])
        .ok();
    let assign = mesh.run(&["assign", "app", "n1"]).code(1).stderr;
    assert!(assign.contains("module app is broken"), "{assign}");
}
