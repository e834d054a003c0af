//! `mesh plan`, and what `mesh check` and `mesh push` share with it.

use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;

use super::answers::RefusedNode;
use super::answers::fleet::{self, HeldNode, Listed};
use super::progress::Progress;
use super::{Context, exit, print_json, render};
use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, Node, Scope};
use crate::plan;
use crate::push::{self, Job};
use crate::resolve::{self, Composed, Problem, ResolveError};
use crate::wire::{Declaration, Mode};

/// Which nodes a command is about.
#[derive(Args, Debug, Default)]
pub(crate) struct Selection {
    /// The nodes: names, globs (`web*`, `node[12]`) or `@TAG`.
    #[arg(value_name = "SELECTOR")]
    nodes: Vec<String>,
    /// Every node in the inventory.
    #[arg(long, conflicts_with = "nodes")]
    all: bool,
    /// Leave out the nodes this selects (a name, glob or `@TAG`). Repeatable.
    #[arg(long, value_name = "SELECTOR")]
    exclude: Vec<String>,
}

impl Selection {
    /// Nothing selected: no node named, no `--all`.
    pub(crate) fn is_empty(&self) -> bool {
        self.nodes.is_empty() && !self.all
    }
}

#[derive(Args, Debug)]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    select: Selection,
    /// Show each changed file's content as a unified diff.
    #[arg(long)]
    diff: bool,
    #[command(flatten)]
    rollout: super::rollout::RolloutArgs,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct Connect {
    /// Nodes pushed at once.
    #[arg(long, default_value_t = 10)]
    parallel: usize,
    /// Seconds to connect, verify the host key and log in, per node.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    connect_timeout: u64,
    /// Seconds one node's whole run may take (connecting, uploading, applying); a node past it
    /// is reported FAILED (timeout) with the step it was in, and the others go on.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    timeout: u64,
}

pub(crate) fn selected(inv: &Inventory, select: &Selection, verb: &str) -> Result<Vec<Node>> {
    if select.all {
        return Ok(inv.select(Scope::All, &select.exclude)?);
    }
    if select.nodes.is_empty() {
        bail!("name the nodes to {verb} (names, globs or @TAG), or say --all for every node");
    }
    Ok(inv.select(Scope::Only(&select.nodes), &select.exclude)?)
}

