//! `mesh push`: the nodes in waves, providers before their consumers (parallel within a wave);
//! every node recorded as it happens, held ones included.

use std::collections::BTreeMap;

use anyhow::Result;
use clap::Args;

use super::push::{
    Connect, Selection, compose_all, compose_fleet, fan_out, job, options, refused, selected,
    unchanged,
};
use super::{Context, exit, print_json, render};
use crate::inventory::{Inventory, InventoryError, Node, PushRecord};
use crate::plan;
use crate::push::{self, Job};
use crate::resolve::provisions::Withdrawn;
use crate::resolve::{self, Composed, Held};
use crate::wire::{Declaration, Mode};

#[derive(Args, Debug)]
pub(crate) struct PushArgs {
    #[command(flatten)]
    select: Selection,
    /// Only the selected nodes whose declaration differs from what their helper confirmed, or
    /// whose last push failed or was interrupted (with --all: every such node).
    #[arg(long)]
    behind: bool,
    /// Send a push that moves this instance's container data (a mount's directory on the machine
    /// changes); without it such a node is held. Repeatable.
    #[arg(long = "move", value_name = "INSTANCE")]
    moves: Vec<String>,
    /// Seconds a change that can cut you off (sshd, network, firewall) waits to be confirmed
    /// over a new connection before the machine reverts it by itself (at most an hour: a
    /// machine that cut you off stays cut off until then).
    #[arg(long, default_value_t = crate::wire::CONFIRM_WITHIN, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    confirm_timeout: u64,
    /// Replace whatever generation the machines are at, even one another inventory pushed since
    /// this one last saw them (without it such a node is refused as stale).
    #[arg(long)]
    overwrite: bool,
    #[command(flatten)]
    connect: Connect,
}

/// What every wave of one push came to.
#[derive(Default)]
struct Outcome {
    results: Vec<push::NodeResult>,
    /// Nodes held because a running container's data would move.
    held: Vec<(String, Vec<plan::Move>)>,
    /// Assignments held back (provider gone or not ready), by node.
    kept: Vec<(String, Held)>,
    unrecorded: Vec<(String, InventoryError)>,
}

pub(crate) fn push(a: PushArgs, ctx: &Context) -> Result<u8> {
    let mut inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    let nodes = selected(&inv, &a.select, "push")?;
    inv.lock_pushes()?;
    // every node's problems are said at once, before anything is sent: a node that cannot be
    // composed fails alone and is sent nothing (what its assignments made stays), and the
    // others go ahead; only when none can is the push refused
    let (_, refusals) = compose_fleet(&inv, &cat, nodes.clone())?;
    let started = inv.now()?;
    let mut out = Outcome::default();
    for (node, problems) in &refusals {
        fail_alone(
            &mut inv,
            ctx,
            &started,
            refused(node.clone(), problems),
            &mut out,
        )?;
    }
    let nodes: Vec<Node> = nodes
        .into_iter()
        .filter(|n| !refusals.iter().any(|(r, _)| *r == n.name))
        .collect();
    let waves = resolve::order::waves(&inv, &cat, nodes)?;
    for (w, wave) in waves.into_iter().enumerate() {
        // composed again: what the wave before confirmed may have ended a consumer's wait, and
        // what then takes part may be refused; machines were changed already, so such a node
        // fails alone
        let mut composed = if w == 0 {
            compose_all(&inv, &cat, wave)?
        } else {
            compose_wave(&mut inv, ctx, &started, &cat, wave, &mut out)?
        };
        if a.behind {
            composed = behind(&inv, composed)?;
        }
        push_wave(&mut inv, &a, ctx, &started, composed, &mut out)?;
    }
    if a.behind && out.results.is_empty() && out.held.is_empty() && out.kept.is_empty() {
        if ctx.json {
            print_json(&render::results_json(&[], Mode::Apply))?;
        } else if !ctx.quiet {
            out!("every node has confirmed what it would be sent; nothing to push");
        }
        return Ok(exit::OK);
    }
    let Outcome {
        results,
        held,
        kept,
        mut unrecorded,
    } = out;
    if ctx.json {
        let mut all = render::results_json(&results, Mode::Apply);
        if let Some(list) = all.as_array_mut() {
            for (node, moves) in &held {
                list.push(
                    serde_json::json!({"node": node, "outcome": "held", "moves": moves,
                    "reason": render::held_reason(moves)}),
                );
            }
            for (node, h) in &kept {
                list.push(serde_json::json!({"node": node, "outcome": "held", "assignment": h}));
            }
        }
        print_json(&all)?;
    } else if !ctx.quiet {
        out_raw!("{}", render::summary(&results, Mode::Apply));
    }
    if !unrecorded.is_empty() {
        unrecorded.sort_by_key(|(node, _)| results.iter().position(|r| r.node == *node));
        err_raw!("{}", unrecorded_message(&inv, &unrecorded));
        return Ok(exit::SOME_FAILED);
    }
    let failed = results
        .iter()
        .any(|r| r.result.as_ref().map_or(true, push::Answer::failed));
    Ok(if failed {
        exit::SOME_FAILED
    } else if !held.is_empty() || !kept.is_empty() {
        exit::SOME_HELD
    } else {
        exit::OK
    })
}

