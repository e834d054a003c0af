//! `mesh rollback`: a node sent a generation the inventory kept, exactly as it was sent then
//! (not composed again from today's catalogue and settings), through the same plan and push as
//! any; the node is then held at it until `--release`. `--push ID` takes every node of a past
//! push back to the generation it had before that push.

use anyhow::{Result, bail};
use clap::Args;

use super::answers::commands::Released;
use super::answers::fleet::{self, Entry, HeldNode, LeftAlone, Listed, NotRead, RollbackHeld};
use super::apply::Terminal;
use super::push::{Connect, options as options_of};
use super::{Context, exit, print_json, render};
use crate::deploy::PushOptions;
use crate::deploy::rollback::{self, Rolled, Target};
use crate::deploy::rollback_secrets::SecretBack;
use crate::inventory::{Hold, Inventory, Scope};
use crate::plan::Plan;
use crate::push::NodeResult;
use crate::wire::{Mode, Report};

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["to", "push", "release"])))]
pub(crate) struct RollbackArgs {
    /// The nodes: names, globs (`web*`) or `@TAG`.
    #[arg(value_name = "SELECTOR")]
    nodes: Vec<String>,
    /// The generation to send the nodes again, as `mesh history NODE` lists it.
    #[arg(long, value_name = "GEN")]
    to: Option<u64>,
    /// Every node of past push ID (`mesh history` shows it) back to the generation it had before
    /// that push.
    #[arg(long, value_name = "ID", conflicts_with = "nodes")]
    push: Option<String>,
    /// Release the nodes from the generation a rollback holds them at: the next push sends them
    /// the inventory's declaration again.
    #[arg(long, conflicts_with_all = ["dry_run", "diff"])]
    release: bool,
    /// Show the plan only, send nothing.
    #[arg(long)]
    dry_run: bool,
    /// Show each changed file's content as a unified diff.
    #[arg(long)]
    diff: bool,
    /// Seconds a change that can cut you off waits to be confirmed over a new connection (as
    /// `mesh push --confirm-timeout`).
    #[arg(long, default_value_t = crate::wire::CONFIRM_WITHIN, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    confirm_timeout: u64,
    /// Replace whatever generation the machines are at, even one another inventory pushed since
    /// this one last saw them.
    #[arg(long)]
    overwrite: bool,
    /// Send a rollback that moves this instance's container data (as `mesh push --move`);
    /// without it such a node is held and sent nothing. Repeatable.
    #[arg(long = "move", value_name = "INSTANCE")]
    moves: Vec<String>,
    #[command(flatten)]
    rollout: super::rollout::RolloutArgs,
    #[command(flatten)]
    connect: Connect,
}

