//! `mesh push`: the flags mapped to the deploy layer's options, the nodes it is given, what it
//! says as it goes, and its summary as text, JSON and an exit status. The rollout itself (waves,
//! holds, the budget, recording) is [`crate::deploy::push`].

use anyhow::Result;
use clap::Args;

use super::progress::Progress;
use super::push::{Connect, Selection, compose_fleet, options, selected, unchanged};
use super::rollout::{self, RolloutArgs};
use super::{Context, render};
use crate::deploy::{self, FailureBudget, Given, PushOptions, Rollout, Said, Watch, wave_map};
use crate::inventory::{Inventory, Node};
use crate::push::NodeResult;
use crate::wire::Mode;

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
    #[arg(long, conflicts_with_all = ["behind", "canary", "max_unavailable", "all", "exclude"])]
    resume: bool,
    #[command(flatten)]
    connect: Connect,
}

pub(crate) fn push(a: PushArgs, ctx: &Context) -> Result<u8> {
    let mut inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    let (nodes, resumed) = nodes_of(&a, &mut inv)?;
    // a node a rollback holds stays at its generation until released
    let (nodes, held_at) = super::held_at::leave_held(&inv, nodes)?;
    if !ctx.json && !ctx.quiet {
        for hold in &held_at {
            out!("{}", super::held_at::line(hold));
        }
    }
    // every node's problems are said at once, before anything is sent: a node that cannot be
    // composed fails alone and is sent nothing (what its assignments made stays), and the
    // others go ahead; only when none can is the push refused
    // what the nodes need allocated is, in one transaction, and kept: the plan showed it
    let (composed, refusals) = inv.batch(|inv| {
        inv.seal_kept_in_clear()?;
        compose_fleet(inv, &cat, nodes.clone())
    })?;
    let given = Given {
        nodes,
        composed,
        refusals,
        resumed,
        held_at,
    };
    let options = PushOptions {
        behind: a.behind,
        moves: a.moves.clone(),
        confirm_timeout: a.confirm_timeout,
        overwrite: a.overwrite,
        push: options(&a.connect, Mode::Apply, ctx),
    };
    let watch = Terminal { ctx };
    let rollout_options = a.rollout.options(a.max_failed);
    let (rollout, summary) =
        deploy::push(&mut inv, &cat, given, &rollout_options, &options, &watch)?;
    super::pushed::report(a.behind, ctx, &inv, &rollout, summary)
}

/// The nodes to push: the selected ones, or with `--resume` the last rollout's nodes not yet
/// done (and that rollout). The push lock is taken before the rollout is read.
fn nodes_of(a: &PushArgs, inv: &mut Inventory) -> Result<(Vec<Node>, Option<Rollout>)> {
    if !a.resume {
        let nodes = selected(inv, &a.select, "push")?;
        inv.lock_pushes()?;
        return Ok((nodes, None));
    }
    // a selection picks among the rollout's own nodes left; it is read before the lock
    let chosen = match a.select.is_empty() {
        true => None,
        false => Some(selected(inv, &a.select, "push")?),
    };
    inv.lock_pushes()?;
    let mut r = Rollout::resume(inv, a.max_failed)?;
    if let Some(chosen) = chosen {
        let names: Vec<String> = chosen.into_iter().map(|n| n.name).collect();
        r.only(&names)?;
    }
    let left = wave_map(&r.waves);
    let nodes: Vec<Node> = inv
        .nodes()?
        .into_iter()
        .filter(|n| left.contains_key(&n.name))
        .collect();
    Ok((nodes, Some(r)))
}

/// A push as the terminal shows it: text as it goes (JSON says everything at the end).
pub(crate) struct Terminal<'a> {
    pub(crate) ctx: &'a Context,
}

impl Watch for Terminal<'_> {
    fn progress(&self, nodes: &[String]) -> Box<dyn deploy::Progress> {
        Box::new(Progress::new(nodes, self.ctx.verbose))
    }

    fn said(&self, said: Said<'_>) {
        let (json, quiet) = (self.ctx.json, self.ctx.quiet);
        match said {
            Said::Unrecorded { end: true, error } => {
                err!("the rollout's end could not be recorded in the inventory: {error}");
            }
            Said::Unrecorded { end: false, error } => err!(
                "the rollout's progress could not be recorded in the inventory: {error}; `mesh \
                 push --resume` continues from what it last recorded"
            ),
            _ if json => {}
            Said::Kept { node, held } => out!("{}", crate::plan::visible(&held.line(node))),
            Said::Overwrite(line) => out!("{line}"),
            Said::Moves { node, moves } => out!(
                "{node}: HELD: {}",
                crate::plan::visible(&deploy::moves_reason(moves))
            ),
            Said::Refused(r) => out_raw!("{}", render::node(r, Mode::Apply, None)),
            _ if quiet => {}
            Said::WaveStarts { wave, of, parallel } => {
                out!("{}", rollout::wave_start(wave, of, parallel));
            }
            Said::Stopped { node } => out!("{node}: HELD (rollout stopped), sent nothing"),
            Said::Waiting { node, why } => {
                out!("{node}: HELD (provider not ready), sent nothing: {why}");
            }
        }
    }

    fn finished(&self, r: &NodeResult) -> String {
        if self.ctx.json || (self.ctx.quiet && unchanged(r)) {
            String::new()
        } else {
            render::node(r, Mode::Apply, None)
        }
    }
}
