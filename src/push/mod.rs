//! Pushing: every node in parallel (bounded), one SSH connection each, the helper uploaded only
//! when the machine lacks this version of it, the declaration sent on its stdin, its report read
//! back. One node failing never stops the others; each comes back with its own outcome.
//!
//! This layer does no I/O on the inventory and prints nothing: it takes jobs and hands results
//! and progress events back, so the CLI decides how they look and what is recorded.

pub mod confirm;
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
use crate::ssh::SshError;
use crate::wire::{
    Declaration, EXIT_AWAITING, EXIT_HELPER_MISSING, EXIT_RECORD_LOST, EXIT_RECORD_UNREADABLE,
    EXIT_STALE, EXIT_WRONG_PLATFORM, Mode, RecordRefusal, Report, Stale,
};
pub use confirm::Confirmation;
pub use helper::Helper;
pub use route::Reach;
pub use stale::overwrite;
pub use transport::{Call, Inventoried, Links, Session, Transport};

/// Why one node's push failed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error(transparent)]
    Ssh(#[from] SshError),
    #[error("{node}: the machine is {machine}; mesh carries a helper only for Linux/x86_64")]
    Platform { node: String, machine: String },
    #[error("{node}: storing the helper at {path} failed (exit {status}): {stderr}")]
    Upload {
        node: String,
        path: String,
        status: String,
        stderr: String,
    },
    #[error("{node}: the helper failed (exit {status}): {stderr}")]
    Helper {
        node: String,
        status: String,
        stderr: String,
    },
    #[error("{node}: refused, nothing on the machine was changed: {refusal}; {fix}", fix = record_fix(node, refusal))]
    Record {
        node: String,
        refusal: RecordRefusal,
    },
    /// The machine is at a newer generation than the one this inventory planned against
    /// (another inventory pushed since): it refused before changing anything.
    #[error(
        "{node}: refused (stale), nothing on the machine was changed: {stale}; `mesh check \
         {node}` records what the machine has and shows what a push would replace, then push \
         again (or `mesh push {node} --overwrite` to replace it without looking)"
    )]
    Stale { node: String, stale: Box<Stale> },
    /// A node on this machine (`node add --local`) whose root or helper cannot be used.
    #[error("{node}: on this machine: {reason}")]
    Local { node: String, reason: String },
    #[error("{node}: the helper's report cannot be read: {reason}")]
    Report { node: String, reason: String },
    /// The machine's record says a generation no push makes (edited by hand): its answer is
    /// not taken, or the inventory would plan against a number it cannot keep.
    #[error(
        "{node}: the machine's record says it is at generation {number}, a number no push makes \
         or can follow (the highest is {max}; edited by hand?): its answer is not recorded. On the machine, set \
         the generation's `number` in /var/lib/mesh/record.json back to a real one (`mesh-host \
         generations` lists those it keeps), then `mesh check {node}`",
        max = crate::wire::MAX_GENERATION
    )]
    ImpossibleGeneration { node: String, number: u64 },
    /// Another helper holds the machine's lock (a push still applying, perhaps one whose
    /// operator was killed, or `mesh-host rollback` at its console): this run read and changed
    /// nothing, so nothing of it is recorded.
    #[error(
        "{node}: another mesh-host is applying on the machine (a push still running there, perhaps \
         one whose operator was killed, or `mesh-host rollback` at its console); {then}",
        then = busy_fix(node, *mode)
    )]
    Busy { node: String, mode: Mode },
    #[error(
        "{node}: did not finish within {seconds} s (--timeout) while {step}; {after}; push again \
         once the cause is fixed",
        after = after_timeout(step)
    )]
    Timeout {
        node: String,
        seconds: u64,
        step: &'static str,
    },
    #[error(
        "{node}: {id} is a secret file, sent only sealed to the node's ssh-ed25519 host key, and {node} has no such key pinned: pin it with `mesh node trust {node}`; nothing was sent"
    )]
    Unsealed { node: String, id: String },
    #[error(
        "{node}: the pinned host key in the inventory cannot be read: {reason}; pin it again with `mesh node trust {node}`"
    )]
    PinnedKey { node: String, reason: String },
    /// A change an earlier push made awaits confirmation on the machine: nothing was applied.
    #[error(
        "{node}: change {id} awaits confirmation on the machine (pending confirmation), so \
         nothing was applied; push again once it is confirmed or reverted, at its deadline"
    )]
    Awaiting { node: String, id: String },
    /// Composed again after an earlier wave of the same push (its provider confirmed, so an
    /// assignment that waited now takes part) and refused then: nothing was sent to it.
    #[error("{node}: refused after its providers were pushed, nothing was sent to it: {problems}")]
    Refused { node: String, problems: String },
    /// Its declaration could not be composed (a module missing from the catalogue or broken, a
    /// requirement unanswered): nothing was sent to it, so nothing on it changed, and the other
    /// nodes went ahead.
    #[error("{node}: refused, nothing was sent to it, the other nodes go ahead: {problems}")]
    Unresolved { node: String, problems: String },
}

