//! `mesh check`: what a push would change on the machines now, from each helper's dry run (so
//! drift shows), and what that dry run tells the inventory.

use std::collections::BTreeMap;

use anyhow::Result;
use clap::Args;

use super::answers::fleet;
use super::push::{
    Connect, Selection, compose_fleet, fan_out, job, options, refused, selected, unchanged,
};
use super::{Context, exit, print_json, render};
use crate::inventory::{Inventory, InventoryError, Node};
use crate::push::{Job, NodeResult};
use crate::resolve::{self, Composed};
use crate::wire::{Declaration, Mode};

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    select: Selection,
    /// Show each file that differs on the machine as a unified diff from what it has to what a
    /// push would write (a secret file or an environment file is never shown).
    #[arg(long)]
    diff: bool,
    #[command(flatten)]
    connect: Connect,
}

pub(crate) fn check(a: CheckArgs, ctx: &Context) -> Result<u8> {
    let mut inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    let nodes = selected(&inv, &a.select, "check")?;
    // checked against what a push would send, allocated for it and rolled back
    let (composed, refusals) = inv.trial(|inv| compose_fleet(inv, &cat, nodes))?;
    let flight = in_flight(&inv, &composed)?;
    let jobs = jobs(&inv, composed, &flight, ctx)?;
    let refusals: Vec<NodeResult> = refusals
        .into_iter()
        .map(|(node, problems)| refused(node, &problems))
        .collect();
    let (mut results, unrecorded) = dry_run(&mut inv, jobs, &flight, &refusals, &a, ctx)?;
    results.sort_by(|a, b| a.node.cmp(&b.node));
    if !ctx.json {
        // what check shows is what the inventory's declaration would change; a push sends it
        // only once the node is released
        for r in &results {
            if let Some(hold) = inv.held_at(&r.node)? {
                out!("{}", super::held_at::line(&hold));
            }
        }
    }
    results.extend(refusals);
    results.sort_by(|a, b| a.node.cmp(&b.node));
    report(&inv, &results, &unrecorded, ctx)
}

/// The nodes whose last push was interrupted, with what that push sent; and of them, those whose
/// push was a rollback, with its generation.
struct InFlight {
    sent: BTreeMap<String, Declaration>,
    rolling: BTreeMap<String, u64>,
}

/// A node whose last push was interrupted is reconciled from this dry run, unless a push is
/// running now (then its own result will say); one a rollback's was is measured against the
/// generation that push sent, not the inventory's declaration.
fn in_flight(inv: &Inventory, composed: &[(Node, Composed)]) -> Result<InFlight> {
    let mut sent = BTreeMap::new();
    let mut rolling = BTreeMap::new();
    for (node, c) in composed {
        if !inv.in_flight(&node.name)? {
            continue;
        }
        let was = match inv.in_flight_rollback(&node.name)? {
            Some(g) => {
                rolling.insert(node.name.clone(), g);
                inv.rollback_target(&node.name, g)?.declaration
            }
            None => c.declaration.clone(),
        };
        sent.insert(node.name.clone(), was);
    }
    // the lock, once taken, is held until the inventory is dropped at the end
    if sent.is_empty() || inv.lock_pushes().is_err() {
        sent.clear();
        rolling.clear();
    }
    Ok(InFlight { sent, rolling })
}

/// Each node's dry run: of the declaration composed, or of the generation its cut-short
/// rollback sent.
fn jobs(
    inv: &Inventory,
    mut composed: Vec<(Node, Composed)>,
    flight: &InFlight,
    ctx: &Context,
) -> Result<Vec<Job>> {
    for (node, c) in &mut composed {
        let rolling = flight.rolling.get(&node.name);
        if let (Some(g), Some(sent)) = (rolling, flight.sent.get(&node.name)) {
            c.declaration = sent.clone();
            if !ctx.json {
                out!(
                    "{}: its last push, a rollback to generation {g}, was cut short: checked \
                     against generation {g}, what it sent, and recorded so",
                    node.name
                );
            }
        }
    }
    composed
        .into_iter()
        .map(|(node, c)| job(inv, node, c.declaration))
        .collect()
}

/// A node whose finding could not be recorded, and why.
type Unrecorded = (String, InventoryError);

