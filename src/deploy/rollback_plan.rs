//! What a rollback is to send, before anything is: which generation each node goes back to
//! (`--to GEN`, or the generation before a past push), what each machine has (asked as `mesh
//! check` asks, recording nothing), and each node's plan from that to its generation, drift
//! included ([`crate::plan::machine`]). Sending it is [`super::rollback`].

use std::collections::BTreeMap;

use crate::inventory::{Inventory, Kept, Node, Scope};
use crate::plan::{self, Plan};
use crate::push::{self, NodeResult};
use crate::wire::{Mode, Report};

use super::DeployError;
use super::run::Watch;

/// A node and the generation it goes back to.
pub struct Target {
    pub node: Node,
    pub kept: Kept,
}

/// A node of a past push that a rollback of it leaves alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftAlone {
    pub node: String,
    /// The node's row of that push.
    pub push: i64,
    pub reason: String,
}

/// The nodes `selectors` name, each with its kept generation `number`; a node that has none
/// refuses the whole rollback, naming the generations it has.
pub fn to(inv: &Inventory, selectors: &[String], number: u64) -> Result<Vec<Target>, DeployError> {
    let mut out = Vec::new();
    for node in inv.select(Scope::Only(selectors), &[])? {
        let kept = inv.rollback_target(&node.name, number)?;
        out.push(target(inv, node, kept)?);
    }
    Ok(out)
}

/// Every node of the past push `id` is one row of, each with the generation it had before that
/// push; a node it made no generation on, or its first, is left alone, with why.
pub fn of_push(inv: &Inventory, id: i64) -> Result<(Vec<Target>, Vec<LeftAlone>), DeployError> {
    let mut out = Vec::new();
    let mut left = Vec::new();
    for row in inv.push_generations(id)? {
        let reason = match (row.made, row.before) {
            (None, _) => format!(
                "{}: push #{} made no generation on it; left alone",
                row.node, row.push
            ),
            (Some(made), None) => format!(
                "{}: push #{} made generation {made}, the first this inventory keeps; nothing \
                 before it to go back to, left alone",
                row.node, row.push
            ),
            (Some(_), Some(before)) => {
                let node = inv.node(&row.node)?;
                let kept = inv.rollback_target(&row.node, before)?;
                out.push(target(inv, node, kept)?);
                continue;
            }
        };
        left.push(LeftAlone {
            node: row.node,
            push: row.push,
            reason,
        });
    }
    Ok((out, left))
}

/// `node` going back to `kept`, its secrets sealed again to the host key the node has now: the
/// machine may have been rebuilt since that generation was sent.
fn target(inv: &Inventory, node: Node, mut kept: Kept) -> Result<Target, DeployError> {
    crate::resolve::reseal(inv, &node, &mut kept.declaration)?;
    Ok(Target { node, kept })
}

/// What each target's machine has, asked before its rollback is planned.
pub struct Read {
    /// The nodes whose machine answered, each with its dry run of the generation it goes back to.
    pub answered: Vec<(Target, Report)>,
    /// The nodes whose machine did not (unreachable, busy, ...): named, and not rolled back.
    pub unanswered: Vec<NodeResult>,
}

/// Asks every target's machine what it has, as `mesh check` does (one connection per node, a
/// dry run, here of the generation the node goes back to), so its plan is made from what the
/// machine has: a change made there by hand is in it. Nothing is recorded: what the machine
/// said is for this plan only (a machine another inventory pushed since stays refused as
/// stale by the rollback's push, until `mesh check` or `--overwrite`).
pub fn read(
    inv: &Inventory,
    targets: Vec<Target>,
    options: &push::Options,
    watch: &dyn Watch,
) -> Result<Read, DeployError> {
    let jobs = targets
        .iter()
        .map(|t| super::job(inv, t.node.clone(), t.kept.declaration.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let options = push::Options {
        mode: Mode::DryRun,
        ..options.clone()
    };
    let all = inv.nodes()?;
    let results = super::fan_out(
        &all,
        jobs,
        &options,
        |nodes| watch.progress(nodes),
        |_| {},
        |_| String::new(),
    )?;
    let mut by_node: BTreeMap<String, NodeResult> =
        results.into_iter().map(|r| (r.node.clone(), r)).collect();
    let mut out = Read {
        answered: Vec::new(),
        unanswered: Vec::new(),
    };
    for t in targets {
        match by_node.remove(&t.node.name) {
            Some(NodeResult {
                result: Ok(answer), ..
            }) => out.answered.push((t, answer.report)),
            Some(failed) => out.unanswered.push(failed),
            None => {}
        }
    }
    Ok(out)
}

/// Each answered target's plan, from what its machine has (its dry run) to what its generation
/// had, as `mesh plan` makes one (costs, confirmations, what the inventory knows of it).
pub fn plans(inv: &Inventory, answered: &[(Target, Report)]) -> Result<Vec<Plan>, DeployError> {
    let mut out = Vec::new();
    for (t, checked) in answered {
        let name = &t.node.name;
        let next = &t.kept.declaration;
        let confirmed = inv.confirmed(name)?;
        let p = plan::plan(next, confirmed.as_ref(), Some(checked));
        let mut p = plan::machine::against_machine(p, next, confirmed.as_ref(), checked);
        p.unconfirmed = inv.in_flight(name)?;
        p.rekeyed = inv.rekeyed(&t.node)?;
        p.new_machine = inv.found_new(name)?;
        out.push(p);
    }
    Ok(out)
}
