//! `mesh plan`, `mesh check` and `mesh push`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;

use super::progress::Progress;
use super::{Context, exit, print_json, render};
use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, InventoryError, Node, PushRecord, Scope};
use crate::plan;
use crate::push::{self, Job};
use crate::resolve::{self, ResolveError};
use crate::ssh::{self, Credentials};
use crate::wire::{Declaration, Mode};

/// Which nodes a command is about.
#[derive(Args, Debug)]
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

#[derive(Args, Debug)]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    select: Selection,
    /// Show each changed file's content as a unified diff.
    #[arg(long)]
    diff: bool,
}

#[derive(Args, Debug)]
pub(crate) struct Connect {
    /// Nodes pushed at once.
    #[arg(long, default_value_t = 10)]
    parallel: usize,
    /// Seconds to connect, verify the host key and log in, per node.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    connect_timeout: u64,
}

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
    #[command(flatten)]
    connect: Connect,
}

fn selected(inv: &Inventory, select: &Selection, verb: &str) -> Result<Vec<Node>> {
    if select.all {
        return Ok(inv.select(Scope::All, &select.exclude)?);
    }
    if select.nodes.is_empty() {
        bail!("name the nodes to {verb} (names, globs or @TAG), or say --all for every node");
    }
    Ok(inv.select(Scope::Only(&select.nodes), &select.exclude)?)
}

/// Composes every node's declaration, or refuses with every node's problems at once.
pub(crate) fn compose_all(
    inv: &Inventory,
    cat: &Catalogue,
    nodes: Vec<Node>,
) -> Result<Vec<(Node, Declaration)>> {
    let mut out = Vec::new();
    compose_each(inv, cat, nodes, |node, d| {
        out.push((node, d));
        Ok(())
    })?;
    Ok(out)
}

/// Composes every node's declaration and hands each to `each` as it is made, so a fleet's
/// declarations are never all held at once; refuses with every node's problems at once after the
/// last (what `each` made of the others is then not to be shown).
fn compose_each(
    inv: &Inventory,
    cat: &Catalogue,
    nodes: Vec<Node>,
    mut each: impl FnMut(Node, Declaration) -> Result<()>,
) -> Result<()> {
    let mut refusals = Vec::new();
    for node in nodes {
        match resolve::compose(inv, cat, &node) {
            Ok(d) => each(node, d)?,
            // the resolve layer's own message lists every problem of the node
            Err(e @ ResolveError::Unresolved { .. }) => refusals.push(e.to_string()),
            Err(e) => return Err(e.into()),
        }
    }
    if !refusals.is_empty() {
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
    // in text, each node's plan is rendered as it is made: only the text is kept
    let mut plans = Vec::new();
    let mut text = String::new();
    inv.batch(|inv| {
        compose_each(inv, &cat, select, |node, declaration| {
            let confirmed = inv.confirmed(&node.name)?;
            let report = inv.last_report(&node.name)?;
            let mut p = plan::plan(&declaration, confirmed.as_ref(), report.as_ref());
            p.unconfirmed = inv.in_flight(&node.name)?;
            if ctx.json {
                plans.push(p);
            } else if !ctx.quiet || !p.changes.is_empty() || p.unconfirmed {
                // -q: only the nodes a push would change
                text.push_str(&render::plan(&p, a.diff, ctx.color()));
            }
            Ok(())
        })
    })?;
    if ctx.json {
        print_json(&render::plans_json(&plans, a.diff)?)?;
    } else {
        out_raw!("{text}");
    }
    Ok(exit::OK)
}

/// Loads every key file the nodes need, once each, before any connection (a passphrase prompt
/// cannot happen in the middle of a parallel fan-out). A node whose own key file cannot be used
/// comes back with its error: that node fails, the others go ahead.
fn credentials(nodes: &[&Node]) -> (Credentials, BTreeMap<String, ssh::SshError>) {
    let mut creds = Credentials {
        agent: true,
        ..Credentials::default()
    };
    let mut loaded: BTreeMap<std::path::PathBuf, Arc<russh::keys::PrivateKey>> = BTreeMap::new();
    let defaults = ssh::default_identities();
    let mut unusable = BTreeMap::new();
    'nodes: for node in nodes {
        let files = match &node.identity {
            Some(p) => vec![p.clone()],
            None => defaults.clone(),
        };
        let mut keys = Vec::new();
        for path in files {
            if let Some(k) = loaded.get(&path) {
                keys.push(k.clone());
                continue;
            }
            match ssh::load_identity(&node.name, &path) {
                Ok(k) => {
                    let k = Arc::new(k);
                    loaded.insert(path, k.clone());
                    keys.push(k);
                }
                // a node's own identity must work; a default one that does not is skipped
                Err(e) if node.identity.is_some() => {
                    unusable.insert(node.name.clone(), e);
                    continue 'nodes;
                }
                Err(_) => {}
            }
        }
        creds.keys.insert(node.name.clone(), keys);
    }
    (creds, unusable)
}