pub(crate) fn rollback(a: RollbackArgs, ctx: &Context) -> Result<u8> {
    let mut inv = ctx.inventory()?;
    if a.release {
        return release(&mut inv, &a, ctx);
    }
    let (targets, alone) = match (&a.push, a.to) {
        (Some(id), _) => of_push(&inv, id, ctx)?,
        (None, Some(_)) if a.nodes.is_empty() => {
            bail!("name the nodes to roll back (names, globs or @TAG), or say --push ID")
        }
        (None, Some(number)) => (rollback::to(&inv, &a.nodes, number)?, Vec::new()),
        (None, None) => bail!("say --to GEN, --push ID or --release"),
    };
    // each machine is asked what it has first: the plan is from that, drift included
    let read = rollback::read(
        &inv,
        targets,
        &options_of(&a.connect, Mode::DryRun, ctx),
        &Terminal { ctx },
    )?;
    let (mut alone, unread) = (alone, !read.unanswered.is_empty());
    alone.extend(read.unanswered.iter().map(|r| not_read(r, ctx)));
    let mut plans = rollback::plans(&inv, &read.answered)?;
    for p in &mut plans {
        super::push::in_flight_elsewhere(&inv, p)?;
    }
    let cat = ctx.catalogue();
    let secrets = match &cat {
        Ok(cat) => {
            let reached: Vec<&Target> = read.answered.iter().map(|(t, _)| t).collect();
            crate::deploy::rollback_secrets::secrets_back(&inv, cat, &reached)?
        }
        Err(_) => Vec::new(),
    };
    show_plans(&plans, &read.answered, &alone, &secrets, &a, ctx)?;
    let changes = plans.iter().any(|p| !p.changes.is_empty());
    let targets: Vec<Target> = read.answered.into_iter().map(|(t, _)| t).collect();
    let options = a.rollout.options(crate::deploy::FailureBudget::None);
    // why there is no catalogue, said as it was: waves are then not planned
    let cat = cat.as_ref().map_err(|e| {
        let e: &(dyn std::error::Error + 'static) = e.as_ref();
        e
    });
    let (waves, unplanned) = rollback::waves(&inv, cat, &targets, &plans, &options);
    if let Some(why) = unplanned.filter(|_| !ctx.json && !ctx.quiet) {
        out!("waves: {why}; every node is sent at once");
    }
    if a.dry_run {
        if waves.len() > 1 && !ctx.json && !ctx.quiet {
            out_raw!("{}", super::rollout::waves_text(&waves));
        }
        return Ok(if unread {
            exit::SOME_FAILED
        } else if changes {
            exit::CHANGES
        } else {
            exit::OK
        });
    }
    if targets.is_empty() {
        if ctx.json {
            print_json(&alone.iter().map(Alone::listed).collect::<Vec<_>>())?;
        }
        return Ok(if unread { exit::SOME_FAILED } else { exit::OK });
    }
    inv.lock_pushes()?;
    let push = PushOptions {
        behind: false,
        moves: a.moves.clone(),
        confirm_timeout: a.confirm_timeout,
        overwrite: a.overwrite,
        push: options_of(&a.connect, Mode::Apply, ctx),
    };
    let rolled = rollback::rollback(&mut inv, &targets, &waves, &push, &Terminal { ctx })?;
    report(&inv, rolled, alone, unread, ctx)
}

/// A node a rollback sends nothing, and why: its `--json` entry.
enum Alone {
    /// What its machine has could not be read.
    NotRead {
        node: String,
        kind: &'static str,
        reason: String,
    },
    /// A rollback of a past push leaves it alone.
    Left(crate::deploy::rollback_plan::LeftAlone),
}

impl Alone {
    fn listed(&self) -> Listed<'_> {
        match self {
            Alone::NotRead { node, kind, reason } => Listed::of(NotRead {
                node,
                outcome: "failed",
                kind,
                reason: reason.clone(),
            }),
            Alone::Left(l) => Listed::of(LeftAlone {
                node: &l.node,
                outcome: "left alone",
                push: l.push,
                reason: &l.reason,
            }),
        }
    }
}

/// A node whose machine could not be asked what it has: said, and not rolled back.
fn not_read(r: &NodeResult, ctx: &Context) -> Alone {
    let (kind, e) = match &r.result {
        Err(e) => (e.kind(), e.to_string()),
        Ok(_) => ("unknown", "no answer".to_string()),
    };
    let reason = format!("not rolled back: what its machine has could not be read: {e}");
    if !ctx.json {
        out!("{}: {}", r.node, crate::plan::visible(&reason));
    }
    Alone::NotRead {
        node: r.node.clone(),
        kind,
        reason,
    }
}

/// Every node of the past push `id` back to the generation it had before it; a node left alone
/// is said so (in `--json`, as the entries returned).
fn of_push(inv: &Inventory, id: &str, ctx: &Context) -> Result<(Vec<Target>, Vec<Alone>)> {
    let Ok(number) = id.trim_start_matches('#').parse::<i64>() else {
        bail!("`{id}` is not a push id: use a number `mesh history` shows, like 12 or #12");
    };
    let (targets, left) = rollback::of_push(inv, number)?;
    let mut alone = Vec::new();
    for l in left {
        if !ctx.json {
            out!("{}", l.reason);
        }
        alone.push(Alone::Left(l));
    }
    Ok((targets, alone))
}

/// Each target's plan (`plans`, made from what its machine has to what its generation had), as
/// `plan` shows it; in `--json` with `--dry-run`, with the nodes left alone.
fn show_plans(
    plans: &[Plan],
    targets: &[(Target, Report)],
    alone: &[Alone],
    secrets: &[SecretBack],
    a: &RollbackArgs,
    ctx: &Context,
) -> Result<()> {
    for (p, (t, _)) in plans.iter().zip(targets).filter(|_| !ctx.json) {
        out!(
            "{}: rollback to generation {} (push #{}, pushed at {} UTC), planned against \
             what the machine has:",
            t.node.name,
            t.kept.generation,
            t.kept.push,
            crate::wire::utc(t.kept.pushed_at)
        );
        out_raw!("{}", render::plan(p, a.diff, ctx.color()));
        for back in secrets.iter().filter(|b| b.node == t.node.name) {
            out!("{}", crate::plan::visible(&back.line()));
        }
    }
    if ctx.json && a.dry_run {
        let mut all = fleet::planned(plans, a.diff);
        for (entry, (t, _)) in all.iter_mut().zip(targets) {
            if let Entry::Planned(p) = &mut entry.entry {
                p.rollback_to = Some(t.kept.generation);
                p.secrets_back = secrets.iter().filter(|b| b.node == t.node.name).collect();
            }
        }
        all.extend(alone.iter().map(Alone::listed));
        print_json(&all)?;
    }
    Ok(())
}

