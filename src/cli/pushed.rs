//! What a push came to: every wave's results, the nodes held, and how it reads as text, JSON
//! and an exit status.

use anyhow::Result;

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
            print_json(&render::results_json(&[], Mode::Apply))?;
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
        let mut all = render::results_json(&results, Mode::Apply);
        if let Some(list) = all.as_array_mut() {
            for (node, moves) in &held {
                list.push(
                    serde_json::json!({"node": node, "outcome": "held", "moves": moves,
                    "reason": crate::deploy::moves_reason(moves)}),
                );
            }
            for (node, h) in &kept {
                list.push(serde_json::json!({"node": node, "outcome": "held", "assignment": h}));
            }
            let by = rollout.stopped.as_deref().unwrap_or_default();
            for (node, wave) in &stopped {
                list.push(rollout::held_json(node, *wave, by));
            }
            for (node, wave, why) in &waiting {
                list.push(rollout::waiting_json(node, *wave, why));
            }
            for hold in &rolled_back {
                list.push(super::held_at::json(hold, None));
            }
        }
        rollout::add_waves(&mut all, &wave_map(&rollout.waves));
        print_json(&all)?;
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
