//! A rollback as its waves go: each node sent the generation the inventory kept of it, exactly
//! as it was sent then, through the same wave sending as a push ([`super::send`]). Every node is
//! held at its generation before anything is sent (an operator killed mid-rollback leaves it
//! held, so no push undoes what may have reached the machine unseen); each push it begins is
//! noted as a rollback to that generation the moment it is begun (a `check` after a killed one
//! reconciles against what it sent); a node it did not apply on, however the rollback ended, an
//! error included, gets back the hold it had, said in [`Rolled::given_back`].

use std::collections::BTreeMap;

use crate::catalogue::Catalogue;
use crate::inventory::{Hold, Inventory, Node};
use crate::plan::Plan;
use crate::push::NodeResult;
use crate::resolve::Composed;

pub use super::rollback_plan::{LeftAlone, Read, Target, of_push, plans, read, to};

use super::run::{PushOptions, Said, Summary, Watch};
use super::send::push_wave;
use super::{DeployError, NodeCost, Options, Wave, node_cost};

/// What a rollback came to.
#[derive(Default)]
pub struct Rolled {
    pub summary: Summary,
    /// What stopped it (a node failed in a wave): the later waves' nodes were sent nothing.
    pub stopped_by: Option<String>,
    /// The nodes it applied on, now held at their generation.
    pub held: Vec<Hold>,
    /// The nodes it did not apply on, each given back the hold it had (the generation it was
    /// held at before, or none).
    pub given_back: Vec<(String, Option<u64>)>,
}

/// A rollback that could not send every wave: the error, and the holds given back.
#[derive(Debug, thiserror::Error)]
#[error("{error}; {}", given_back_text(given_back))]
pub struct Unsent {
    pub error: DeployError,
    pub given_back: Vec<(String, Option<u64>)>,
}

/// How a rollback's error says the holds it gave back.
pub fn given_back_text(given_back: &[(String, Option<u64>)]) -> String {
    if given_back.is_empty() {
        return "no node's hold had to be given back".into();
    }
    let each: Vec<String> = given_back
        .iter()
        .map(|(node, was)| match was {
            Some(g) => format!("{node} (held at generation {g} again)"),
            None => format!("{node} (not held)"),
        })
        .collect();
    format!(
        "the rollback gave back the hold each node it did not apply on had: {}",
        each.join(", ")
    )
}

/// Whether `r` is a node the rollback applied on.
pub fn applied(r: &NodeResult) -> bool {
    r.result
        .as_ref()
        .is_ok_and(|a| !a.failed() && !a.reverted() && !a.unknown())
}