/// Runs every job as a dry run, recording what each machine was found to have as it answers;
/// each node (a refused one too) is said in the order of its name once all have answered, not
/// as they answer. The results, and the nodes whose finding could not be recorded.
fn dry_run(
    inv: &mut Inventory,
    jobs: Vec<Job>,
    flight: &InFlight,
    refusals: &[NodeResult],
    a: &CheckArgs,
    ctx: &Context,
) -> Result<(Vec<NodeResult>, Vec<Unrecorded>)> {
    let digests: BTreeMap<String, String> = jobs
        .iter()
        .map(|j| {
            let digest = resolve::declaration_digest(&j.declaration);
            (j.node.name.clone(), digest)
        })
        .collect();
    // what each machine was checked against: where its generation moved, what it was found
    // to have of it is the next plan's base
    let checked: BTreeMap<String, Declaration> = jobs
        .iter()
        .map(|j| (j.node.name.clone(), j.declaration.clone()))
        .collect();
    let started = inv.now()?;
    let mut unrecorded = Vec::new();
    let mut said = BTreeMap::new();
    let diff = a.diff.then(|| ctx.color());
    if !ctx.json {
        for r in refusals {
            said.insert(r.node.clone(), render::node(r, Mode::DryRun, None));
        }
    }
    let results = fan_out(
        jobs,
        &options(&a.connect, Mode::DryRun, ctx),
        ctx,
        |_| {},
        |r| {
            let digest = digests.get(&r.node).map_or("", String::as_str);
            let sent = flight.sent.get(&r.node);
            let recorded = record_check(inv, r, sent, checked.get(&r.node), &started, digest);
            if let Err(e) = recorded {
                unrecorded.push((r.node.clone(), e));
            }
            if !(ctx.json || (ctx.quiet && unchanged(r))) {
                let text = render::node(r, Mode::DryRun, diff) + &rolled_back(r);
                said.insert(r.node.clone(), text);
            }
            String::new()
        },
    )?;
    for text in said.values() {
        out_raw!("{text}");
    }
    Ok((results, unrecorded))
}

/// Every node's result as JSON or its summary line, what could not be recorded, and the exit
/// status: a change awaiting confirmation may yet be put back, so the machine is not as
/// checked.
fn report(
    inv: &Inventory,
    results: &[NodeResult],
    unrecorded: &[Unrecorded],
    ctx: &Context,
) -> Result<u8> {
    let failed = results
        .iter()
        .any(|r| r.result.as_ref().map_or(true, |a| a.report.failed()));
    let changes = results.iter().any(|r| {
        r.result
            .as_ref()
            .is_ok_and(|a| a.report.changed() || a.report.pending.is_some())
    });
    if ctx.json {
        print_json(&fleet::results(results, Mode::DryRun))?;
    } else if !ctx.quiet {
        out_raw!("{}", render::summary(results, Mode::DryRun));
    }
    for (node, e) in unrecorded {
        err!(
            "{node}: what the machine was found to have (its last push interrupted, or the \
             machine new) could not be recorded in the inventory {}: {e}; `mesh plan` still \
             shows what it recorded before",
            inv.path().display()
        );
    }
    Ok(if failed || !unrecorded.is_empty() {
        exit::SOME_FAILED
    } else if changes {
        exit::CHANGES
    } else {
        exit::OK
    })
}

/// What a dry run tells the inventory: a node whose last push was interrupted is reconciled
/// with what its machine was found to have (`sent`: what that push sent); a machine found new
/// has nothing the inventory confirmed of it, and the plan then says so.
fn record_check(
    inv: &mut Inventory,
    r: &NodeResult,
    sent: Option<&Declaration>,
    checked: Option<&Declaration>,
    started: &str,
    digest: &str,
) -> Result<(), InventoryError> {
    let Ok(answer) = &r.result else {
        return Ok(());
    };
    if let Some(sent) = sent {
        // a change awaiting confirmation is not settled: what the machine has now may be put
        // back at its deadline, so the push stays unconfirmed until the machine says
        match &answer.report.pending {
            Some(id) => inv.note_pending(&r.node, id)?,
            None => inv.reconcile(&r.node, sent, &answer.report)?,
        }
    }
    inv.note_checked(&r.node, checked, &answer.report)?;
    inv.record_found_new(&r.node, started, digest, &answer.report)
}

/// What a check says of a machine rolled back on itself (`mesh-host rollback GEN`): its new
/// generation, and that the next plan is made against it.
fn rolled_back(r: &NodeResult) -> String {
    let Some(g) = r
        .result
        .as_ref()
        .ok()
        .and_then(|a| a.report.generation.as_ref())
    else {
        return String::new();
    };
    let Some(to) = g.rolled_back_to else {
        return String::new();
    };
    format!(
        "  {}: at generation {}, rolled back to {to} on the machine (`mesh-host rollback`) at {} \
         UTC; plans are made against it from now on\n",
        r.node,
        g.number,
        crate::wire::utc(g.pushed_at)
    )
}
