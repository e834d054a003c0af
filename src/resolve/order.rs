//! The order of one push across machines: providers before their consumers, in waves. Nodes of
//! one wave are pushed in parallel; a wave starts once the one before it has answered, so a
//! consumer waiting for what its provider makes is pushed in the same run once that is confirmed.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, Node};

use super::ResolveError;

/// The providers of a node's assignments that require another module, in the assignments' order:
/// each one's instance, with its requirements' providers (requirement → `instance@node`).
pub type Providers = Vec<(String, BTreeMap<String, String>)>;

/// `nodes` in waves: each node after every node (of `nodes`) that provides to one of its
/// assignments. Only a per-consumer provision makes a consumer wait (a shared one is answered
/// from the inventory alone), so a cycle of shared provisions is broken where it stalls, and only
/// nodes that would wait for each other in a cycle are refused, by name.
pub fn waves(
    inventory: &Inventory,
    catalogue: &Catalogue,
    nodes: Vec<Node>,
) -> Result<Vec<Vec<Node>>, ResolveError> {
    waves_of(
        inventory,
        catalogue,
        nodes.into_iter().map(|n| (n, None)).collect(),
    )
}

/// As [`waves`], each node with its assignments' providers where composing it resolved them
/// ([`super::Resolved::providers`]); a node without them is resolved here.
pub fn waves_of(
    inventory: &Inventory,
    catalogue: &Catalogue,
    nodes: Vec<(Node, Option<Providers>)>,
) -> Result<Vec<Vec<Node>>, ResolveError> {
    let selected: BTreeSet<String> = nodes.iter().map(|(n, _)| n.name.clone()).collect();
    // consumer node → provider node → (whether the consumer waits for it, why)
    let mut after: BTreeMap<String, BTreeMap<String, (bool, String)>> = BTreeMap::new();
    let mut left = Vec::with_capacity(nodes.len());
    for (node, known) in nodes {
        let resolved = match known {
            Some(p) => p,
            None => resolve(inventory, catalogue, &node)?,
        };
        let needs = needs(inventory, catalogue, &node, resolved, &selected)?;
        // a node that needs no other is free from the start: nothing to keep for it
        if !needs.is_empty() {
            after.insert(node.name.clone(), needs);
        }
        left.push(node);
    }
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    while !left.is_empty() {
        let free = |n: &Node, waiting_only: bool| {
            after.get(&n.name).is_none_or(|needs| {
                needs
                    .iter()
                    .all(|(p, (waits, _))| done.contains(p) || (waiting_only && !waits))
            })
        };
        let (mut ready, mut rest): (Vec<Node>, Vec<Node>) =
            left.into_iter().partition(|n| free(n, false));
        if ready.is_empty() {
            (ready, rest) = rest.into_iter().partition(|n| free(n, true));
        }
        if ready.is_empty() {
            let mut why: Vec<String> = Vec::new();
            for n in &rest {
                for (p, (waits, reason)) in after.get(&n.name).into_iter().flatten() {
                    if *waits && !done.contains(p) {
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

/// The nodes of `selected` that provide to one of `node`'s assignments, each with whether
/// `node` waits for what it makes (a per-consumer provision) and why it is needed.
pub fn providers(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
    selected: &BTreeSet<String>,
) -> Result<BTreeMap<String, (bool, String)>, ResolveError> {
    let resolved = resolve(inventory, catalogue, node)?;
    needs(inventory, catalogue, node, resolved, selected)
}

/// The providers of `node`'s assignments, resolved here.
fn resolve(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
) -> Result<Providers, ResolveError> {
    let mut out = Vec::new();
    for a in inventory.assignments(Some(&node.name))? {
        // an assignment that cannot be resolved orders nothing: compose says why
        if let Ok(Some(providers)) = super::providers_of(inventory, catalogue, node, &a) {
            out.push((a.instance, providers));
        }
    }
    Ok(out)
}

/// [`providers`], from the providers of `node`'s assignments (`resolved`).
fn needs(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
    resolved: Providers,
    selected: &BTreeSet<String>,
) -> Result<BTreeMap<String, (bool, String)>, ResolveError> {
    let mut needs: BTreeMap<String, (bool, String)> = BTreeMap::new();
    for (instance, providers) in resolved {
        for provider in providers.values() {
            let Some((pi, pn)) = provider.split_once('@') else {
                continue;
            };
            if pn == node.name || !selected.contains(pn) {
                continue;
            }
            let waits = per_consumer(inventory, catalogue, pi, pn)?;
            let why = format!("{instance}@{} needs {provider}", node.name);
            let entry = needs.entry(pn.to_string()).or_insert((waits, why.clone()));
            if waits && !entry.0 {
                *entry = (true, why);
            }
        }
    }
    Ok(needs)
}

/// Whether `instance` on `node` makes what it provides per consumer (then its consumers wait).
fn per_consumer(
    inventory: &Inventory,
    catalogue: &Catalogue,
    instance: &str,
    node: &str,
) -> Result<bool, ResolveError> {
    Ok(inventory
        .assignments(Some(node))?
        .iter()
        .find(|a| a.instance == instance)
        .and_then(|a| catalogue.module(&a.module).ok())
        .is_some_and(|m| m.provides.iter().any(|p| p.per_consumer.is_some())))
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