/// How the rollback went: each node's result, the nodes now held, those given back their hold.
fn report(
    inv: &Inventory,
    rolled: Rolled,
    alone: Vec<Alone>,
    unread: bool,
    ctx: &Context,
) -> Result<u8> {
    let Rolled {
        summary: out,
        stopped_by,
        held,
        given_back,
    } = rolled;
    let failed = out.results.iter().any(|r| !rollback::applied(r))
        || !out.unrecorded.is_empty()
        || stopped_by.is_some()
        || unread;
    if ctx.json {
        let mut all = listed(&out.results, &held);
        all.extend(alone.iter().map(Alone::listed));
        if let Some(by) = &stopped_by {
            let stopped = out.stopped.iter();
            all.extend(stopped.map(|(node, wave)| Listed::of(HeldNode::stopped(node, *wave, by))));
        }
        print_json(&all)?;
    } else {
        if !ctx.quiet {
            out_raw!("{}", render::summary(&out.results, Mode::Apply));
        }
        for h in &held {
            out!("{}", super::held_at::line(h));
        }
    }
    for (node, was) in given_back.iter().filter(|_| !ctx.json) {
        match was {
            Some(g) => out!("{node}: not rolled back; held at generation {g} again, as before"),
            None => out!("{node}: not rolled back; not held, as before"),
        }
    }
    for (node, e) in &out.unrecorded {
        err!(
            "{node}: the rollback ran but the inventory {} could not record it: {e}",
            inv.path().display()
        );
    }
    Ok(if failed {
        exit::SOME_FAILED
    } else if !out.held.is_empty() {
        exit::SOME_HELD
    } else {
        exit::OK
    })
}

/// Each node's result, with the generation a rollback now holds it at.
pub(crate) fn listed<'a>(results: &'a [NodeResult], held: &[Hold]) -> Vec<Listed<'a>> {
    let mut all = fleet::results(results, Mode::Apply);
    for entry in &mut all {
        if let Entry::Done(done) = &mut entry.entry
            && let Some(h) = held.iter().find(|h| h.node == done.node)
        {
            done.held = Some(RollbackHeld {
                generation: h.generation,
                kind: "rollback",
            });
        }
    }
    all
}

/// `--release`: the nodes are no longer held; the next push sends them the inventory's
/// declaration.
fn release(inv: &mut Inventory, a: &RollbackArgs, ctx: &Context) -> Result<u8> {
    if a.nodes.is_empty() {
        bail!("name the nodes to release (names, globs or @TAG)");
    }
    let nodes = inv.select(Scope::Only(&a.nodes), &[])?;
    let mut said = Vec::new();
    for node in nodes {
        let hold = inv.release(&node.name)?;
        if !ctx.json {
            match &hold {
                Some(h) => out!(
                    "{}: released from generation {}; the next push sends it the inventory's \
                     declaration",
                    h.node,
                    h.generation
                ),
                None => out!("{}: not held by a rollback; nothing to release", node.name),
            }
        }
        said.push((node.name, hold.map(|h| h.generation)));
    }
    if ctx.json {
        let said = said.iter().map(|(node, released)| Released {
            node,
            released: *released,
        });
        print_json(&said.collect::<Vec<_>>())?;
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::Cli;

    fn parsed(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("mesh").chain(args.iter().copied()))
    }

    #[test]
    fn to_and_push_together_are_refused() {
        let e = parsed(&["rollback", "--to", "1", "--push", "3"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{e}");
        let e = parsed(&["rollback", "node1", "--push", "3"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{e}");
    }

    #[test]
    fn a_rollback_must_say_where_to() {
        let e = parsed(&["rollback", "node1"]).unwrap_err();
        assert_eq!(
            e.kind(),
            clap::error::ErrorKind::MissingRequiredArgument,
            "{e}"
        );
        assert!(parsed(&["rollback", "node1", "--to", "2", "--dry-run"]).is_ok());
        assert!(parsed(&["rollback", "node1", "--release"]).is_ok());
        let e = parsed(&["rollback", "node1", "--release", "--to", "2"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{e}");
    }
}
