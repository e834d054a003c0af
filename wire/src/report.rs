//! What the helper answers: one outcome per resource, what it found, and how a change ended.

use serde::{Deserialize, Serialize};

use crate::*;

/// What undeclaring a resource does. On a declared resource's outcome: what undeclaring it would
/// do, as the helper's record says after this run, read by the plan so it can name every unit an
/// undeclare will stop, reload or restart and every path it will delete or restore. On a removed
/// resource's outcome: what this run did (or, in a dry run, would do), every condition settled.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Undo {
    /// Units it would stop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stops: Vec<String>,
    /// What stopping each of `stops` runs on the machine (its `ExecStop=` and `ExecStopPost=`
    /// command lines, as systemd shows them), by unit: a package's stop may undo more than the
    /// mesh did.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub stop_runs: std::collections::BTreeMap<String, Vec<String>>,
    /// Units the mesh started that it leaves running, as the module says
    /// ([`OnRemoval::LeaveRunning`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leaves_running: Vec<String>,
    /// Paths it would delete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletes: Vec<String>,
    /// Paths it would delete only if nothing else is in them then (a directory the mesh made, a
    /// shared file the mesh made): what they hold is known only on the machine, at that moment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletes_if_empty: Vec<String>,
    /// Paths it kept because something else is in them (a settled `deletes_if_empty`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keeps: Vec<String>,
    /// Paths it would put back from a kept original.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restores: Vec<String>,
    /// Directories the mesh did not make whose owner and mode it would give back as the host had
    /// them, each with them: `/srv/data (root:root 0755)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<String>,
    /// Units that read what it gives back and reload for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reloads: Vec<String>,
    /// Units that read what it gives back and restart for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<String>,
}

impl Undo {
    /// Settles every `deletes_if_empty`: deleted if `gone` says the run removed it, else kept if
    /// `there` says it is still on the machine (else it was gone already: nothing was done).
    pub fn settle(&mut self, gone: impl Fn(&str) -> bool, there: impl Fn(&str) -> bool) {
        for path in std::mem::take(&mut self.deletes_if_empty) {
            if gone(&path) {
                self.deletes.push(path);
            } else if there(&path) {
                self.keeps.push(path);
            }
        }
    }
}

/// How the helper was asked to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Change the machine.
    Apply,
    /// Only say what would change.
    DryRun,
    /// Take the machine as it is now, for a machine whose record was lost: build a fresh record
    /// from the declaration and what is found, change nothing else, and say what cannot be given
    /// back (`mesh node adopt`).
    Adopt,
}

/// The helper's answer: one outcome per resource, declared or undeclared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// [`VERSION`] of the helper.
    pub version: u32,
    /// Whether anything was changed, or only looked at.
    pub mode: Mode,
    /// The machine's hostname, as it says it.
    pub hostname: String,
    /// The machine's SSH host public keys (`TYPE BASE64`, from `/etc/ssh/ssh_host_*_key.pub`):
    /// a node whose pinned key is none of them is another machine at that address (rebuilt).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_keys: Vec<String>,
    /// The machine had no record and no signs of the mesh, and the operator knew of no record
    /// there: it is new, and what the inventory had confirmed of it before is not on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub new_machine: bool,
    /// One entry per resource, in the order handled.
    pub resources: Vec<Outcome>,
    /// Units reloaded or restarted because files they read changed.
    #[serde(default)]
    pub units: Vec<UnitOutcome>,
    /// In an adopt run: what the helper took, kept and could not give back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adoption: Option<Adoption>,
    /// The change waits for the operator's confirmation over a new connection, else it is
    /// reverted by the helper itself at the deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    /// Earlier pushes the helper reverted because no confirmation came in time (said once, by
    /// the next apply; a dry run says them too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverted: Vec<Reverted>,
    /// In a dry run: the id of an earlier push's change that still awaits confirmation on the
    /// machine (its operator may be gone). What the machine has is not settled until it is
    /// confirmed or reverted, so nothing of this run may be taken as confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    /// The node's generation on the machine after this run (in a dry run: as it is); `None`:
    /// a helper from before generations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<Generation>,
    /// What the machine says it is, gathered on this run; `None`: a helper from before facts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<crate::Facts>,
    /// The helper's own time on each step of its run, in order (reading the declaration, the
    /// lock, its record, the units' state, the resources, writing the record, the facts …),
    /// for `-v`; empty: a helper from before step timings, or a run that was not timed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepTime>,
    /// The generation this run made could not be kept on the machine (its disk full, its
    /// state directory unwritable), and why: the change is applied, but `mesh-host rollback`
    /// cannot go back to it. `None`: kept, or none made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_not_kept: Option<String>,
}

