//! Every node's name (`${NAME.nodes}` of a fact requirement) is as long as the fleet: it is made
//! only for a module that reads it, so planning a fleet stays linear.

use std::collections::BTreeMap;

use crate::catalogue::parse_module;
use crate::inventory::{Assignment, Inventory, Node};

use super::requirements::own;

/// A module requiring the host's facts, whose /etc/motd reads `text`.
fn module(text: &str) -> crate::catalogue::Module {
    let json = br#"{"name": "m", "version": "1", "description": "d",
        "requires": [{"name": "machine", "kind": "host", "fact": {}}],
        "resources": [{"kind": "file", "path": "/etc/motd", "owner": "root", "group": "root",
            "mode": "0644", "template": "motd.txt"}]}"#;
    let shipped = BTreeMap::from([("motd.txt".to_string(), text.as_bytes().to_vec())]);
    parse_module("m", json, &shipped).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_nodes_name_is_made_only_for_a_module_that_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
    for (n, address) in [("n1", "192.0.2.1"), ("n2", "192.0.2.2")] {
        inv.add_node(&Node::new(n, address)).unwrap();
    }
    inv.assign("n1", "m", "m").unwrap();
    let node = inv.node("n1").unwrap();
    let a = Assignment {
        node: "n1".into(),
        instance: "m".into(),
        module: "m".into(),
    };
    let answered = |text: &str| {
        let mut problems = Vec::new();
        let catalogue = crate::catalogue::Catalogue::load(&[]).unwrap();
        let values = own(&inv, &catalogue, &module(text), &node, &a, &mut problems)
            .unwrap()
            .values;
        assert!(problems.is_empty(), "{problems:?}");
        values
    };

    let reads = answered("peers: ${machine.nodes:words}\n");
    assert_eq!(reads["machine.nodes"], serde_json::json!(["n1", "n2"]));
    let not = answered("I am ${machine.name}\n");
    assert_eq!(not["machine.name"], serde_json::json!("n1"));
    assert!(!not.contains_key("machine.nodes"), "{not:?}");
}
