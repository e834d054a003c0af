//! Waves from cost: canaries first, then each provider layer in waves such that no module has
//! more of its assignments restarting at once than its rollout allows. A node whose change costs
//! nothing or only reloads goes in the first (widest) wave of its layer.

use std::collections::BTreeMap;

use serde::Serialize;

/// What one node's change costs, as far as waves care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCost {
    pub node: String,
    /// The push would change something on it.
    pub changes: bool,
    /// The modules (by name) of which it restarts a unit, sorted, each once: a plan of a large
    /// fleet keeps one per node, and a set's first node is several times a short list's size.
    pub restarts: Vec<String>,
}

/// One wave of a rollout: its nodes are pushed together (bounded by `--parallel`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wave {
    /// From 1.
    pub number: usize,
    pub canary: bool,
    pub nodes: Vec<String>,
}

/// Groups `layers` (providers before consumers, each layer's nodes in order) into waves: first
/// up to `canary` nodes of the first layer that change something, each then in waves where no
/// module `M` of `limits` has more than `limits[M]` nodes restarting its units (a module not in
/// `limits` has no limit).
pub fn group(
    layers: Vec<Vec<NodeCost>>,
    canary: usize,
    limits: &BTreeMap<String, usize>,
) -> Vec<Wave> {
    let mut waves: Vec<Wave> = Vec::new();
    let mut layers = layers.into_iter();
    let mut first = layers.next().unwrap_or_default();
    if canary > 0 {
        let mut counts = BTreeMap::new();
        let mut canaries = Vec::new();
        first.retain(|n| {
            let take = canaries.len() < canary && n.changes && fits(n, &counts, limits);
            if take {
                count(n, &mut counts);
                canaries.push(n.node.clone());
            }
            !take
        });
        if !canaries.is_empty() {
            waves.push(Wave {
                number: 1,
                canary: true,
                nodes: canaries,
            });
        }
    }
    for layer in std::iter::once(first).chain(layers) {
        let mut left = layer;
        while !left.is_empty() {
            let mut counts = BTreeMap::new();
            let mut wave = Vec::new();
            left.retain(|n| {
                // a wave takes at least one node, whatever its limits say
                let take = wave.is_empty() || fits(n, &counts, limits);
                if take {
                    count(n, &mut counts);
                    wave.push(n.node.clone());
                }
                !take
            });
            waves.push(Wave {
                number: waves.len() + 1,
                canary: false,
                nodes: wave,
            });
        }
    }
    waves
}

/// Each node's wave, by name.
pub fn wave_map(waves: &[Wave]) -> BTreeMap<String, usize> {
    waves
        .iter()
        .flat_map(|w| w.nodes.iter().map(move |n| (n.clone(), w.number)))
        .collect()
}

/// Whether `n` may join a wave whose restarts so far are `counts`.
fn fits(n: &NodeCost, counts: &BTreeMap<String, usize>, limits: &BTreeMap<String, usize>) -> bool {
    n.restarts.iter().all(|m| match limits.get(m) {
        Some(limit) => counts.get(m).copied().unwrap_or(0) < *limit,
        None => true,
    })
}

fn count(n: &NodeCost, counts: &mut BTreeMap<String, usize>) {
    for m in &n.restarts {
        *counts.entry(m.clone()).or_insert(0) += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{NodeCost, group};

    fn cost(node: &str, restarts: &[&str]) -> NodeCost {
        NodeCost {
            node: node.into(),
            changes: true,
            restarts: restarts.iter().map(|m| m.to_string()).collect(),
        }
    }

    fn shape(
        layers: Vec<Vec<NodeCost>>,
        canary: usize,
        limits: &[(&str, usize)],
    ) -> Vec<(bool, Vec<String>)> {
        let limits: BTreeMap<String, usize> =
            limits.iter().map(|(m, n)| (m.to_string(), *n)).collect();
        group(layers, canary, &limits)
            .into_iter()
            .enumerate()
            .map(|(i, w)| {
                assert_eq!(w.number, i + 1);
                (w.canary, w.nodes)
            })
            .collect()
    }

    fn names(s: &[&str]) -> Vec<String> {
        s.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn restarts_of_a_module_go_at_most_max_unavailable_at_once_after_the_canary() {
        let nodes: Vec<NodeCost> = ["n1", "n2", "n3", "n4", "n5", "n6"]
            .iter()
            .map(|n| cost(n, &["web"]))
            .collect();
        assert_eq!(
            shape(vec![nodes], 1, &[("web", 2)]),
            vec![
                (true, names(&["n1"])),
                (false, names(&["n2", "n3"])),
                (false, names(&["n4", "n5"])),
                (false, names(&["n6"])),
            ]
        );
    }

    #[test]
    fn a_change_that_costs_nothing_or_a_reload_goes_in_one_wave() {
        let nodes: Vec<NodeCost> = ["n1", "n2", "n3", "n4"]
            .iter()
            .map(|n| cost(n, &[]))
            .collect();
        assert_eq!(
            shape(vec![nodes], 0, &[("web", 1)]),
            vec![(false, names(&["n1", "n2", "n3", "n4"]))]
        );
    }

    #[test]
    fn free_nodes_join_the_first_wave_and_each_module_is_limited_on_its_own() {
        let layer = vec![
            cost("a", &["kv"]),
            cost("b", &["kv", "web"]),
            cost("c", &[]),
            cost("d", &["web"]),
            cost("e", &["other"]),
        ];
        // kv 1 at a time, web unlimited, other unlimited
        assert_eq!(
            shape(vec![layer], 0, &[("kv", 1)]),
            vec![
                (false, names(&["a", "c", "d", "e"])),
                (false, names(&["b"])),
            ]
        );
    }

    #[test]
    fn consumers_come_after_their_providers_and_a_canary_is_only_a_node_that_changes() {
        let mut idle = cost("p0", &[]);
        idle.changes = false;
        let layers = vec![
            vec![idle, cost("p1", &["kv"]), cost("p2", &["kv"])],
            vec![cost("c1", &["app"]), cost("c2", &["app"])],
        ];
        assert_eq!(
            shape(layers, 1, &[("kv", 1), ("app", 1)]),
            vec![
                (true, names(&["p1"])),
                (false, names(&["p0", "p2"])),
                (false, names(&["c1"])),
                (false, names(&["c2"])),
            ]
        );
    }
}
