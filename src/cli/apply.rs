//! `mesh push`: the nodes in the waves the deploy layer plans from what each change costs
//! (providers before their consumers, parallel within a wave), its failure budget kept after
//! every wave; every node recorded as it happens, held ones included.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use clap::Args;

use super::push::{
    Connect, Selection, compose_fleet, fan_out, job, options, refused, selected, unchanged,
};
use super::pushed::Outcome;
use super::rollout::{self, RolloutArgs, wave_map};
use super::{Context, render};
use crate::deploy::{self, FailureBudget, NodeOutcome, Rollout, Wave};
use crate::inventory::{Inventory, Node, PushRecord};
use crate::plan;
use crate::push::{self, Job};
use crate::resolve::provisions::Withdrawn;
use crate::resolve::{self, Composed};
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
    rollout: RolloutArgs,
    /// Nodes (N) or share of the rollout's nodes (P%) that may fail before no further wave
    /// starts; unreachable nodes are not counted.
    #[arg(long, default_value = "0", value_name = "N|P%", value_parser = FailureBudget::parse)]
    max_failed: FailureBudget,
    /// Continue the last rollout, stopped or cut short: its nodes not yet applied, in their
    /// waves (no selection: the rollout's own nodes).
    #[arg(long, conflicts_with_all = ["behind", "canary", "max_unavailable", "nodes", "all", "exclude"])]
    resume: bool,
    #[command(flatten)]
    connect: Connect,
}

pub(crate) fn push(a: PushArgs, ctx: &Context) -> Result<u8> {
    let mut inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    let (nodes, resumed) = nodes_of(&a, &mut inv)?;
    // every node's problems are said at once, before anything is sent: a node that cannot be
    // composed fails alone and is sent nothing (what its assignments made stays), and the
    // others go ahead; only when none can is the push refused
    let (mut composed, refusals) = compose_fleet(&inv, &cat, nodes.clone())?;
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
    let mut nodes: BTreeMap<String, Node> = nodes
        .into_iter()
        .filter(|n| !refusals.iter().any(|(r, _)| *r == n.name))
        .map(|n| (n.name.clone(), n))
        .collect();
    let mut rollout = match resumed {
        Some(mut r) => {
            for (node, _) in &refusals {
                r.note(&mut inv, node, NodeOutcome::Refused)?;
            }
            r
        }
        None => {
            if a.behind {
                composed = behind(&inv, composed)?;
            }
            let waves =
                deploy::plan_waves(&inv, &cat, &composed, &a.rollout.options(a.max_failed))?;
            Rollout::begin(&mut inv, &started, waves, a.max_failed)?
        }
    };
    drop(composed);
    let waves = rollout.waves.clone();
    let mut run = Run {
        inv: &mut inv,
        a: &a,
        ctx,
        cat: &cat,
        started: &started,
        out: &mut out,
    };
    for wave in &waves {
        let members: Vec<Node> = wave.nodes.iter().filter_map(|n| nodes.remove(n)).collect();
        match rollout.stopped.clone() {
            Some(by) => run.hold(&mut rollout, wave.number, members, &by)?,
            None => {
                if waves.len() > 1 && !ctx.json && !ctx.quiet {
                    let of = waves.last().map_or(0, |w| w.number);
                    let parallel = options(&a.connect, Mode::Apply).parallel;
                    out!("{}", rollout::wave_start(wave, of, parallel));
                }
                run.wave(&mut rollout, wave, members)?;
            }
        }
    }
    if let Err(e) = rollout.finish(&mut inv) {
        err!("the rollout's end could not be recorded in the inventory: {e}");
    }
    super::pushed::report(a.behind, ctx, &inv, &rollout, out)
}

/// The nodes to push: the selected ones, or with `--resume` the last rollout's nodes not yet
/// done (and that rollout). The push lock is taken before the rollout is read.
fn nodes_of(a: &PushArgs, inv: &mut Inventory) -> Result<(Vec<Node>, Option<Rollout>)> {
    if !a.resume {
        let nodes = selected(inv, &a.select, "push")?;
        inv.lock_pushes()?;
        return Ok((nodes, None));
    }
    inv.lock_pushes()?;
    let r = Rollout::resume(inv, a.max_failed)?;
    let left = wave_map(&r.waves);
    let nodes: Vec<Node> = inv
        .nodes()?
        .into_iter()
        .filter(|n| left.contains_key(&n.name))
        .collect();
    Ok((nodes, Some(r)))
}

