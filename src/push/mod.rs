//! Pushing: every node in parallel (bounded), one SSH connection each, the helper uploaded only
//! when the machine lacks this version of it, the declaration sent on its stdin, its report read
//! back. One node failing never stops the others; each comes back with its own outcome.
//!
//! This layer does no I/O on the inventory and prints nothing: it takes jobs and hands results
//! and progress events back, so the CLI decides how they look and what is recorded.

mod answer;
pub mod confirm;
mod error;
#[cfg(debug_assertions)]
pub mod faulty;
pub mod helper;
pub mod local;
pub mod over_ssh;
pub mod reach;
pub mod route;
mod stale;
pub mod transport;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::inventory::Node;
use crate::wire::{Declaration, EXIT_HELPER_MISSING, Mode, Report};
use answer::{answer, stored};
pub use confirm::Confirmation;
pub use error::PushError;
pub use helper::Helper;
pub use route::Reach;
pub use stale::overwrite;
pub use transport::{Call, Inventoried, Links, Session, Transport};

/// One node's work.
#[derive(Debug, Clone)]
pub struct Job {
    pub node: Node,
    pub declaration: Declaration,
}

/// What the helper said, and whether it had to be uploaded first.
#[derive(Debug, Clone)]
pub struct Answer {
    pub report: Report,
    pub uploaded: bool,
    /// How a change that awaited confirmation ended; `None`: nothing awaited it.
    pub confirmation: Option<Confirmation>,
    /// The machine's facts broke their shape: they were dropped from the report (the facts
    /// known before are kept, and nothing is rendered from these).
    pub facts_refused: Option<crate::wire::FactRefused>,
}

impl Answer {
    /// Whether the node failed: a resource or unit failed, or its change was reverted.
    pub fn failed(&self) -> bool {
        self.report.failed() || self.reverted() || self.unknown()
    }

    /// Whether the machine knew nothing of the change when asked to confirm it: it may or may
    /// not have stayed.
    pub fn unknown(&self) -> bool {
        matches!(self.confirmation, Some(Confirmation::Unknown { .. }))
    }

    /// Whether the change was reverted because no new connection could confirm it.
    pub fn reverted(&self) -> bool {
        matches!(self.confirmation, Some(Confirmation::Reverted { .. }))
    }
}

/// One node's result.
#[derive(Debug)]
pub struct NodeResult {
    pub node: String,
    pub result: Result<Answer, PushError>,
}

/// Progress, for whoever draws it.
#[derive(Debug, Clone)]
pub enum Event {
    Connecting(String),
    Uploading(String),
    Applying(String),
    /// The helper applied a change that awaits confirmation (node, the change's id): the
    /// operator confirms it now.
    Confirming(String, String),
    /// The helper answered (node, its own times).
    Answered(String, Timings),
    Done(String),
}

impl Event {
    /// What the node is doing from this event on, in a few words.
    pub fn step(&self) -> &'static str {
        match self {
            Event::Connecting(_) => "connecting",
            Event::Uploading(_) => "uploading the helper",
            Event::Applying(_) => "applying",
            Event::Confirming(..) => "confirming",
            Event::Answered(..) => "reading the answer",
            Event::Done(_) => "done",
        }
    }
}

/// The times one answer tells, for `-v`.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    /// Each resource's id and the helper's own time on it.
    pub resources: Vec<(String, Duration)>,
    /// Each step of the helper's run, in order, and its own time on it (the resources' step
    /// holds the resources' times); empty from a helper from before step timings.
    pub steps: Vec<(String, Duration)>,
    /// From opening the helper's channel to its whole answer, as this side waited for it: the
    /// helper's run, its start, sshd's session and the channel's round trips.
    pub waited: Duration,
}

/// How to push.
#[derive(Debug, Clone)]
pub struct Options {
    /// The way to the machines, chosen by the caller.
    pub transport: Arc<dyn Transport>,
    /// Nodes in flight at once.
    pub parallel: usize,
    /// Limit for connecting, verifying and authenticating.
    pub connect_timeout: Duration,
    /// Limit for one node's whole run (connecting, uploading, applying), from when its turn
    /// comes.
    pub timeout: Duration,
    /// Apply, or only ask what would change.
    pub mode: Mode,
}

