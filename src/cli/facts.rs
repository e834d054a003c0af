//! `mesh facts`: what each selected node's machine last said it is, as templates read it.

use anyhow::Result;
use clap::Args;

use super::answers::commands::NodeFacts;
use super::push::{Selection, selected};
use super::{Context, exit, print_json};
use crate::wire::{FIELDS, utc};

#[derive(Args, Debug)]
pub(crate) struct FactsArgs {
    #[command(flatten)]
    select: Selection,
}

pub(crate) fn facts(a: FactsArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    let mut answers = Vec::new();
    for node in selected(&inv, &a.select, "show the facts of")? {
        let known = inv.facts(&node.name)?;
        answers.push(NodeFacts {
            node: node.name,
            seen_at: known
                .as_ref()
                .map(|k| utc(u64::try_from(k.seen_at).unwrap_or(0))),
            facts: known.map(|k| k.facts),
        });
    }
    if ctx.json {
        print_json(&answers)?;
        return Ok(exit::OK);
    }
    for n in &answers {
        // what a machine says is printed as data: a control character in it is shown, not run
        for line in text(n).lines() {
            out!("{}", crate::plan::visible(line));
        }
    }
    Ok(exit::OK)
}

fn text(n: &NodeFacts) -> String {
    let (Some(facts), Some(at)) = (&n.facts, &n.seen_at) else {
        return format!(
            "{}: no facts yet: `mesh check {}` asks the machine (any push or check answers them)",
            n.node, n.node
        );
    };
    let mut out = format!(
        "{} (said {at}; a template reads each as ${{REQUIREMENT.NAME}}):",
        n.node
    );
    let width = FIELDS.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for f in FIELDS {
        out.push_str(&format!("\n  {:width$}  {}", f.name, f.value(facts)));
    }
    for i in &facts.interfaces {
        let addresses: Vec<&str> = i.ipv4.iter().chain(&i.ipv6).map(String::as_str).collect();
        out.push_str(&format!(
            "\n  interface {}: {}",
            i.name,
            addresses.join(", ")
        ));
    }
    out
}