/// What an operator does about a machine another helper is applying on.
fn busy_fix(node: &str, mode: Mode) -> String {
    match mode {
        Mode::DryRun => format!(
            "nothing was read and nothing is recorded (a half-done apply is not what the machine \
             has): `mesh check {node}` again once it is done"
        ),
        Mode::Apply | Mode::Adopt => format!(
            "nothing was changed: `mesh check {node}` once it is done shows what it left, then \
             push again"
        ),
    }
}

/// What an overrun left on the machine: only while applying did a helper run there.
fn after_timeout(step: &str) -> &'static str {
    if step == Event::Applying(String::new()).step() {
        "on the machine the helper ends the step it was running and lets go of its lock"
    } else {
        "no helper ran on the machine, so nothing was applied there"
    }
}

impl PushError {
    /// A short word for the kind of failure, for summaries and `--json`.
    pub fn kind(&self) -> &'static str {
        match self {
            PushError::Ssh(e) => e.kind(),
            PushError::Local { .. } => "local",
            PushError::PinnedKey { .. } | PushError::Unsealed { .. } => "host-key",
            PushError::Platform { .. } => "platform",
            PushError::Timeout { .. } => "timeout",
            PushError::Record { .. } | PushError::ImpossibleGeneration { .. } => "record",
            PushError::Stale { .. } => "stale",
            PushError::Busy { .. } => "busy",
            PushError::Refused { .. } | PushError::Unresolved { .. } => "refused",
            PushError::Upload { .. }
            | PushError::Helper { .. }
            | PushError::Report { .. }
            | PushError::Awaiting { .. } => "helper",
        }
    }
}

/// Refuses a generation the machine's record says that no push makes (see
/// [`crate::wire::MAX_GENERATION`]).
fn impossible(node: &str, generation: Option<&crate::wire::Generation>) -> Result<(), PushError> {
    match generation {
        Some(g) if !crate::wire::Generation::possible(g.number) => {
            Err(PushError::ImpossibleGeneration {
                node: node.to_string(),
                number: g.number,
            })
        }
        _ => Ok(()),
    }
}

/// The helper's exit when another holds the machine's lock.
const EXIT_BUSY: u32 = crate::wire::HelperExit::Busy.status() as u32;

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
    /// The helper answered (node, each resource's id and the helper's own time on it).
    Answered(String, Vec<(String, Duration)>),
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
    let mut out = session.run(helper, call, &input, bound).await?;
    let mut uploaded = false;
    if out.status == Some(EXIT_HELPER_MISSING) {
        events(Event::Uploading(name.clone()));
        upload(session.as_ref(), helper, &name).await?;
        uploaded = true;
        events(Event::Applying(name.clone()));
        out = session.run(helper, call, &input, bound).await?;
    }
    session.close().await;
    let report = answer(&name, options.mode, out)?;
    events(Event::Answered(
        name.clone(),
        report
            .resources
            .iter()
            .map(|r| (r.id.clone(), Duration::from_micros(r.micros)))
            .collect(),
    ));
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
    })
}

/// Stores the helper where the session's machine lacks it.
async fn upload(session: &dyn Session, helper: &Helper, name: &str) -> Result<(), PushError> {
    let up = session.upload(helper).await?;
    let stderr = String::from_utf8_lossy(&up.stderr).trim().to_string();
    match up.status {
        Some(0) => Ok(()),
        Some(EXIT_WRONG_PLATFORM) => Err(PushError::Platform {
            node: name.to_string(),
            machine: stderr,
        }),
        status => Err(PushError::Upload {
            node: name.to_string(),
            path: helper.remote_path(),
            status: describe(status),
            stderr,
        }),
    }
}