/// Pushes every job. `finished` hears each node's result the moment it is in (so the caller can
/// record and show it then); all results come back in the jobs' order.
pub async fn run(
    jobs: Vec<Job>,
    links: Arc<dyn Links>,
    options: &Options,
    events: Arc<dyn Fn(Event) + Send + Sync>,
    mut finished: impl FnMut(&NodeResult),
) -> Vec<NodeResult> {
    let helper = Arc::new(Helper::embedded());
    let limit = Arc::new(Semaphore::new(options.parallel.max(1)));
    let mut tasks = JoinSet::new();
    let mut names = BTreeMap::new();
    let mut order = Vec::new();
    for job in jobs {
        let (helper, links, limit, events, options) = (
            helper.clone(),
            links.clone(),
            limit.clone(),
            events.clone(),
            options.clone(),
        );
        let node = job.node.name.clone();
        order.push(node.clone());
        let task = tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let node = job.node.name.clone();
            let step = std::sync::Mutex::new("waiting");
            let noted = |event: Event| {
                *step.lock().unwrap_or_else(|p| p.into_inner()) = event.step();
                events(event);
            };
            let bounded = tokio::time::timeout(
                options.timeout,
                push_one(&job, &helper, links.as_ref(), &options, &noted),
            );
            // an overrun drops the connection: the helper hears its operator went away
            let result = bounded.await.unwrap_or_else(|_| {
                Err(PushError::Timeout {
                    node: node.clone(),
                    seconds: options.timeout.as_secs(),
                    step: *step.lock().unwrap_or_else(|p| p.into_inner()),
                })
            });
            events(Event::Done(node.clone()));
            NodeResult { node, result }
        });
        names.insert(task.id(), node);
    }
    let mut results = Vec::new();
    while let Some(joined) = tasks.join_next_with_id().await {
        let r = match joined {
            Ok((_, r)) => r,
            // a panicking task is a bug; it is reported as that node's failure, not everyone's
            Err(e) => {
                let node = names.get(&e.id()).cloned().unwrap_or_default();
                NodeResult {
                    node: node.clone(),
                    result: Err(PushError::Helper {
                        node,
                        status: "-".into(),
                        stderr: format!("internal error: {e}"),
                    }),
                }
            }
        };
        finished(&r);
        results.push(r);
    }
    results.sort_by_key(|r| order.iter().position(|n| *n == r.node));
    results
}

/// What `report` and this side's wait for it say of where the time went.
fn timings(report: &Report, waited: Duration) -> Timings {
    Timings {
        resources: report
            .resources
            .iter()
            .map(|r| (r.id.clone(), Duration::from_micros(r.micros)))
            .collect(),
        steps: report
            .steps
            .iter()
            .map(|s| (s.step.clone(), Duration::from_micros(s.micros)))
            .collect(),
        waited,
    }
}

async fn push_one(
    job: &Job,
    helper: &Helper,
    links: &dyn Links,
    options: &Options,
    events: &(dyn Fn(Event) + Send + Sync),
) -> Result<Answer, PushError> {
    let name = job.node.name.clone();
    if let Some(r) = job.declaration.unsealed_secret() {
        return Err(PushError::Unsealed {
            node: name,
            id: r.id.clone(),
        });
    }
    events(Event::Connecting(name.clone()));
    let session = links
        .open(&job.node, options.connect_timeout, false)
        .await?;
    let input = serde_json::to_vec(&job.declaration).map_err(|e| PushError::Report {
        node: name.clone(),
        reason: e.to_string(),
    })?;
    events(Event::Applying(name.clone()));
    let bound = helper::report_bound(input.len());
    let call = Call::Run(options.mode);
    let mut sent = std::time::Instant::now();
    // A machine the inventory never heard from is sent the helper with its first run, in one
    // round trip; one it knows most likely has it, and is sent it only when it says it lacks it.
    let (out, uploaded) = if job.declaration.expects_record {
        let out = session.run(helper, call, &input, bound).await?;
        if out.status == Some(EXIT_HELPER_MISSING) {
            events(Event::Uploading(name.clone()));
            sent = std::time::Instant::now();
            let ran = session.run_storing(helper, call, &input, bound).await?;
            stored(ran, helper, &name)?
        } else {
            (out, false)
        }
    } else {
        let ran = session.run_storing(helper, call, &input, bound).await?;
        stored(ran, helper, &name)?
    };
    let waited = sent.elapsed();
    let via = session.via().map(str::to_string);
    session.close().await;
    let mut report = answer(&name, via.as_deref(), options.mode, out)?;
    let facts_refused = answer::untrusted_facts(&mut report);
    events(Event::Answered(name.clone(), timings(&report, waited)));
    let confirmation = match &report.awaiting {
        Some(awaiting) => {
            events(Event::Confirming(name.clone(), awaiting.id.clone()));
            let how = confirm::Reconnect {
                links,
                node: &job.node,
                helper,
                connect_timeout: options.connect_timeout,
            };
            Some(confirm::confirm(&how, awaiting).await)
        }
        None => None,
    };
    Ok(Answer {
        report,
        uploaded,
        confirmation,
        facts_refused,
    })
}
