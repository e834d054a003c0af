//! What composing resolves once and hands on must be what was resolved again before: the
//! consumers a provider finds by the choice alone, and the providers and assignments a plan's
//! cost and order take from [`super::Composed::resolved`].

use crate::inventory::Node;

use super::allocation::compose;
use super::consumers::{consumers_answered_by, consumers_of};
use super::provisions_tests::{Mesh, mesh};

/// `instance@node`'s consumers both ways: they must agree, and are returned as
/// `instance@node:requirement(pinned)`.
fn consumers(m: &Mesh, instance: &str, node: &str) -> Vec<String> {
    let (inv, cat) = (&m.inv, &m.cat);
    let module = inv
        .assignments(Some(node))
        .unwrap()
        .into_iter()
        .find(|a| a.instance == instance)
        .map(|a| cat.module(&a.module).unwrap())
        .unwrap();
    let scanned = consumers_of(inv, cat, instance, node).unwrap();
    let chosen = consumers_answered_by(inv, cat, module, instance, node).unwrap();
    assert_eq!(chosen, scanned, "{instance}@{node}");
    scanned
        .iter()
        .map(|c| {
            let pin = if c.pinned { " pinned" } else { "" };
            format!("{}@{}:{}{pin}", c.instance, c.node, c.requirement)
        })
        .collect()
}

/// Five nodes, two `kv` providers (n1, n2), consumers beside them, pinned to them from
/// elsewhere, one of two instances on a node, and one that no provider answers.
fn several() -> Mesh {
    let m = mesh();
    for (n, address) in [("n4", "192.0.2.4"), ("n5", "192.0.2.5")] {
        m.inv.add_node(&Node::new(n, address)).unwrap();
    }
    let inv = &m.inv;
    inv.assign("n2", "kv", "kv").unwrap();
    inv.assign("n1", "kv-client", "kv-client").unwrap();
    inv.assign("n2", "kv-client", "cache").unwrap();
    inv.set_pin("n3", "kv-client", "store", ("kv", "n1"))
        .unwrap();
    inv.assign("n4", "kv-client", "kv-client").unwrap();
    inv.set_pin("n4", "kv-client", "store", ("kv", "n2"))
        .unwrap();
    // several providers, none on n5 and no pin: no one answers it
    inv.assign("n5", "kv-client", "kv-client").unwrap();
    m
}

#[test]
fn the_consumers_found_by_the_choice_are_those_found_by_resolving_each_in_full() {
    // one provider in the mesh: every consumer anywhere is its
    let m = mesh();
    assert_eq!(
        consumers(&m, "kv", "n1"),
        vec!["kv-client@n2:store", "kv-client@n3:store"]
    );
    let m = several();
    assert_eq!(
        consumers(&m, "kv", "n1"),
        vec!["kv-client@n1:store", "kv-client@n3:store pinned"]
    );
    assert_eq!(
        consumers(&m, "kv", "n2"),
        vec![
            "cache@n2:store",
            "kv-client@n2:store",
            "kv-client@n4:store pinned"
        ]
    );
    // a consumer is no provider
    assert!(
        consumers_of(&m.inv, &m.cat, "kv-client", "n2")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn what_composing_hands_on_is_what_the_cost_and_the_order_read_again() {
    let m = several();
    let (inv, cat) = (&m.inv, &m.cat);
    let mut ordered = Vec::new();
    for node in inv.nodes().unwrap() {
        // n5 cannot be composed (no provider answers it): it is never costed or ordered
        let Ok(c) = compose(inv, cat, &node) else {
            assert_eq!(node.name, "n5");
            continue;
        };
        let r = c.resolved.expect("composed here");
        assert_eq!(r.assignments, inv.assignments(Some(&node.name)).unwrap());
        let again: Vec<_> = r
            .assignments
            .iter()
            .filter_map(|a| {
                super::providers_of(inv, cat, &node, a)
                    .unwrap()
                    .map(|p| (a.instance.clone(), p))
            })
            .collect();
        assert_eq!(r.providers, again, "{}", node.name);
        ordered.push((node, Some(r.providers)));
    }
    let names = |w: Vec<Vec<Node>>| -> Vec<Vec<String>> {
        w.into_iter()
            .map(|l| l.into_iter().map(|n| n.name).collect())
            .collect()
    };
    let nodes: Vec<Node> = ordered.iter().map(|(n, _)| n.clone()).collect();
    let afresh = names(super::order::waves(inv, cat, nodes).unwrap());
    // the pinned consumers on n3 and n4 wait for their providers on n1 and n2
    assert_eq!(afresh, vec![vec!["n1", "n2"], vec!["n3", "n4"]]);
    let handed_on = names(super::order::waves_of(inv, cat, ordered).unwrap());
    assert_eq!(handed_on, afresh);
}
