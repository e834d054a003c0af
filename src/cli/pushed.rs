//! What a push came to: every wave's results, the nodes held, and how it reads as text, JSON
//! and an exit status.

use std::collections::BTreeMap;

use anyhow::Result;

use super::answers::fleet::{self, HeldNode, Listed};
use super::rollout;
use super::rollout::wave_map;
use super::{Context, exit, print_json, render};
use crate::deploy::{Rollout, Summary};
use crate::inventory::{Inventory, InventoryError};
use crate::push;
use crate::wire::Mode;

/// What the push came to, as text or JSON, and its exit status.
pub(crate) fn report(
    behind: bool,
    ctx: &Context,
    inv: &Inventory,
    rollout: &Rollout,
    out: Summary,
) -> Result<u8> {
    let nothing = out.results.is_empty()
        && out.held.is_empty()
        && out.kept.is_empty()
        && out.waiting.is_empty()
        && out.rolled_back.is_empty();
    if behind && nothing && out.stopped.is_empty() {
        if ctx.json {
            print_json(&fleet::results(&[], Mode::Apply))?;
        } else if !ctx.quiet {
            out!("every node has confirmed what it would be sent; nothing to push");
        }
        return Ok(exit::OK);
    }
    let Summary {
        results,
        held,
        kept,
        stopped,
        waiting,
        mut unrecorded,
        rolled_back,
    } = out;
    if ctx.json {
        let said = Held {
            results: &results,
            moves: &held,
            kept: &kept,
            stopped: &stopped,
            waiting: &waiting,
            rolled_back: &rolled_back,
        };
        let by = rollout.stopped.as_deref().unwrap_or_default();
        print_json(&listed(&said, by, &wave_map(&rollout.waves)))?;
    } else if !ctx.quiet && (!results.is_empty() || rolled_back.is_empty()) {
        // a push of held nodes only has said each already
        out_raw!("{}", render::summary(&results, Mode::Apply));
    }
    if let Some(by) = &rollout.stopped
        && !ctx.json
    {
        err_raw!("{}", rollout::stop_text(by, &stopped, &rollout.unreachable));
    }
    if !unrecorded.is_empty() {
        unrecorded.sort_by_key(|(node, _)| results.iter().position(|r| r.node == *node));
        err_raw!("{}", unrecorded_message(inv, &unrecorded));
        return Ok(exit::SOME_FAILED);
    }
    let failed = results
        .iter()
        .any(|r| r.result.as_ref().map_or(true, push::Answer::failed));
    Ok(if failed || rollout.stopped.is_some() {
        exit::SOME_FAILED
    } else if !held.is_empty() || !kept.is_empty() || !waiting.is_empty() || !rolled_back.is_empty()
    {
        exit::SOME_HELD
    } else {
        exit::OK
    })
}

/// What a push did to each node, and the nodes it held, as its `--json` lists them.
pub(crate) struct Held<'a> {
    pub(crate) results: &'a [push::NodeResult],
    /// Held because a container's data would move.
    pub(crate) moves: &'a [(String, Vec<crate::plan::Move>)],
    /// Held with an assignment held back.
    pub(crate) kept: &'a [(String, crate::resolve::Held)],
    /// Held because the rollout stopped, in their waves.
    pub(crate) stopped: &'a [(String, usize)],
    /// Held because a provider did not answer ready: their waves, and why.
    pub(crate) waiting: &'a [(String, usize, String)],
    /// Held at a generation by a rollback.
    pub(crate) rolled_back: &'a [crate::inventory::Hold],
}

/// Every node of `p` as an entry of the list, in the wave `waves` puts it; `by`: what stopped
/// the rollout.
pub(crate) fn listed<'a>(
    p: &Held<'a>,
    by: &str,
    waves: &BTreeMap<String, usize>,
) -> Vec<Listed<'a>> {
    let mut all = fleet::results(p.results, Mode::Apply);
    let held = p
        .moves
        .iter()
        .map(|(node, moves)| HeldNode::moves(node, moves));
    let kept = p.kept.iter().map(|(node, h)| HeldNode::assignment(node, h));
    let stopped = p
        .stopped
        .iter()
        .map(|(node, wave)| HeldNode::stopped(node, *wave, by));
    let waiting = p
        .waiting
        .iter()
        .map(|(node, wave, why)| HeldNode::waiting(node, *wave, why));
    let rolled_back = p.rolled_back.iter().map(|h| HeldNode::rollback(h, None));
    all.extend(
        held.chain(kept)
            .chain(stopped)
            .chain(waiting)
            .chain(rolled_back)
            .map(Listed::of),
    );
    fleet::with_waves(&mut all, waves);
    all
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