/// One step of the helper's run and its own time on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepTime {
    /// The step, in a few words an operator reads ("lock", "record read").
    pub step: String,
    /// Its time, in microseconds.
    pub micros: u64,
}

/// A change waiting to be confirmed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Awaiting {
    /// Names the change (lower-case hex): `mesh-host confirm <id>` confirms it.
    pub id: String,
    /// Seconds from the apply's end after which the helper reverts it.
    pub deadline: u64,
    /// The resources that asked for the confirmation.
    pub resources: Vec<String>,
}

impl Awaiting {
    /// Whether `id` can name a change: lower-case hex only, so it goes into a unit name and a
    /// command line as it is.
    pub fn valid_id(id: &str) -> bool {
        !id.is_empty()
            && id.len() <= 32
            && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }
}

/// A change the helper reverted because it was not confirmed in time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reverted {
    pub id: String,
    /// Seconds since the epoch when it was put back.
    pub at: u64,
    /// What was put back, in words (each names a path or unit).
    pub restored: Vec<String>,
    /// What could not be put back, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// What an adopt run found: the losses an operator must know of, and what it kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adoption {
    /// The machine had a readable record: nothing was adopted, nothing changed.
    #[serde(default)]
    pub had_record: bool,
    /// The machine had no record and no signs of the mesh, and the operator knew of none: it is
    /// new, and what it has is its own. Nothing was taken; the next push keeps each thing it
    /// replaces as its original, as on any new machine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub new_machine: bool,
    /// What undeclaring can no longer give back as the host had it, in words.
    #[serde(default)]
    pub cannot_give_back: Vec<String>,
    /// Kept originals that match nothing declared, and a record that could not be read: kept on
    /// the machine (never deleted), by path.
    #[serde(default)]
    pub kept: Vec<String>,
}

impl Report {
    /// Whether any resource or unit failed.
    pub fn failed(&self) -> bool {
        self.resources.iter().any(|r| r.state == State::Failed)
            || self.units.iter().any(|u| u.error.is_some())
    }

    /// Whether anything changed (or, in a dry run, would).
    pub fn changed(&self) -> bool {
        self.resources.iter().any(|r| r.state != State::Unchanged) || !self.units.is_empty()
    }
}

/// What happened to one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The resource's id.
    pub id: String,
    /// What happened.
    pub state: State,
    /// In words an operator reads: what was done or why it failed.
    pub detail: String,
    /// What undeclaring it would do, after this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<Undo>,
    /// In a dry run, each file of it that would change and holds no secret: what the machine
    /// has and what a push would write, for `check --diff`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<Seen>,
    /// The helper's own time on it, in microseconds (looking, writing, the commands it ran;
    /// not the units it reloaded or restarted at the end of the run), for `-v`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub micros: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A file as the machine has it and as a push would write it. Either text is at most
/// [`Seen::MAX`] bytes; a longer file, or one that is not text, is not sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// The file's path on the machine.
    pub path: String,
    /// What it holds now; `None`: it is missing.
    pub found: Option<String>,
    /// What a push would write.
    pub declared: String,
}

impl Seen {
    /// The largest text sent either way.
    pub const MAX: usize = 64 * 1024;

    /// The pair, if both are text of at most [`Seen::MAX`] bytes.
    pub fn of(path: &str, found: Option<&[u8]>, declared: &[u8]) -> Option<Seen> {
        let text = |b: &[u8]| {
            (b.len() <= Seen::MAX)
                .then(|| String::from_utf8(b.to_vec()).ok())
                .flatten()
        };
        let found = match found {
            Some(b) => Some(text(b)?),
            None => None,
        };
        Some(Seen {
            path: path.to_string(),
            found,
            declared: text(declared)?,
        })
    }
}

/// The states a resource can end a run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// It was not there; the mesh made it.
    Created,
    /// It was there and differed; the mesh changed it.
    Changed,
    /// It was already as declared; nothing was touched.
    Unchanged,
    /// No longer declared; the mesh undid it (removed what it made, gave back what it replaced).
    Removed,
    /// It could not be applied; `detail` says why.
    Failed,
}

impl State {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Created => "created",
            State::Changed => "changed",
            State::Unchanged => "unchanged",
            State::Removed => "removed",
            State::Failed => "failed",
        }
    }
}

/// A unit that paid the cost of a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitOutcome {
    /// The systemd unit.
    pub unit: String,
    /// What was (or would be) done to it.
    pub action: Cost,
    /// The resources whose change caused it.
    pub because: Vec<String>,
    /// What was done, in words ("restarted", or "not running: it reads the change when it
    /// starts").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// Why it failed, if it did; the cost stays owed for the next run.
    pub error: Option<String>,
}