/// The helper's report, or the failure its exit status and stdout name.
fn answer(name: &str, mode: Mode, out: crate::ssh::Output) -> Result<Report, PushError> {
    let name = name.to_string();
    if let Some(status @ (EXIT_RECORD_LOST | EXIT_RECORD_UNREADABLE)) = out.status {
        return Err(record_refusal(name, status, &out.stdout, &out.stderr));
    }
    if out.status == Some(EXIT_STALE)
        && let Ok(stale) = serde_json::from_slice::<Stale>(&out.stdout)
    {
        if !crate::wire::Generation::followable(stale.machine.number) {
            return Err(PushError::ImpossibleGeneration {
                node: name,
                number: stale.machine.number,
            });
        }
        return Err(PushError::Stale {
            node: name,
            stale: Box::new(stale),
        });
    }
    if out.status == Some(EXIT_BUSY) {
        return Err(PushError::Busy { node: name, mode });
    }
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status == Some(EXIT_AWAITING) && crate::wire::Awaiting::valid_id(&said) {
        return Err(PushError::Awaiting {
            node: name,
            id: said,
        });
    }
    if out.status != Some(0) {
        return Err(PushError::Helper {
            node: name,
            status: describe(out.status),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let report: Report = serde_json::from_slice(&out.stdout).map_err(|e| PushError::Report {
        node: name.clone(),
        reason: e.to_string(),
    })?;
    impossible(&name, report.generation.as_ref())?;
    Ok(report)
}

/// The helper's refusal to touch a machine whose record it cannot trust, as it said it on stdout.
fn record_refusal(node: String, status: u32, stdout: &[u8], stderr: &[u8]) -> PushError {
    match serde_json::from_slice::<RecordRefusal>(stdout) {
        Ok(refusal) => PushError::Record { node, refusal },
        Err(_) => PushError::Helper {
            node,
            status: describe(Some(status)),
            stderr: String::from_utf8_lossy(stderr).trim().to_string(),
        },
    }
}

/// What the operator does about a refusal.
fn record_fix(node: &str, refusal: &RecordRefusal) -> String {
    match refusal {
        RecordRefusal::Lost { .. } => format!(
            "to take the machine as it is now (and hear what cannot be given back), run \
             `mesh node adopt {node}`, then push"
        ),
        RecordRefusal::Unreadable { .. } => format!(
            "`mesh node adopt {node}` sets it aside (kept) and takes the machine as it is now"
        ),
        RecordRefusal::UnknownVersion { .. } => {
            "push with the newer mesh that wrote it; to give up what it knows, move it aside and \
             run `mesh node adopt`"
                .to_string()
        }
    }
}

/// An exit status as the operator reads it: with what it means when it is one the helper
/// gives (`4: another mesh-host is applying on this machine …`).
fn describe(status: Option<u32>) -> String {
    match status {
        None => "none: killed or disconnected".to_string(),
        Some(s) => match crate::wire::HelperExit::of(s) {
            Some(e) if s != 0 => format!("{s}: {}", e.meaning()),
            _ => s.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_helper_exit_is_named_with_what_it_means() {
        let busy = crate::wire::HelperExit::Busy.status();
        assert!(
            describe(Some(u32::from(busy))).starts_with("4: another mesh-host is applying"),
            "{}",
            describe(Some(4))
        );
        assert_eq!(describe(Some(1)), "1");
        assert_eq!(describe(None), "none: killed or disconnected");
    }

    #[test]
    fn a_record_refusal_is_a_typed_failure_that_names_the_fix() {
        let refusal = RecordRefusal::Lost {
            record: "/var/lib/mesh/record.json".into(),
            found: vec!["process bundles in /var/lib/mesh/bundles: web-worker".into()],
        };
        let stdout = serde_json::to_vec(&refusal).unwrap();
        let e = record_refusal("web1".into(), EXIT_RECORD_LOST, &stdout, b"");
        assert_eq!(e.kind(), "record");
        let said = e.to_string();
        for words in [
            "web1: refused, nothing on the machine was changed",
            "record.json is missing",
            "web-worker",
            "`mesh node adopt web1`",
        ] {
            assert!(said.contains(words), "{said}");
        }
        // a helper that said nothing readable is still a failure, with its own words
        let e = record_refusal("web1".into(), EXIT_RECORD_UNREADABLE, b"", b"oops");
        assert!(matches!(e, PushError::Helper { .. }) && e.to_string().contains("oops"));
        // and its exit is named, not left a number
        assert!(
            e.to_string()
                .contains("(exit 21: the machine's record cannot be trusted)"),
            "{e}"
        );
    }

    #[test]
    fn an_overrun_says_a_helper_ends_its_step_only_when_one_ran() {
        let overrun = |step| {
            PushError::Timeout {
                node: "web1".into(),
                seconds: 5,
                step,
            }
            .to_string()
        };
        for step in ["waiting", "connecting", "uploading the helper"] {
            let said = overrun(step);
            assert!(
                said.contains("no helper ran") && !said.contains("the helper ends"),
                "{said}"
            );
        }
        assert!(overrun("applying").contains("the helper ends the step it was running"));
    }
}
