//! One wave sent, of a push or of a rollback ([`super::rollback`]): each node's declaration
//! made into a job (held when a running container's data would move), every node in flight
//! before anything is sent, each recorded the moment it answers (reconciled, left unconfirmed,
//! or pending confirmation as it said).

use std::collections::BTreeMap;

use crate::inventory::{Inventory, InventoryError, Node, PushRecord};
use crate::plan;
use crate::push::{self, Job, NodeResult};
use crate::resolve::provisions::Withdrawn;
use crate::resolve::{self, Composed};
use crate::wire::Declaration;

use super::run::{PushOptions, Said, Summary, Watch};
use super::{DeployError, fan_out, job};

/// Why a node whose push would move containers' data (`moves`) is held.
pub fn moves_reason(moves: &[plan::Move]) -> String {
    let each: Vec<String> = moves
        .iter()
        .map(|m| {
            format!(
                "{} ({}) container {}: the mount at {} would move from {} to {}",
                m.instance, m.module, m.container, m.target, m.from, m.to
            )
        })
        .collect();
    let mut instances: Vec<&str> = moves.iter().map(|m| m.instance.as_str()).collect();
    instances.dedup();
    format!(
        "{}; the container would run on the new directory, not with the data in the old one. \
         Move the data if it should follow, then push with {} to send it",
        each.join("; "),
        instances
            .iter()
            .map(|i| format!("--move {i}"))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// A node's push in flight: its row, the digest of what is sent, and what is sent.
type Flight = (i64, String, Declaration);

/// The consumers whose provisions each node's declaration takes away, by node.
type WithdrawnBy = BTreeMap<String, Vec<Withdrawn>>;

/// Pushes one wave's nodes in parallel, recording each.
pub(super) fn push_wave(
    inv: &mut Inventory,
    a: &PushOptions,
    watch: &dyn Watch,
    started: &str,
    composed: Vec<(Node, Composed)>,
    rollbacks: Option<&BTreeMap<String, u64>>,
    out: &mut Summary,
) -> Result<(), DeployError> {
    let (mut jobs, withdrawn) = jobs_of(inv, a, watch, started, composed, out)?;
    let flights = begin(inv, started, &mut jobs, rollbacks)?;
    let unrecorded = &mut out.unrecorded;
    let heard = note_confirming(inv.path().to_path_buf());
    let all = inv.nodes()?;
    let progress = |nodes: &[String]| watch.progress(nodes);
    let results = fan_out(&all, jobs, &a.push, progress, heard, |r| {
        if let Some(flight) = flights.get(&r.node) {
            let gone = withdrawn.get(&r.node).map(Vec::as_slice).unwrap_or(&[]);
            if let Err(e) = record(inv, started, flight, gone, r) {
                unrecorded.push((r.node.clone(), e));
            }
        }
        watch.finished(r)
    })?;
    out.results.extend(results);
    Ok(())
}

/// Each composed node made into a job, with the consumers whose provisions it withdraws; a node
/// whose push would move a running container's data is held (recorded and said), unless told
/// `--move`.
fn jobs_of(
    inv: &mut Inventory,
    a: &PushOptions,
    watch: &dyn Watch,
    started: &str,
    composed: Vec<(Node, Composed)>,
    out: &mut Summary,
) -> Result<(Vec<Job>, WithdrawnBy), DeployError> {
    let mut held: Vec<(String, Vec<plan::Move>)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut withdrawn = WithdrawnBy::new();
    for (node, c) in composed {
        for h in &c.held {
            watch.said(Said::Kept {
                node: &node.name,
                held: h,
            });
            out.kept.push((node.name.clone(), h.clone()));
        }
        let declaration = c.declaration;
        withdrawn.insert(node.name.clone(), c.withdrawn);
        let confirmed = inv.confirmed(&node.name)?;
        let unacknowledged: Vec<plan::Move> = plan::moves(&declaration, confirmed.as_ref())
            .into_iter()
            .filter(|m| !a.moves.contains(&m.instance))
            .collect();
        if unacknowledged.is_empty() {
            jobs.push(job_for(inv, a, watch, node, declaration)?);
        } else {
            held.push((node.name, unacknowledged));
        }
    }
    for (node, moves) in &held {
        inv.record_push(&PushRecord {
            node: node.clone(),
            started_at: started.to_string(),
            digest: String::new(),
            outcome: "held".into(),
            reason: Some(moves_reason(moves)),
            report: None,
        })?;
        watch.said(Said::Moves { node, moves });
    }
    out.held.extend(held);
    Ok((jobs, withdrawn))
}

/// `node`'s job: `--overwrite` said, and a confirmation window where a change or a removal can
/// cut the operator off.
fn job_for(
    inv: &Inventory,
    a: &PushOptions,
    watch: &dyn Watch,
    node: Node,
    declaration: Declaration,
) -> Result<Job, DeployError> {
    let mut job = job(inv, node, declaration)?;
    if a.overwrite {
        watch.said(Said::Overwrite(push::overwrite(&mut job.declaration)));
    }
    // a removal that can cut the operator off waits as long as a change does
    if job.declaration.resources.iter().any(|r| r.confirm)
        || !job.declaration.confirm_removals.is_empty()
    {
        job.declaration.confirm_within = Some(a.confirm_timeout.max(1));
    }
    Ok(job)
}

/// Every job's push recorded in flight before anything is sent (a push cut short is never
/// forgotten), each told its nonce, a rollback's noted as one: each node's flight.
fn begin(
    inv: &mut Inventory,
    started: &str,
    jobs: &mut [Job],
    rollbacks: Option<&BTreeMap<String, u64>>,
) -> Result<BTreeMap<String, Flight>, DeployError> {
    let digests: Vec<String> = jobs
        .iter()
        .map(|j| resolve::declaration_digest(&j.declaration))
        .collect();
    let ids = inv.begin_pushes(
        started,
        &jobs
            .iter()
            .zip(&digests)
            .map(|(j, d)| (j.node.name.as_str(), d.as_str()))
            .collect::<Vec<_>>(),
    )?;
    // each push says its nonce, which the generation it makes carries
    for (j, id) in jobs.iter_mut().zip(&ids) {
        let nonce = inv.push_nonce(*id)?;
        if let Some(planned) = j.declaration.planned.as_mut() {
            planned.push = nonce;
        }
        // a rollback's push is noted as one before it is sent: a check after it was cut short
        // reconciles against the generation it sent, not the inventory's declaration
        if let Some(generation) = rollbacks.and_then(|r| r.get(&j.node.name)) {
            inv.note_rollback_push(*id, *generation)?;
        }
    }
    Ok(jobs
        .iter()
        .zip(ids)
        .zip(digests)
        .map(|((j, id), digest)| (j.node.name.clone(), (id, digest, j.declaration.clone())))
        .collect())
}

/// Records what node `r` answered to its push (`flight`): applied, reverted, failed, left
/// unconfirmed or pending confirmation; once applied, the consumers whose provisions it took
/// away (`withdrawn`) are forgotten, with their secrets.
fn record(
    inv: &mut Inventory,
    started: &str,
    (id, digest, sent): &Flight,
    withdrawn: &[Withdrawn],
    r: &NodeResult,
) -> Result<(), InventoryError> {
    let (record, answered) = match &r.result {
        // reverted on the machine: what it has is what it had, the inventory keeps what it
        // confirmed before, and the plan shows the change still pending
        Ok(answer) if answer.reverted() => (
            PushRecord {
                outcome: "reverted".into(),
                reason: answer.confirmation.as_ref().map(push::Confirmation::said),
                ..PushRecord::answered(&r.node, started, digest, &answer.report)
            },
            None,
        ),
        Ok(answer) => (
            PushRecord::answered(&r.node, started, digest, &answer.report),
            Some(sent),
        ),
        Err(e) => (
            PushRecord {
                node: r.node.clone(),
                started_at: started.to_string(),
                digest: digest.clone(),
                outcome: "failed".into(),
                reason: Some(e.to_string()),
                report: None,
            },
            None,
        ),
    };
    let applied = answered.is_some() && record.outcome == "applied";
    let unknown = r.result.as_ref().ok().filter(|a| a.unknown());
    match (unknown.and_then(|a| a.confirmation.as_ref()), &r.result) {
        // whether the change stayed is not known: the push stays unconfirmed, and the next
        // push or check asks the machine
        (Some(c), _) => inv.leave_in_flight(*id, &c.said()),
        // an earlier change is pending on the machine: so is this node, until it says
        (_, Err(push::PushError::Awaiting { id: change, .. })) => inv.note_pending(&r.node, change),
        _ => inv.finish_push(*id, &record, answered),
    }?;
    // the machine has taken these consumers' provisions away: their secrets go too
    if applied {
        for w in withdrawn {
            w.forget(inv, &r.node)?;
        }
    }
    Ok(())
}

/// Notes, in the inventory at `path` (on a connection of its own, the moment the helper says
/// so), each change left awaiting confirmation: an operator killed while it confirms leaves the
/// node pending confirmation, and `plan` says it.
fn note_confirming(path: std::path::PathBuf) -> impl Fn(&push::Event) + Send + Sync + 'static {
    move |event: &push::Event| {
        if let push::Event::Confirming(node, id) = event {
            let _ = Inventory::open(&path).and_then(|mut i| i.note_pending(node, id));
        }
    }
}
