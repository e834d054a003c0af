//! `mesh history`: past pushes and how they ended, and one push's full report.

use anyhow::{Result, bail};
use clap::Args;

use super::answers::commands::{GenerationShown, PushShown};
use super::{Context, exit, print_json, render};
use crate::inventory::{Inventory, Scope};
use crate::push;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct HistoryArgs {
    #[command(subcommand)]
    command: Option<HistoryCommand>,
    /// Only these nodes' pushes: names, globs (`web*`) or `@TAG` [default: every node's].
    #[arg(value_name = "SELECTOR")]
    nodes: Vec<String>,
    /// Leave out the nodes this selects. Repeatable.
    #[arg(long, value_name = "SELECTOR")]
    exclude: Vec<String>,
    /// How many pushes to show, the latest first.
    #[arg(long, default_value_t = 20, value_name = "N")]
    limit: i64,
}

#[derive(clap::Subcommand, Debug)]
enum HistoryCommand {
    /// A past push's full report, by the id `mesh history` shows (#ID); or, as `NODE@GEN`, the
    /// resources generation GEN of NODE had, as they were sent.
    Show {
        /// The push's id, with or without its `#`, or `NODE@GEN`.
        id: String,
    },
}

pub(crate) fn history(a: HistoryArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    if let Some(HistoryCommand::Show { id }) = &a.command {
        if let Some((node, number)) = id.split_once('@') {
            return generation_show(&inv, node, number, ctx);
        }
        return history_show(&inv, id, ctx);
    }
    // a selector that names no node is refused, as everywhere
    let rows = if a.nodes.is_empty() && a.exclude.is_empty() {
        inv.push_history(None, a.limit)?
    } else {
        let scope = if a.nodes.is_empty() {
            Scope::All
        } else {
            Scope::Only(&a.nodes)
        };
        let nodes = inv.select(scope, &a.exclude)?;
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        inv.push_history(Some(&names), a.limit)?
    };
    if ctx.json {
        print_json(&rows)?;
    } else if rows.is_empty() {
        out!("no pushes yet");
    } else {
        for r in rows {
            // a reason can quote what a machine said
            let reason = r
                .reason
                .map(|x| format!(": {}", crate::plan::visible(&x)))
                .unwrap_or_default();
            let made = match r.generation {
                Some(number) => format!(" (generation {number}{})", what_changed(&inv, r.id)?),
                None => String::new(),
            };
            out!(
                "#{:<5} {} {:<12} {}{made}{reason}",
                r.id,
                r.started_at,
                r.node,
                r.outcome
            );
        }
    }
    Ok(exit::OK)
}

fn history_show(inv: &Inventory, id: &str, ctx: &Context) -> Result<u8> {
    let Ok(number) = id.trim_start_matches('#').parse::<i64>() else {
        bail!("`{id}` is not a push id: use a number `mesh history` shows, like 12 or #12");
    };
    let Some((row, report)) = inv.push_by_id(number)? else {
        bail!(
            "there is no push #{number} in the inventory {}: `mesh history` lists them",
            inv.path().display()
        );
    };
    if ctx.json {
        print_json(&PushShown {
            push: &row,
            report: report.as_ref(),
        })?;
        return Ok(exit::OK);
    }
    out!("push #{} to {}", row.id, row.node);
    out!("started:  {}", row.started_at);
    out!("finished: {}", row.finished_at);
    out!("outcome:  {}", row.outcome);
    if let Some(reason) = &row.reason {
        // a reason can quote what a machine said
        out!("reason:   {}", crate::plan::visible(reason));
    }
    match report {
        Some(report) => {
            // as the helper was asked: a check that found the machine new was a dry run
            let mode = report.mode;
            let result = push::NodeResult {
                node: row.node,
                result: Ok(push::Answer {
                    report,
                    uploaded: false,
                    confirmation: None,
                    facts_refused: None,
                }),
            };
            out_raw!("{}", render::node(&result, mode, None));
        }
        None => out!("no report: the helper did not answer this push"),
    }
    Ok(exit::OK)
}

/// What push `id` changed, from its report: `: 1 created, 2 changed` (nothing when it changed
/// nothing, or said nothing).
fn what_changed(inv: &Inventory, id: i64) -> Result<String> {
    let Some((_, Some(report))) = inv.push_by_id(id)? else {
        return Ok(String::new());
    };
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for o in report
        .resources
        .iter()
        .filter(|o| o.state != crate::wire::State::Unchanged)
    {
        *counts
            .entry(format!("{:?}", o.state).to_lowercase())
            .or_default() += 1;
    }
    let said: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let mut rollback = match inv.rolled_back_to(id)? {
        Some(number) => format!("; rollback to generation {number}"),
        None => String::new(),
    };
    if report.generation_not_kept.is_some() {
        rollback.push_str("; NOT KEPT on the machine (it cannot roll back to it)");
    }
    Ok(if said.is_empty() {
        format!(": nothing changed{rollback}")
    } else {
        format!(": {}{rollback}", said.join(", "))
    })
}

/// `mesh history show NODE@GEN`: the resources generation GEN of NODE had, as sent.
fn generation_show(inv: &Inventory, node: &str, number: &str, ctx: &Context) -> Result<u8> {
    let Ok(number) = number.parse::<u64>() else {
        bail!("`{node}@{number}` names no generation: use NODE@GEN, like web1@3");
    };
    let node = inv.node(node)?.name;
    let Some(kept) = inv.kept_generation(&node, number)? else {
        bail!(
            "the inventory {} keeps no generation {number} of {node}: `mesh history {node}` lists \
             the generations its pushes made",
            inv.path().display()
        );
    };
    // what is shown never holds a secret's sealed text
    let declaration = kept.declaration.without_ciphertext();
    if ctx.json {
        print_json(&GenerationShown {
            node: &kept.node,
            generation: kept.generation,
            push: kept.push,
            inventory: &kept.inventory,
            pushed_at: kept.pushed_at,
            resources: &declaration.resources,
        })?;
        return Ok(exit::OK);
    }
    out!(
        "generation {} of {}: push #{}, pushed at {} UTC from inventory {}",
        kept.generation,
        kept.node,
        kept.push,
        crate::wire::utc(kept.pushed_at),
        kept.inventory
    );
    for r in &declaration.resources {
        out!(
            "  {} ({} {}, {})",
            r.id,
            r.spec.kind(),
            crate::plan::visible(r.spec.target()),
            r.module
        );
    }
    Ok(exit::OK)
}
