//! The honesty test's model of a rollout: a node that fails in wave W holds every node of a later
//! wave (`--max-failed 0`, the default), and a held node is sent nothing. The nodes the push held
//! are checked against that model before the comparisons leave them out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Each node's wave and outcome as one answer (`plan --json` or `push --json`) gives them.
fn by_node(list: &Value) -> BTreeMap<String, (Option<u64>, String, String)> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let text = |f: &str| r[f].as_str().unwrap_or("").to_string();
            (
                text("node"),
                (r["wave"].as_u64(), text("outcome"), text("kind")),
            )
        })
        .collect()
}

/// What a rollout held, and where the push broke the model: a held node outside the waves after
/// the first failure, a node of such a wave not held, a held node whose wave is not the plan's,
/// or (when `probe_fails`) a module whose probe must fail that got through. `excused` nodes were
/// changed behind the plan's back: their waves are not compared with it.
pub fn held(
    plan: &Value,
    pushed: &Value,
    probe_fails: bool,
    excused: impl Fn(&str) -> bool,
) -> (BTreeSet<String>, Vec<String>) {
    let planned = by_node(plan);
    let done = by_node(pushed);
    let mut differences = Vec::new();
    let first_failure = done
        .values()
        .filter(|(_, outcome, _)| outcome == "failed")
        .filter_map(|(wave, _, _)| *wave)
        .min();
    let held: BTreeSet<String> = done
        .iter()
        .filter(|(_, (_, outcome, kind))| outcome == "held" && kind == "rollout-stopped")
        .map(|(node, _)| node.clone())
        .collect();
    for (node, (wave, outcome, _)) in &done {
        let after_failure = matches!((wave, first_failure), (Some(w), Some(f)) if w > &f);
        if after_failure != held.contains(node) {
            differences.push(format!(
                "{node} in wave {wave:?} was {outcome}, and the first failure was in wave \
                 {first_failure:?}: a failure holds exactly the later waves"
            ));
        }
        let plan_wave = planned.get(node).and_then(|p| p.0);
        if held.contains(node) && !excused(node) && plan_wave != *wave {
            differences.push(format!(
                "{node} was held in wave {wave:?}; the plan put it in wave {plan_wave:?}"
            ));
        }
    }
    if probe_fails {
        let moving: Vec<&String> = plan
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| {
                p["changes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["id"].as_str().is_some_and(|id| id.starts_with("gamma:")))
            })
            .filter_map(|p| planned.get_key_value(p["node"].as_str().unwrap_or("")))
            .map(|(node, _)| node)
            .collect();
        for node in moving {
            let outcome = done.get(node).map(|d| d.1.as_str()).unwrap_or("absent");
            if outcome != "failed" && outcome != "held" {
                differences.push(format!(
                    "gamma's probe cannot pass, yet {node}, where the plan changed gamma, was {outcome}"
                ));
            }
        }
    }
    (held, differences)
}