/// A later wave's nodes composed one by one: a node refused now fails alone, recorded and shown,
/// since the waves before it have changed machines already.
fn compose_wave(
    inv: &mut Inventory,
    ctx: &Context,
    started: &str,
    cat: &crate::catalogue::Catalogue,
    wave: Vec<Node>,
    out: &mut Outcome,
) -> Result<Vec<(Node, Composed)>> {
    let mut composed = Vec::new();
    for node in wave {
        match resolve::compose(inv, cat, &node) {
            Ok(c) => composed.push((node, c)),
            Err(resolve::ResolveError::Unresolved { node, problems }) => {
                let failure = push::PushError::Refused {
                    node: node.clone(),
                    problems: problems.join("; "),
                };
                let result = push::NodeResult {
                    node,
                    result: Err(failure),
                };
                fail_alone(inv, ctx, started, result, out)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(composed)
}

/// A node refused before anything was sent to it: recorded as failed and shown; the others go on.
fn fail_alone(
    inv: &mut Inventory,
    ctx: &Context,
    started: &str,
    result: push::NodeResult,
    out: &mut Outcome,
) -> Result<()> {
    let reason = result.result.as_ref().err().map(ToString::to_string);
    inv.record_push(&PushRecord {
        node: result.node.clone(),
        started_at: started.to_string(),
        digest: String::new(),
        outcome: "failed".into(),
        reason,
        report: None,
    })?;
    if !ctx.json {
        out_raw!("{}", render::node(&result, Mode::Apply, None));
    }
    out.results.push(result);
    Ok(())
}

/// Only the nodes whose declaration differs from what their helper confirmed, whose last push
/// failed, or that hold an assignment back.
fn behind(inv: &Inventory, composed: Vec<(Node, Composed)>) -> Result<Vec<(Node, Composed)>> {
    let mut out = Vec::new();
    for (node, c) in composed {
        let confirmed = inv.confirmed(&node.name)?;
        let failed = inv
            .last_outcome(&node.name)?
            .is_some_and(|o| o != "applied");
        if failed
            || confirmed.is_none()
            || inv.rekeyed(&node)?
            || !c.held.is_empty()
            || !plan::plan(&c.declaration, confirmed.as_ref(), None).is_empty()
        {
            out.push((node, c));
        }
    }
    Ok(out)
}

/// Pushes one wave's nodes in parallel, recording each.
fn push_wave(
    inv: &mut Inventory,
    a: &PushArgs,
    ctx: &Context,
    started: &str,
    composed: Vec<(Node, Composed)>,
    out: &mut Outcome,
) -> Result<()> {
    // A node whose push would move a running container's data is held, unless told --move.
    let mut held: Vec<(String, Vec<plan::Move>)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut withdrawn: BTreeMap<String, Vec<Withdrawn>> = BTreeMap::new();
    for (node, c) in composed {
        for h in &c.held {
            if !ctx.json {
                out!("{}", crate::plan::visible(&h.line(&node.name)));
            }
            out.kept.push((node.name.clone(), h.clone()));
        }
        let declaration = c.declaration;
        withdrawn.insert(node.name.clone(), c.withdrawn);
        let confirmed = inv.confirmed(&node.name)?;
        let unacknowledged: Vec<plan::Move> = plan::moves(&declaration, confirmed.as_ref())
            .into_iter()
            .filter(|m| !a.moves.contains(&m.instance))
            .collect();
        if unacknowledged.is_empty() {
            let mut job = job(inv, node, declaration)?;
            if a.overwrite && !ctx.json {
                out!("{}", push::overwrite(&mut job.declaration));
            } else if a.overwrite {
                push::overwrite(&mut job.declaration);
            }
            // a removal that can cut the operator off waits as long as a change does
            if job.declaration.resources.iter().any(|r| r.confirm)
                || !job.declaration.confirm_removals.is_empty()
            {
                job.declaration.confirm_within = Some(a.confirm_timeout.max(1));
            }
            jobs.push(job);
        } else {
            held.push((node.name, unacknowledged));
        }
    }
    for (node, moves) in &held {
        inv.record_push(&PushRecord {
            node: node.clone(),
            started_at: started.to_string(),
            digest: String::new(),
            outcome: "held".into(),
            reason: Some(render::held_reason(moves)),
            report: None,
        })?;
        if !ctx.json {
            out!(
                "{node}: HELD: {}",
                crate::plan::visible(&render::held_reason(moves))
            );
        }
    }
    out.held.extend(held);
    // every node is in flight before anything is sent: a push cut short is never forgotten
    let digests: Vec<String> = jobs
        .iter()
        .map(|j| resolve::declaration_digest(&j.declaration))
        .collect();
    let ids = inv.begin_pushes(
        started,
        &jobs
            .iter()
            .zip(&digests)
            .map(|(j, d)| (j.node.name.as_str(), d.as_str()))
            .collect::<Vec<_>>(),
    )?;
    let flights: BTreeMap<String, (i64, String, Declaration)> = jobs
        .iter()
        .zip(ids)
        .zip(digests)
        .map(|((j, id), digest)| (j.node.name.clone(), (id, digest, j.declaration.clone())))
        .collect();
    let unrecorded = &mut out.unrecorded;
    let heard = note_confirming(inv.path().to_path_buf());
    let results = fan_out(jobs, &options(&a.connect, Mode::Apply), ctx, heard, |r| {
        if let Some((id, digest, sent)) = flights.get(&r.node) {
            let (record, answered) = match &r.result {
                // reverted on the machine: what it has is what it had, the inventory keeps
                // what it confirmed before, and the plan shows the change still pending
                Ok(answer) if answer.reverted() => (
                    PushRecord {
                        outcome: "reverted".into(),
                        reason: answer.confirmation.as_ref().map(push::Confirmation::said),
                        ..PushRecord::answered(&r.node, started, digest, &answer.report)
                    },
                    None,
                ),
                Ok(answer) => (
                    PushRecord::answered(&r.node, started, digest, &answer.report),
                    Some(sent),
                ),
                Err(e) => (
                    PushRecord {
                        node: r.node.clone(),
                        started_at: started.to_string(),
                        digest: digest.clone(),
                        outcome: "failed".into(),
                        reason: Some(e.to_string()),
                        report: None,
                    },
                    None,
                ),
            };
            let applied = answered.is_some() && record.outcome == "applied";
            let unknown = r.result.as_ref().ok().filter(|a| a.unknown());
            let finished = match (unknown.and_then(|a| a.confirmation.as_ref()), &r.result) {
                // whether the change stayed is not known: the push stays unconfirmed, and the
                // next push or check asks the machine
                (Some(c), _) => inv.leave_in_flight(*id, &c.said()),
                // an earlier change is pending on the machine: so is this node, until it says
                (_, Err(push::PushError::Awaiting { id: change, .. })) => {
                    inv.note_pending(&r.node, change)
                }
                _ => inv.finish_push(*id, &record, answered),
            };
            let forgotten = finished.and_then(|()| {
                // the machine has taken these consumers' provisions away: their secrets go too
                let gone = withdrawn.get(&r.node).filter(|_| applied);
                gone.into_iter()
                    .flatten()
                    .try_for_each(|w| w.forget(inv, &r.node))
            });
            if let Err(e) = forgotten {
                unrecorded.push((r.node.clone(), e));
            }
        }
        if ctx.json || (ctx.quiet && unchanged(r)) {
            String::new()
        } else {
            render::node(r, Mode::Apply, None)
        }
    })?;
    out.results.extend(results);
    Ok(())
}

/// Notes, in the inventory at `path` (on a connection of its own, the moment the helper says
/// so), each change left awaiting confirmation: an operator killed while it confirms leaves the
/// node pending confirmation, and `plan` says it.
fn note_confirming(path: std::path::PathBuf) -> impl Fn(&push::Event) + Send + Sync + 'static {
    move |event: &push::Event| {
        if let push::Event::Confirming(node, id) = event {
            let _ = Inventory::open(&path).and_then(|mut i| i.note_pending(node, id));
        }
    }
}

/// The machines went ahead but the inventory did not follow: what happened, and the way back.
fn unrecorded_message(inv: &Inventory, unrecorded: &[(String, InventoryError)]) -> String {
    let mut out = String::new();
    for (node, e) in unrecorded {
        out.push_str(&format!(
            "{node}: the push ran (its report is above) and the machine may have changed, but the \
             inventory {} could not record it: {e}\n",
            inv.path().display()
        ));
    }
    let nodes: Vec<&str> = unrecorded.iter().map(|(n, _)| n.as_str()).collect();
    out.push_str(&format!(
        "until it is recorded, `mesh plan` shows {} unconfirmed; once the inventory can be written \
         again, `mesh check {}` or the next `mesh push` asks the machines and records what they \
         have (nothing already done is done again)\n",
        nodes.join(", "),
        nodes.join(" ")
    ));
    out
}