pub(crate) fn options(c: &Connect, mode: Mode) -> push::Options {
    push::Options {
        parallel: c.parallel,
        connect_timeout: Duration::from_secs(c.connect_timeout.max(1)),
        mode,
    }
}

/// Pushes (or checks) every job. `finished` hears each node's result the moment it is in, and
/// what it returns is printed then; all results come back in the order the nodes were named.
pub(crate) fn fan_out(
    jobs: Vec<Job>,
    options: &push::Options,
    ctx: &Context,
    mut finished: impl FnMut(&push::NodeResult) -> String,
) -> Result<Vec<push::NodeResult>> {
    let order: Vec<String> = jobs.iter().map(|j| j.node.name.clone()).collect();
    let (creds, unusable) = credentials(&jobs.iter().map(|j| &j.node).collect::<Vec<_>>());
    let jobs: Vec<Job> = jobs
        .into_iter()
        .filter(|j| !unusable.contains_key(&j.node.name))
        .collect();
    let mut results: Vec<push::NodeResult> = unusable
        .into_iter()
        .map(|(node, e)| push::NodeResult {
            node,
            result: Err(e.into()),
        })
        .collect();
    let progress = Progress::new(
        &jobs.iter().map(|j| j.node.name.clone()).collect::<Vec<_>>(),
        ctx.verbose,
    );
    for r in &results {
        progress.print(&finished(r));
    }
    let events = progress.sink();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let pushed = runtime.block_on(push::run(jobs, creds, options, events, |r| {
        progress.print(&finished(r))
    }));
    progress.finish();
    results.extend(pushed);
    results.sort_by_key(|r| order.iter().position(|n| *n == r.node));
    Ok(results)
}

/// A node that answered and changed nothing: `-q` does not show it.
fn unchanged(r: &push::NodeResult) -> bool {
    r.result
        .as_ref()
        .is_ok_and(|a| !a.report.failed() && !a.report.changed())
}

/// A node's declaration as it is sent: it says whether the inventory knows the machine has a
/// record, so a machine that lost its whole state directory is refused, not taken for new.
fn job(inv: &Inventory, node: Node, declaration: Declaration) -> Result<Job> {
    let expects_record = inv.answered(&node.name)?;
    Ok(Job {
        node,
        declaration: Declaration {
            expects_record,
            ..declaration
        },
    })
}

