//! `mesh node adopt SELECTOR…`: recovery for machines whose helper record was lost. Each selected
//! node's current declaration goes to the helper in adopt mode; it builds a fresh record taking the
//! machine as it is now (nothing else changes), and says what it cannot give back. The operator
//! then pushes as usual.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Args;

use super::push::{Connect, Selection, compose_all, fan_out, job, options, selected};
use super::{Context, exit, print_json};
use crate::inventory::{Inventory, PushRecord};
use crate::push::{Job, NodeResult};
use crate::resolve;
use crate::wire::Mode;

#[derive(Args, Debug)]
pub(crate) struct AdoptArgs {
    /// The nodes whose helpers refused them (their records missing or unreadable), selected as
    /// every other verb selects them.
    #[command(flatten)]
    select: Selection,
    #[command(flatten)]
    connect: Connect,
}

pub(crate) fn adopt(a: AdoptArgs, ctx: &Context, mut inv: Inventory) -> Result<u8> {
    let cat = ctx.catalogue()?;
    let nodes = selected(&inv, &a.select, "adopt")?;
    inv.lock_pushes()?;
    // allocated as a push allocates, and kept
    let jobs: Vec<Job> = inv
        .batch(|inv| compose_all(inv, &cat, nodes))?
        .into_iter()
        .map(|(node, composed)| {
            // the machine is taken as it is, held assignments too: what they have is the mesh's
            let mut declaration = composed.declaration;
            declaration.resources.extend(composed.kept);
            declaration.keep.clear();
            // it says whether the inventory knows of a record there: a machine the operator
            // knows is not taken for new, whatever it shows
            job(&inv, node, declaration)
        })
        .collect::<Result<_>>()?;
    let digests: Vec<String> = jobs
        .iter()
        .map(|j| resolve::declaration_digest(&j.declaration))
        .collect();
    let started = inv.now()?;
    let results = fan_out(
        jobs,
        &options(&a.connect, Mode::Adopt, ctx),
        ctx,
        |_| {},
        |_| String::new(),
    )?;
    // what the machines said is printed first: it stands whether or not it can be recorded
    if ctx.json {
        print_json(&super::answers::fleet::results(&results, Mode::Adopt))?;
    } else {
        out_raw!("{}", said(&results));
    }
    // recorded like a push, but nothing is confirmed: what the machine runs is still the last
    // push's, so the next push (and `--behind`) sends the declaration in full
    for (r, digest) in results.iter().zip(digests) {
        let (outcome, reason, report) = match &r.result {
            // nothing was done, and the push that left the change pending stays so
            Err(crate::push::PushError::Awaiting { .. }) => continue,
            Ok(answer) => ("adopted", None, Some(answer.report.clone())),
            Err(e) => ("failed", Some(e.to_string()), None),
        };
        // a machine adopted as new has nothing the inventory confirmed of it before
        let forgotten = match &report {
            Some(report) if report.new_machine => inv.forget_confirmed(&r.node),
            _ => Ok(()),
        };
        let recorded = forgotten.and_then(|()| {
            inv.record_push(&PushRecord {
                node: r.node.clone(),
                started_at: started.clone(),
                digest,
                outcome: outcome.into(),
                reason,
                report,
            })
        });
        if let Err(e) = recorded {
            err!(
                "{}: the inventory {} could not record this adopt (what the machine said is \
                 above): {e}; the next push works from the machine's record all the same",
                r.node,
                inv.path().display()
            );
            return Ok(exit::SOME_FAILED);
        }
    }
    Ok(if results.iter().all(|r| r.result.is_ok()) {
        exit::OK
    } else {
        exit::SOME_FAILED
    })
}

/// What each node's helper took, kept and could not give back.
fn said(results: &[NodeResult]) -> String {
    let mut out = String::new();
    for r in results {
        let answer = match &r.result {
            Ok(answer) => answer,
            Err(e) => {
                let _ = writeln!(out, "{}: FAILED ({}): {e}", r.node, e.kind());
                continue;
            }
        };
        let adoption = answer.report.adoption.clone().unwrap_or_default();
        if adoption.had_record {
            let _ = writeln!(
                out,
                "{}: its record is whole; nothing was adopted and nothing changed",
                r.node
            );
            continue;
        }
        if adoption.new_machine {
            let _ = writeln!(
                out,
                "{}: new: no record and no signs of the mesh on the machine; nothing was taken \
                 and nothing changed: what it has stays its own, and the next push keeps what it \
                 replaces as the original\n  next: mesh push {}",
                r.node, r.node
            );
            continue;
        }
        let taken = answer.report.resources.len();
        let _ = writeln!(
            out,
            "{}: adopted: {taken} resource{} taken as the mesh's; nothing else on the machine \
             changed",
            r.node,
            if taken == 1 { "" } else { "s" }
        );
        for o in &answer.report.resources {
            let _ = writeln!(out, "  taken: {}", o.detail);
        }
        if adoption.cannot_give_back.is_empty() {
            let _ = writeln!(
                out,
                "  everything it took can be given back as the host had it"
            );
        }
        for lost in &adoption.cannot_give_back {
            let _ = writeln!(out, "  cannot give back: {lost}");
        }
        for kept in &adoption.kept {
            let _ = writeln!(
                out,
                "  kept on the machine (matches nothing declared): {kept}"
            );
        }
        let _ = writeln!(out, "  next: mesh push {}", r.node);
    }
    out
}
