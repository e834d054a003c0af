//! Why one node's push failed: each failure typed, naming the node, and saying what the
//! operator does about it.

use crate::ssh::SshError;
use crate::wire::{Mode, RecordRefusal, Stale};

use super::Event;

/// Why one node's push failed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error(transparent)]
    Ssh(#[from] SshError),
    #[error(
        "{node}: the machine is {machine}; mesh's helper runs on Linux/x86_64 with b2sum \
         (coreutils 8.26 or later), which checks it as it is stored"
    )]
    Platform { node: String, machine: String },
    /// Nothing ran: the launcher stops before the helper when it could not store it.
    #[error(
        "{node}: storing the helper at {path} failed (exit {status}): {stderr}; nothing ran \
         there and nothing on it changed: run the same command again to send it whole (once \
         /var/lib/mesh/bin can be written there: space freed if its disk is full, made writable \
         if it is read-only)"
    )]
    Upload {
        node: String,
        path: String,
        status: String,
        stderr: String,
    },
    /// The helper's run ended with no exit status: the connection (or a jump host's) dropped,
    /// or it was killed. It may have applied: only the machine can say.
    #[error(
        "{node}: the connection was lost before the helper answered (no exit status{}{}); \
         whether it changed the machine is not known here: `mesh check {node}` asks it, and the \
         next push carries on from what the machine has",
        via.as_ref().map(|hop| format!("; through jump host {hop}")).unwrap_or_default(),
        if stderr.is_empty() { String::new() } else { format!("; it said: {stderr}") }
    )]
    Lost {
        node: String,
        /// The jump host the connection went through, if any: the one whose drop may be why.
        via: Option<String>,
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
            | PushError::Lost { .. }
            | PushError::Report { .. }
            | PushError::Awaiting { .. } => "helper",
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