pub(crate) fn check(a: CheckArgs, ctx: &Context) -> Result<u8> {
    let mut inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    let composed = compose_all(&inv, &cat, selected(&inv, &a.select, "check")?)?;
    // a node whose last push was interrupted is reconciled from this dry run, unless a push is
    // running now (then its own result will say)
    let mut in_flight = BTreeMap::new();
    for (node, declaration) in &composed {
        if inv.in_flight(&node.name)? {
            in_flight.insert(node.name.clone(), declaration.clone());
        }
    }
    let lock = if in_flight.is_empty() {
        None
    } else {
        inv.lock_pushes().ok()
    };
    if lock.is_none() {
        in_flight.clear();
    }
    let jobs: Vec<Job> = composed
        .into_iter()
        .map(|(node, declaration)| job(&inv, node, declaration))
        .collect::<Result<_>>()?;
    let mut unrecorded = Vec::new();
    let diff = a.diff.then(|| ctx.color());
    let results = fan_out(jobs, &options(&a.connect, Mode::DryRun), ctx, |r| {
        if let (Some(sent), Ok(answer)) = (in_flight.get(&r.node), &r.result)
            && let Err(e) = inv.reconcile(&r.node, sent, &answer.report)
        {
            unrecorded.push((r.node.clone(), e));
        }
        if ctx.json || (ctx.quiet && unchanged(r)) {
            String::new()
        } else {
            render::node(r, Mode::DryRun, diff)
        }
    })?;
    let failed = results
        .iter()
        .any(|r| r.result.as_ref().map_or(true, |a| a.report.failed()));
    let changes = results
        .iter()
        .any(|r| r.result.as_ref().is_ok_and(|a| a.report.changed()));
    if ctx.json {
        print_json(&render::results_json(&results, Mode::DryRun))?;
    } else if !ctx.quiet {
        out_raw!("{}", render::summary(&results, Mode::DryRun));
    }
    for (node, e) in &unrecorded {
        eprintln!(
            "{node}: its last push was interrupted and what the machine has could not be \
             recorded in the inventory {}: {e}; `mesh plan` still shows it unconfirmed",
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

pub(crate) fn push(a: PushArgs, ctx: &Context) -> Result<u8> {
    let mut inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    let nodes = selected(&inv, &a.select, "push")?;
    let _lock = inv.lock_pushes()?;
    let mut composed = compose_all(&inv, &cat, nodes)?;
    if a.behind {
        let mut behind = Vec::new();
        for (node, declaration) in composed {
            let confirmed = inv.confirmed(&node.name)?;
            let failed = inv
                .last_outcome(&node.name)?
                .is_some_and(|o| o != "applied");
            if failed
                || confirmed.is_none()
                || !plan::plan(&declaration, confirmed.as_ref(), None).is_empty()
            {
                behind.push((node, declaration));
            }
        }
        composed = behind;
        if composed.is_empty() {
            if ctx.json {
                print_json(&render::results_json(&[], Mode::Apply))?;
            } else if !ctx.quiet {
                out!("every node has confirmed what it would be sent; nothing to push");
            }
            return Ok(exit::OK);
        }
    }
    let started = inv.now()?;
    // A node whose push would move a running container's data is held, unless told --move.
    let mut held: Vec<(String, Vec<plan::Move>)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    for (node, declaration) in composed {
        let confirmed = inv.confirmed(&node.name)?;
        let unacknowledged: Vec<plan::Move> = plan::moves(&declaration, confirmed.as_ref())
            .into_iter()
            .filter(|m| !a.moves.contains(&m.instance))
            .collect();
        if unacknowledged.is_empty() {
            jobs.push(job(&inv, node, declaration)?);
        } else {
            held.push((node.name, unacknowledged));
        }
    }
    for (node, moves) in &held {
        inv.record_push(&PushRecord {
            node: node.clone(),
            started_at: started.clone(),
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
    // every node is in flight before anything is sent: a push cut short is never forgotten
    let digests: Vec<String> = jobs
        .iter()
        .map(|j| resolve::declaration_digest(&j.declaration))
        .collect();
    let ids = inv.begin_pushes(
        &started,
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
    let mut unrecorded: Vec<(String, InventoryError)> = Vec::new();
    let results = fan_out(jobs, &options(&a.connect, Mode::Apply), ctx, |r| {
        if let Some((id, digest, sent)) = flights.get(&r.node) {
            let (record, answered) = match &r.result {
                Ok(answer) => (
                    PushRecord::answered(&r.node, &started, digest, &answer.report),
                    Some(sent),
                ),
                Err(e) => (
                    PushRecord {
                        node: r.node.clone(),
                        started_at: started.clone(),
                        digest: digest.clone(),
                        outcome: "failed".into(),
                        reason: Some(e.to_string()),
                        report: None,
                    },
                    None,
                ),
            };
            if let Err(e) = inv.finish_push(*id, &record, answered) {
                unrecorded.push((r.node.clone(), e));
            }
        }
        if ctx.json || (ctx.quiet && unchanged(r)) {
            String::new()
        } else {
            render::node(r, Mode::Apply, None)
        }
    })?;
    if ctx.json {
        let mut all = render::results_json(&results, Mode::Apply);
        if let Some(list) = all.as_array_mut() {
            for (node, moves) in &held {
                list.push(
                    serde_json::json!({"node": node, "outcome": "held", "moves": moves,
                    "reason": render::held_reason(moves)}),
                );
            }
        }
        print_json(&all)?;
    } else if !ctx.quiet {
        out_raw!("{}", render::summary(&results, Mode::Apply));
    }
    if !unrecorded.is_empty() {
        unrecorded.sort_by_key(|(node, _)| results.iter().position(|r| r.node == *node));
        eprint!("{}", unrecorded_message(&inv, &unrecorded));
        return Ok(exit::SOME_FAILED);
    }
    let failed = results
        .iter()
        .any(|r| r.result.as_ref().map_or(true, |a| a.report.failed()));
    Ok(if failed {
        exit::SOME_FAILED
    } else if !held.is_empty() {
        exit::SOME_HELD
    } else {
        exit::OK
    })
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