/// One push as its waves go.
struct Run<'a> {
    inv: &'a mut Inventory,
    a: &'a PushArgs,
    ctx: &'a Context,
    cat: &'a crate::catalogue::Catalogue,
    started: &'a str,
    out: &'a mut Outcome,
}

impl Run<'_> {
    /// Pushes one wave, each node's outcome noted in the rollout, then keeps its budget.
    fn wave(&mut self, rollout: &mut Rollout, wave: &Wave, members: Vec<Node>) -> Result<()> {
        let before = (self.out.results.len(), self.out.held.len());
        // composed again: what the wave before confirmed may have ended a consumer's wait, and
        // what then takes part may be refused; machines were changed already, so such a node
        // fails alone
        let members = self.waiting(rollout, wave.number, members)?;
        let (inv, ctx) = (&mut *self.inv, self.ctx);
        let mut composed = compose_wave(inv, ctx, self.started, self.cat, members, self.out)?;
        if self.a.behind {
            let names: Vec<String> = composed.iter().map(|(n, _)| n.name.clone()).collect();
            composed = behind(inv, composed)?;
            for up_to_date in names
                .iter()
                .filter(|n| !composed.iter().any(|(c, _)| c.name == **n))
            {
                rollout.note(inv, up_to_date, NodeOutcome::Applied)?;
            }
        }
        push_wave(inv, self.a, ctx, self.started, composed, self.out)?;
        for r in &self.out.results[before.0..] {
            // a node the inventory could not record is said once, with the way back
            if let Err(e) = rollout.answered(inv, r)
                && !self.out.unrecorded.iter().any(|(n, _)| *n == r.node)
            {
                self.out.unrecorded.push((r.node.clone(), e));
            }
        }
        for (node, _) in &self.out.held[before.1..] {
            rollout.note(inv, node, NodeOutcome::Refused)?;
        }
        if let Err(e) = rollout.after_wave(inv, wave) {
            err!(
                "the rollout's progress could not be recorded in the inventory: {e}; `mesh push \
                 --resume` continues from what it last recorded"
            );
        }
        Ok(())
    }

    /// The members of wave `wave` whose provider did not answer ready earlier in this rollout
    /// are held (recorded, noted and shown), so a consumer never starts against a provider that
    /// is not ready; the others are returned.
    fn waiting(
        &mut self,
        rollout: &mut Rollout,
        wave: usize,
        members: Vec<Node>,
    ) -> Result<Vec<Node>> {
        let all: BTreeSet<String> = wave_map(&rollout.waves).into_keys().collect();
        let mut ready = Vec::new();
        for node in members {
            let providers = resolve::order::providers(self.inv, self.cat, &node, &all)?;
            let Some(why) = rollout.provider_not_ready(providers.keys()) else {
                ready.push(node);
                continue;
            };
            self.inv.record_push(&PushRecord {
                node: node.name.clone(),
                started_at: self.started.to_string(),
                digest: String::new(),
                outcome: "held".into(),
                reason: Some(why.clone()),
                report: None,
            })?;
            rollout.note(self.inv, &node.name, NodeOutcome::Held)?;
            if !self.ctx.json && !self.ctx.quiet {
                out!(
                    "{}: HELD (provider not ready), sent nothing: {why}",
                    node.name
                );
            }
            self.out.waiting.push((node.name, wave, why));
        }
        Ok(ready)
    }

    /// The nodes of a wave the rollout's stop keeps from being sent: recorded held, and shown.
    fn hold(
        &mut self,
        rollout: &mut Rollout,
        wave: usize,
        nodes: Vec<Node>,
        by: &str,
    ) -> Result<()> {
        for node in nodes {
            self.inv.record_push(&PushRecord {
                node: node.name.clone(),
                started_at: self.started.to_string(),
                digest: String::new(),
                outcome: "held".into(),
                reason: Some(rollout::held_reason(by)),
                report: None,
            })?;
            rollout.note(self.inv, &node.name, NodeOutcome::Held)?;
            if !self.ctx.json && !self.ctx.quiet {
                out!("{}: HELD (rollout stopped), sent nothing", node.name);
            }
            self.out.stopped.push((node.name, wave));
        }
        Ok(())
    }
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