/// Composes every node's declaration, or refuses with every node's problems at once. An
/// assignment held back (its provider gone or not ready) does not refuse its node: it keeps what
/// it has, and says so.
pub(crate) fn compose_all(
    inv: &Inventory,
    cat: &Catalogue,
    nodes: Vec<Node>,
) -> Result<Vec<(Node, Composed)>> {
    let (out, refused) = compose_fleet(inv, cat, nodes)?;
    if !refused.is_empty() {
        bail!(
            "refused, nothing was sent; every problem:\n{}",
            refused
                .into_iter()
                .map(|(node, problems)| ResolveError::Unresolved { node, problems }.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    Ok(out)
}

/// The selected nodes composed: their declarations, and the nodes that cannot be composed,
/// each with every problem of it.
pub(crate) type Composable = (Vec<(Node, Composed)>, Vec<(String, Vec<Problem>)>);

/// Composes every node's declaration; a node that cannot be composed (a module missing or
/// broken, a requirement unanswered) is refused alone, with every problem of it, and sent
/// nothing, so nothing its assignments made is undone. Only when every node is refused is the
/// whole command (see [`compose_each`]).
pub(crate) fn compose_fleet(
    inv: &Inventory,
    cat: &Catalogue,
    nodes: Vec<Node>,
) -> Result<Composable> {
    let mut out = Vec::new();
    let mut refused = Vec::new();
    compose_each(inv, cat, nodes, |node, c| {
        match c {
            // held for the whole fleet at once: what each node confirmed is not kept with it
            Ok(c) => out.push((
                node,
                Composed {
                    confirmed: None,
                    ..c
                },
            )),
            Err(problems) => refused.push((node.name, problems)),
        }
        Ok(())
    })?;
    Ok((out, refused))
}

/// A node refused before anything was sent to it, as a push's or check's result.
pub(crate) fn refused(node: String, problems: &[Problem]) -> push::NodeResult {
    crate::deploy::refused(node, problems)
}

/// Composes every node's declaration and hands each to `each` as it is made (or the node's
/// problems, all of them), so a fleet's declarations are never all held at once. What a node
/// needs allocated is allocated first (`resolve::allocation`): run it in `Inventory::batch` to
/// keep that, in `Inventory::trial` to only show it. When no node can be composed, the command
/// is refused with every node's problems at once after the last (what `each` made of them is
/// then not to be shown).
fn compose_each(
    inv: &Inventory,
    cat: &Catalogue,
    nodes: Vec<Node>,
    mut each: impl FnMut(Node, Result<Composed, Vec<Problem>>) -> Result<()>,
) -> Result<()> {
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    inv.open_ahead(&names);
    drop(names);
    let mut refusals = Vec::new();
    let mut composed = 0usize;
    for node in nodes {
        // the caller's transaction keeps what this allocates (push) or rolls it back (plan)
        match resolve::allocation::compose(inv, cat, &node) {
            Ok(c) => {
                composed += 1;
                each(node, Ok(c))?;
            }
            // the resolve layer's own message lists every problem of the node
            Err(ResolveError::Unresolved {
                node: name,
                problems,
            }) => {
                let e = ResolveError::Unresolved {
                    node: name,
                    problems: problems.clone(),
                };
                refusals.push(e.to_string());
                each(node, Err(problems))?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if composed == 0 && !refusals.is_empty() {
        bail!(
            "refused, nothing was sent; every problem:\n{}",
            refusals.join("\n")
        );
    }
    Ok(())
}

pub(crate) fn plan(a: PlanArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    let select = selected(&inv, &a.select, "plan")?;
    // in text, each node's plan is printed as it is made: no fleet's text is ever held
    let mut plans = Vec::new();
    let mut shown = Streamed::default();
    let mut any_held = false;
    let mut failed = Vec::new();
    let mut held_at = Vec::new();
    // one per node, kept to the end for the waves: its size said up front, so it never holds
    // twice the fleet while it grows
    let mut costs = Vec::with_capacity(select.len());
    // what a push would allocate is allocated to be shown, and rolled back: a plan writes nothing
    inv.trial(|inv| {
        compose_each(inv, &cat, select, |node, c| {
            let c = match c {
                Ok(c) => c,
                Err(problems) => {
                    if !ctx.json {
                        shown.refused(&render::refused(&node.name, &problems));
                    }
                    failed.push((node.name, problems));
                    return Ok(());
                }
            };
            shown.composed();
            // a node a rollback holds is planned no change: what differs is said instead
            if let Some(hold) = inv.held_at(&node.name)? {
                let differs = super::held_at::differs(inv, &hold, &c.declaration)?;
                if ctx.json {
                    held_at.push((hold, differs));
                } else {
                    out_raw!("{}", super::held_at::plan_text(&hold, differs.as_deref()));
                }
                any_held = true;
                return Ok(());
            }
            let (p, cost, providers) = node_plan(inv, &cat, &node, c)?;
            any_held |= !p.held.is_empty();
            costs.push((node, cost, providers));
            if ctx.json {
                plans.push(p);
            } else {
                print_plan(&p, a.diff, ctx);
            }
            Ok(())
        })
    })?;
    // the waves a push of the same nodes with the same options sends (the nodes refused are
    // sent nothing); nodes that cannot be ordered are said, and a push refuses them
    let options = a.rollout.options(crate::deploy::FailureBudget::None);
    // in one read transaction: each node's providers are a few queries, and outside one each
    // query takes and drops the file's lock (a tenth of the plan's CPU at 10,000 nodes)
    let waves = inv.trial(|inv| {
        Ok::<_, anyhow::Error>(crate::deploy::cost::waves_of(inv, &cat, costs, &options))
    })?;
    let unfinished = unfinished_rollout(&inv)?;
    let planned = Planned {
        plans,
        failed,
        held_at,
    };
    let unfinished = unfinished.as_ref().map(|(r, now)| (r, *now));
    say(&planned, &waves, unfinished, a.diff, ctx)?;
    Ok(if !planned.failed.is_empty() {
        exit::SOME_FAILED
    } else if any_held {
        exit::SOME_HELD
    } else {
        exit::OK
    })
}

/// One node's plan in text, as it is made; with `-q`, only a node a push would change or that
/// holds something back.
fn print_plan(p: &crate::plan::Plan, diff: bool, ctx: &Context) {
    if ctx.quiet
        && p.changes.is_empty()
        && !p.unconfirmed
        && !p.rekeyed
        && p.held.is_empty()
        && p.facts_moved.is_empty()
    {
        return;
    }
    let mut text = render::plan(p, diff, ctx.color());
    for h in &p.held {
        text.push_str(&crate::plan::visible(&h.line(&p.node)));
        text.push('\n');
    }
    out_raw!("{text}");
}

/// One node's plan, against what its machine last confirmed (and how sure that is), what a
/// push of it costs, and its assignments' providers (what ordering it needs; composing resolved
/// them).
fn node_plan(
    inv: &Inventory,
    cat: &Catalogue,
    node: &Node,
    c: Composed,
) -> Result<(
    plan::Plan,
    crate::deploy::NodeCost,
    Option<resolve::order::Providers>,
)> {
    let confirmed = c.confirmed;
    let report = inv.last_report(&node.name)?;
    let mut p = plan::plan(&c.declaration, confirmed.as_ref(), report.as_ref());
    p.unconfirmed = inv.in_flight(&node.name)?;
    in_flight_elsewhere(inv, &mut p)?;
    p.rekeyed = inv.rekeyed(node)?;
    p.new_machine = inv.found_new(&node.name)?;
    if p.unconfirmed {
        p.pending_confirmation = inv.pending_confirmation(&node.name)?;
    }
    p.held = c.held;
    p.facts_moved = resolve::facts::moved(inv, cat, &node.name)?;
    let cost = match &c.resolved {
        Some(r) => {
            crate::deploy::node_cost_of(&r.assignments, &p, &c.declaration, confirmed.as_ref())
        }
        None => crate::deploy::node_cost(inv, &p, &c.declaration, confirmed.as_ref())?,
    };
    Ok((p, cost, c.resolved.map(|r| r.providers)))
}

/// What `plan` made of the selected nodes and has still to say: under `--json` the plans (in
/// text each was printed as it was made); the nodes refused, with their problems; the nodes a
/// rollback holds, with how they differ.
struct Planned {
    plans: Vec<plan::Plan>,
    failed: Vec<(String, Vec<Problem>)>,
    held_at: Vec<(crate::inventory::Hold, Option<Vec<super::held_at::Differs>>)>,
}

/// The last rollout where it did not finish, and whether another command is running it now
/// (it holds the push lock).
fn unfinished_rollout(
    inv: &Inventory,
) -> Result<Option<(crate::deploy::RolloutRow, bool)>, crate::inventory::InventoryError> {
    let Some(r) = inv
        .last_rollout()?
        .filter(|r| r.state != crate::deploy::RolloutState::Done)
    else {
        return Ok(None);
    };
    Ok(Some((r, inv.pushing_elsewhere()?)))
}

/// Says the plans, with the waves a push would send them in and what an unfinished rollout
/// left (with whether another command is running it now).
fn say(
    p: &Planned,
    waves: &Result<Vec<crate::deploy::Wave>, crate::deploy::DeployError>,
    unfinished: Option<(&crate::deploy::RolloutRow, bool)>,
    diff: bool,
    ctx: &Context,
) -> Result<()> {
    if ctx.json {
        let mut all = fleet::planned(&p.plans, diff);
        let refused = p.failed.iter().map(|(node, p)| RefusedNode::new(node, p));
        all.extend(refused.map(Listed::of));
        let held = p
            .held_at
            .iter()
            .map(|(h, d)| HeldNode::rollback(h, d.as_deref()));
        all.extend(held.map(Listed::of));
        if let Ok(w) = waves {
            fleet::with_waves(&mut all, &super::rollout::wave_map(w));
        }
        if let Some((r, _)) = unfinished {
            fleet::with_left(&mut all, r);
        }
        return print_json(&all);
    }
    if !ctx.quiet {
        match waves {
            // one wave is every node at once, as a push has always gone: nothing to say
            Ok(w) if w.len() > 1 => out_raw!("{}", super::rollout::waves_text(w)),
            Ok(_) => {}
            Err(e) => out!("waves: {e}"),
        }
    }
    if let Some((r, running_now)) = unfinished {
        out_raw!("{}", super::rollout::unfinished_text(r, running_now));
    }
    Ok(())
}

/// The text of the nodes planned, printed as each is made. The refusals before the first node
/// composed are held: when no node can be composed the command is refused instead, and they are
/// not to be shown (see [`compose_each`]).
#[derive(Default)]
struct Streamed {
    composed: bool,
    held: String,
}

impl Streamed {
    fn refused(&mut self, text: &str) {
        if self.composed {
            out_raw!("{text}");
        } else {
            self.held.push_str(text);
        }
    }

    fn composed(&mut self) {
        if !self.composed {
            self.composed = true;
            if !self.held.is_empty() {
                out_raw!("{}", std::mem::take(&mut self.held));
            }
        }
    }
}

/// A plan whose node is in flight while another command holds the push lock: that push is
/// running, not interrupted, and the plan says so.
pub(crate) fn in_flight_elsewhere(
    inv: &Inventory,
    p: &mut plan::Plan,
) -> Result<(), crate::inventory::InventoryError> {
    if p.unconfirmed && inv.pushing_elsewhere()? {
        p.unconfirmed = false;
        p.running = true;
    }
    Ok(())
}

pub(crate) fn options(c: &Connect, mode: Mode, ctx: &Context) -> push::Options {
    push::Options {
        transport: ctx.transport.clone(),
        parallel: c.parallel,
        connect_timeout: Duration::from_secs(c.connect_timeout.max(1)),
        timeout: Duration::from_secs(c.timeout.max(1)),
        mode,
    }
}

/// Pushes (or checks) every job, drawn on the terminal (see [`crate::deploy::fan_out`]).
pub(crate) fn fan_out(
    jobs: Vec<Job>,
    options: &push::Options,
    ctx: &Context,
    heard: impl Fn(&push::Event) + Send + Sync + 'static,
    finished: impl FnMut(&push::NodeResult) -> String,
) -> Result<Vec<push::NodeResult>> {
    let all = ctx.inventory()?.nodes()?;
    let verbose = ctx.verbose;
    let progress = |nodes: &[String]| -> Box<dyn crate::deploy::Progress> {
        Box::new(Progress::new(nodes, verbose))
    };
    Ok(crate::deploy::fan_out(
        &all, jobs, options, progress, heard, finished,
    )?)
}

/// A node that answered and changed nothing: `-q` does not show it.
pub(crate) fn unchanged(r: &push::NodeResult) -> bool {
    r.result
        .as_ref()
        .is_ok_and(|a| !a.failed() && !a.report.changed() && a.report.pending.is_none())
}

/// A node's declaration as it is sent (see [`crate::deploy::job`]).
pub(crate) fn job(inv: &Inventory, node: Node, declaration: Declaration) -> Result<Job> {
    Ok(crate::deploy::job(inv, node, declaration)?)
}
