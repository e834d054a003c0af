//! The order of one push across machines: providers before their consumers, in waves. Nodes of
//! one wave are pushed in parallel; a wave starts once the one before it has answered, so a
//! consumer waiting for what its provider makes is pushed in the same run once that is confirmed.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, Node};

use super::ResolveError;

/// `nodes` in waves: each node after every node (of `nodes`) that provides to one of its
/// assignments. Nodes that provide to each other in a cycle are refused, by name.
pub fn waves(
    inventory: &Inventory,
    catalogue: &Catalogue,
    nodes: Vec<Node>,
) -> Result<Vec<Vec<Node>>, ResolveError> {
    let selected: BTreeSet<String> = nodes.iter().map(|n| n.name.clone()).collect();
    // consumer node → provider node → why (`consumer needs provider`)
    let mut after: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for node in &nodes {
        let mut needs = BTreeMap::new();
        for a in inventory.assignments(Some(&node.name))? {
            // an assignment that cannot be resolved orders nothing: compose says why
            let Ok((answers, _)) = super::answers(inventory, catalogue, node, &a) else {
                continue;
            };
            for provider in answers.providers.values() {
                let Some((_, pn)) = provider.split_once('@') else {
                    continue;
                };
                if pn != node.name && selected.contains(pn) {
                    needs.entry(pn.to_string()).or_insert_with(|| {
                        format!("{}@{} needs {provider}", a.instance, node.name)
                    });
                }
            }
        }
        after.insert(node.name.clone(), needs);
    }
    let mut left: Vec<Node> = nodes;
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    while !left.is_empty() {
        let (ready, rest): (Vec<Node>, Vec<Node>) = left.into_iter().partition(|n| {
            after
                .get(&n.name)
                .is_none_or(|needs| needs.keys().all(|p| done.contains(p)))
        });
        if ready.is_empty() {
            let mut why: Vec<String> = Vec::new();
            for n in &rest {
                for (p, reason) in after.get(&n.name).into_iter().flatten() {
                    if !done.contains(p) {
                        why.push(reason.clone());
                    }
                }
            }
            return Err(ResolveError::Cycle {
                nodes: rest.iter().map(|n| n.name.clone()).collect(),
                why,
            });
        }
        done.extend(ready.iter().map(|n| n.name.clone()));
        out.push(ready);
        left = rest;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::inventory::Node;

    use super::{ResolveError, waves};

    fn names(waves: &[Vec<Node>]) -> Vec<Vec<&str>> {
        waves
            .iter()
            .map(|w| w.iter().map(|n| n.name.as_str()).collect())
            .collect()
    }

    #[test]
    fn providers_go_before_their_consumers_and_a_cycle_is_refused_by_name() {
        let m = super::super::provisions_tests::mesh();
        let (inv, cat) = (&m.inv, &m.cat);
        let all = inv.nodes().unwrap();
        let w = waves(inv, cat, all.clone()).unwrap();
        assert_eq!(names(&w), vec![vec!["n1"], vec!["n2", "n3"]]);

        // n2 now provides to n1, which provides to n2
        inv.assign("n2", "kv", "kv").unwrap();
        inv.assign("n1", "kv-client", "kv-client").unwrap();
        inv.set_pin("n1", "kv-client", "store", ("kv", "n2"))
            .unwrap();
        inv.set_pin("n2", "kv-client", "store", ("kv", "n1"))
            .unwrap();
        inv.set_pin("n3", "kv-client", "store", ("kv", "n1"))
            .unwrap();
        match waves(inv, cat, all) {
            Err(e @ ResolveError::Cycle { .. }) => {
                let said = e.to_string();
                assert!(
                    said.starts_with("n1, n2, n3 cannot be ordered: some of them provide to each other in a cycle"),
                    "{said}"
                );
                assert!(said.contains("kv-client@n1 needs kv@n2"), "{said}");
                assert!(said.contains("kv-client@n2 needs kv@n1"), "{said}");
            }
            other => panic!("no cycle: {other:?}"),
        }
    }
}
