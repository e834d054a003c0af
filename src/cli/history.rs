//! `mesh history`: past pushes and how they ended, and one push's full report.

use anyhow::{Result, bail};
use clap::Args;

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
    /// A past push's full report, by the id `mesh history` shows (#ID).
    Show {
        /// The push's id, with or without its `#`.
        id: String,
    },
}

pub(crate) fn history(a: HistoryArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    if let Some(HistoryCommand::Show { id }) = &a.command {
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
            out!(
                "#{:<5} {} {:<12} {}{reason}",
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
        print_json(&serde_json::json!({"push": row, "report": report}))?;
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
                }),
            };
            out_raw!("{}", render::node(&result, mode, None));
        }
        None => out!("no report: the helper did not answer this push"),
    }
    Ok(exit::OK)
}