/// The waves a push of the targets' generations takes, from what each change costs in its plan
/// (`plans`, one per target, made from what its machine has: drift pays its costs too); `cat`
/// is the catalogue, or why there is none (a module gone: a generation does not need it, then
/// every node is sent at once); and whether they could be planned. A node no wave took (it
/// changes nothing) is sent too, in a last wave of its own: it is held at its generation after.
pub fn waves(
    inv: &Inventory,
    cat: Result<&Catalogue, &(dyn std::error::Error + 'static)>,
    targets: &[Target],
    plans: &[Plan],
    options: &Options,
) -> (Vec<Wave>, Option<String>) {
    let costs = || -> Result<Vec<(Node, NodeCost)>, DeployError> {
        let mut out = Vec::new();
        for (t, p) in targets.iter().zip(plans) {
            let confirmed = inv.confirmed(&t.node.name)?;
            let cost = node_cost(inv, p, &t.kept.declaration, confirmed.as_ref())?;
            out.push((t.node.clone(), cost));
        }
        Ok(out)
    };
    let planned = cat.map_err(|e| e.to_string()).and_then(|cat| {
        costs()
            .and_then(|costs| super::cost::waves(inv, cat, costs, options))
            .map_err(|e| e.to_string())
    });
    let (mut waves, why) = match planned {
        Ok(w) => (w, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let missing: Vec<String> = targets
        .iter()
        .map(|t| t.node.name.clone())
        .filter(|n| !waves.iter().any(|w| w.nodes.contains(n)))
        .collect();
    if !missing.is_empty() {
        waves.push(Wave {
            number: waves.len() + 1,
            canary: false,
            nodes: missing,
        });
    }
    (waves, why)
}

fn composed(declaration: crate::wire::Declaration) -> Composed {
    Composed {
        declaration,
        held: Vec::new(),
        kept: Vec::new(),
        withdrawn: Vec::new(),
        confirmed: None,
        // a generation sent back was not composed: its cost and order are read afresh
        resolved: None,
    }
}

/// Sends every target its generation in `waves`; after a wave in which a node failed no
/// further wave starts. The push lock is the caller's to hold.
pub fn rollback(
    inv: &mut Inventory,
    targets: &[Target],
    waves: &[Wave],
    options: &PushOptions,
    watch: &dyn Watch,
) -> Result<Rolled, Unsent> {
    let unsent = |error: DeployError| Unsent {
        error,
        given_back: Vec::new(),
    };
    let started = inv.now().map_err(|e| unsent(e.into()))?;
    let mut before = Vec::new();
    for t in targets {
        let held = inv.held_at(&t.node.name).map_err(|e| unsent(e.into()))?;
        before.push((t.node.name.clone(), held.map(|h| h.generation)));
        inv.hold_at(&t.node.name, t.kept.generation)
            .map_err(|e| unsent(e.into()))?;
    }
    let mut out = Rolled::default();
    let sent = send_waves(inv, targets, waves, options, watch, &started, &mut out);
    // a node not applied on, however the rollback ended, gets back the hold it had
    let mut given_back = Vec::new();
    for (node, was) in before {
        if out
            .summary
            .results
            .iter()
            .any(|r| r.node == node && applied(r))
        {
            continue;
        }
        let restored = match was {
            Some(generation) => inv.hold_at(&node, generation),
            None => inv.release(&node).map(|_| ()),
        };
        if let Err(e) = restored {
            out.summary.unrecorded.push((node.clone(), e));
        }
        given_back.push((node, was));
    }
    if let Err(error) = sent {
        return Err(Unsent { error, given_back });
    }
    out.given_back = given_back;
    for r in &out.summary.results {
        if !applied(r) {
            continue;
        }
        let hold = inv.held_at(&r.node);
        match hold {
            Ok(Some(h)) => out.held.push(h),
            Ok(None) => {}
            Err(e) => out.summary.unrecorded.push((r.node.clone(), e)),
        }
    }
    Ok(out)
}

/// Each wave sent, or, once a node failed, held (rollout stopped) and said so.
fn send_waves(
    inv: &mut Inventory,
    targets: &[Target],
    waves: &[Wave],
    options: &PushOptions,
    watch: &dyn Watch,
    started: &str,
    out: &mut Rolled,
) -> Result<(), DeployError> {
    let of = waves.last().map_or(0, |w| w.number);
    for wave in waves {
        if out.stopped_by.is_some() {
            for node in &wave.nodes {
                watch.said(Said::Stopped { node });
                out.summary.stopped.push((node.clone(), wave.number));
            }
            continue;
        }
        if waves.len() > 1 {
            let parallel = options.push.parallel;
            watch.said(Said::WaveStarts { wave, of, parallel });
        }
        let members: Vec<&Target> = targets
            .iter()
            .filter(|t| wave.nodes.contains(&t.node.name))
            .collect();
        let generations: BTreeMap<String, u64> = members
            .iter()
            .map(|t| (t.node.name.clone(), t.kept.generation))
            .collect();
        let sends = members
            .iter()
            .map(|t| (t.node.clone(), composed(t.kept.declaration.clone())))
            .collect();
        let before = out.summary.results.len();
        push_wave(
            inv,
            options,
            watch,
            started,
            sends,
            Some(&generations),
            &mut out.summary,
        )?;
        if let Some(r) = out.summary.results[before..]
            .iter()
            .find(|r| r.result.as_ref().map_or(true, crate::push::Answer::failed))
        {
            out.stopped_by = Some(format!("{} failed in wave {}", r.node, wave.number));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Target, waves};
    use crate::catalogue::Catalogue;
    use crate::deploy::{MaxUnavailable, Options};
    use crate::inventory::{Inventory, Kept, Node};
    use crate::plan::{Plan, UnitChange};
    use crate::wire::Cost;

    fn plan(node: &str, restarts: bool) -> Plan {
        let units = restarts.then(|| UnitChange {
            unit: "www-main.service".into(),
            action: Cost::Restart,
            because: vec!["www:process:www-main.service".into()],
            stops: false,
            verb: "restart",
        });
        Plan {
            node: node.into(),
            first_send: false,
            running: false,
            unconfirmed: false,
            rekeyed: false,
            new_machine: false,
            pending_confirmation: None,
            held: vec![],
            facts_moved: vec![],
            changes: vec![],
            units: units.into_iter().collect(),
            needs_confirmation: vec![],
        }
    }

    #[test]
    fn a_rollbacks_waves_are_made_from_the_plans_it_is_given_drift_included() {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("i.db")).unwrap();
        let mut targets = Vec::new();
        for (i, name) in ["n1", "n2"].iter().enumerate() {
            let node = Node::new(name, &format!("192.0.2.{}", i + 1));
            inv.add_node(&node).unwrap();
            inv.assign(name, "web", "www").unwrap();
            let declaration = serde_json::from_value(serde_json::json!({
                "version": 1, "node": name, "resources": [{"id": "www:process:www-main.service",
                "instance": "www", "module": "web@1", "kind": "directory", "path": "/x",
                "owner": "root", "group": "root", "mode": 493}]
            }))
            .unwrap();
            let kept = Kept {
                node: name.to_string(),
                generation: 1,
                push: 1,
                inventory: "a".into(),
                pushed_at: 1,
                declaration,
            };
            targets.push(Target { node, kept });
        }
        let cat = Catalogue::load(&[]).unwrap();
        let options = Options {
            max_unavailable: Some(MaxUnavailable::Count(1)),
            ..Options::default()
        };
        // the machines' plans restart web on both (drift the confirmed state does not show):
        // one at a time
        let restart = [plan("n1", true), plan("n2", true)];
        let (w, why) = waves(&inv, Ok(&cat), &targets, &restart, &options);
        assert_eq!(why, None);
        let nodes: Vec<Vec<String>> = w.into_iter().map(|w| w.nodes).collect();
        assert_eq!(nodes, [vec!["n1".to_string()], vec!["n2".to_string()]]);
        // plans that restart nothing go at once
        let (w, _) = waves(
            &inv,
            Ok(&cat),
            &targets,
            &[plan("n1", false), plan("n2", false)],
            &options,
        );
        assert_eq!(w.len(), 1, "{w:?}");
    }
}
