//! The list of nodes `plan`, `check`, `push`, `rollback` and `node adopt` answer with under
//! `--json`: one entry per node, each saying how that node went (planned, done, refused, held,
//! left alone), with the wave a rollout sends it in.

use std::collections::BTreeMap;

use serde::Serialize;

use super::RefusedNode;
use crate::deploy::rollback_secrets::SecretBack;
use crate::deploy::{RolloutRow, RolloutState};
use crate::inventory::Hold;
use crate::plan::{Action, Change, Plan};
use crate::push::{self, NodeResult};
use crate::wire::{Generation, Known, Mode, Report};

/// One node of the list, and the wave a rollout sends it in (or leaves it in).
#[derive(Debug, Serialize)]
pub(crate) struct Listed<'a> {
    #[serde(flatten)]
    pub(crate) entry: Entry<'a>,
    /// The wave a push of it goes in (`plan`, `push`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) wave: Option<usize>,
    /// The unfinished rollout that left it, and in which wave (`plan`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rollout: Option<LeftIn>,
}

impl<'a> Listed<'a> {
    pub(crate) fn of(entry: impl Into<Entry<'a>>) -> Listed<'a> {
        Listed {
            entry: entry.into(),
            wave: None,
            rollout: None,
        }
    }
}

/// Every way a node of the list can have gone.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Entry<'a> {
    Planned(PlanShown<'a>),
    Done(NodeDone<'a>),
    Refused(RefusedNode<'a>),
    Held(HeldNode<'a>),
    /// Not asked: the reason it failed before anything was sent (a rollback that could not
    /// read the machine).
    NotRead(NotRead<'a>),
    /// A rollback of a past push leaves it alone.
    LeftAlone(LeftAlone<'a>),
}

/// A node's plan: the plan's own keys, a first push's question, each change with what only
/// the answer adds, and what a rollback's dry run adds.
#[derive(Debug, Serialize)]
pub(crate) struct PlanShown<'a> {
    pub(crate) node: &'a str,
    pub(crate) first_send: bool,
    #[serde(skip_serializing_if = "not")]
    pub(crate) unconfirmed: bool,
    #[serde(skip_serializing_if = "not")]
    pub(crate) running: bool,
    #[serde(skip_serializing_if = "not")]
    pub(crate) rekeyed: bool,
    #[serde(skip_serializing_if = "not")]
    pub(crate) new_machine: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pending_confirmation: &'a Option<String>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) held: &'a [crate::resolve::Held],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) facts_moved: &'a [crate::resolve::facts::FactMove],
    pub(crate) changes: Vec<ChangeShown<'a>>,
    pub(crate) units: &'a [crate::plan::UnitChange],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) needs_confirmation: &'a [String],
    /// A node never asked what it has: how to ask it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) never_asked: Option<AskWith>,
    /// `rollback --dry-run`: the generation it would be sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rollback_to: Option<u64>,
    /// `rollback --dry-run`: the secrets it takes back to what that generation had.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) secrets_back: Vec<&'a SecretBack>,
}

fn not(b: &bool) -> bool {
    !b
}

impl<'a> PlanShown<'a> {
    /// `p` as an answer; `diff` is each added or changed resource's diff text, given when asked
    /// (`--diff`). An addition to a node never asked may take over what the machine has.
    pub(crate) fn new(p: &'a Plan, diff: impl Fn(&Change) -> Option<String>) -> PlanShown<'a> {
        let changes = p
            .changes
            .iter()
            .map(|c| ChangeShown {
                change: c,
                or_take_over: (p.first_send && c.action == Action::Added).then_some(true),
                diff: diff(c),
            })
            .collect();
        PlanShown {
            node: &p.node,
            first_send: p.first_send,
            unconfirmed: p.unconfirmed,
            running: p.running,
            rekeyed: p.rekeyed,
            new_machine: p.new_machine,
            pending_confirmation: &p.pending_confirmation,
            held: &p.held,
            facts_moved: &p.facts_moved,
            changes,
            units: &p.units,
            needs_confirmation: &p.needs_confirmation,
            never_asked: (p.first_send && !p.changes.is_empty()).then(|| AskWith {
                ask_with: format!("mesh check {}", p.node),
            }),
            rollback_to: None,
            secrets_back: Vec::new(),
        }
    }
}

/// `{"ask_with": "mesh check NODE"}`.
#[derive(Debug, Serialize)]
pub(crate) struct AskWith {
    pub(crate) ask_with: String,
}

/// One change of a plan, with what the answer adds to it.
#[derive(Debug, Serialize)]
pub(crate) struct ChangeShown<'a> {
    #[serde(flatten)]
    pub(crate) change: &'a Change,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) or_take_over: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) diff: Option<String>,
}

/// A node a push, check, adopt or rollback reached (or failed to).
#[derive(Debug, Serialize)]
pub(crate) struct NodeDone<'a> {
    pub(crate) node: &'a str,
    pub(crate) mode: &'static str,
    pub(crate) outcome: &'static str,
    #[serde(flatten)]
    pub(crate) said: Said<'a>,
    /// A rollback holds it at the generation it was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) held: Option<RollbackHeld>,
}

/// What the helper said, or why there is no answer.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Said<'a> {
    Answered {
        uploaded: bool,
        report: &'a Report,
        #[serde(skip_serializing_if = "Option::is_none")]
        confirmation: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pending_confirmation: Option<&'a str>,
        /// The machine's facts broke their shape and were not kept: which, and why.
        #[serde(skip_serializing_if = "Option::is_none")]
        facts_refused: Option<String>,
    },
    Failed {
        kind: &'static str,
        reason: String,
        /// A stale push: the generation the machine is at.
        #[serde(skip_serializing_if = "Option::is_none")]
        generation: Option<&'a Generation>,
        /// A stale push: the generation it was planned against.
        #[serde(skip_serializing_if = "Option::is_none")]
        planned_against: Option<&'a Option<Known>>,
    },
}

impl<'a> NodeDone<'a> {
    pub(crate) fn new(r: &'a NodeResult, mode: Mode) -> NodeDone<'a> {
        // a dry run says so: nothing was applied
        let (mode, done) = match mode {
            Mode::DryRun => ("dry-run", "checked"),
            Mode::Apply => ("apply", "applied"),
            Mode::Adopt => ("adopt", "adopted"),
        };
        let (outcome, said) = match &r.result {
            Ok(a) => (
                if a.reverted() {
                    "reverted"
                } else if a.failed() {
                    "failed"
                } else {
                    done
                },
                Said::Answered {
                    uploaded: a.uploaded,
                    report: &a.report,
                    confirmation: a.confirmation.as_ref().map(|c| c.said()),
                    pending_confirmation: a.report.pending.as_deref(),
                    facts_refused: a.facts_refused.as_ref().map(ToString::to_string),
                },
            ),
            Err(e) => {
                // which generation the machine is at, and the one this push planned against
                let stale = match e {
                    push::PushError::Stale { stale, .. } => Some(stale),
                    _ => None,
                };
                let failed = Said::Failed {
                    kind: e.kind(),
                    reason: e.to_string(),
                    generation: stale.map(|s| &s.machine),
                    planned_against: stale.map(|s| &s.planned),
                };
                ("failed", failed)
            }
        };
        NodeDone {
            node: &r.node,
            mode,
            outcome,
            said,
            held: None,
        }
    }
}

/// `{"generation", "kind": "rollback"}`: the generation a rollback holds a node at.
#[derive(Debug, Serialize)]
pub(crate) struct RollbackHeld {
    pub(crate) generation: u64,
    pub(crate) kind: &'static str,
}

/// A node held and sent nothing: `outcome` is `held`, and the rest says why.
#[derive(Debug, Serialize)]
pub(crate) struct HeldNode<'a> {
    pub(crate) node: &'a str,
    pub(crate) outcome: &'static str,
    #[serde(flatten)]
    pub(crate) why: HeldWhy<'a>,
}

/// Why a node was held.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum HeldWhy<'a> {
    /// A rollback holds it at a generation (`differs`: how the inventory's declaration differs
    /// from it, in a plan).
    Rollback {
        kind: &'static str,
        held: HeldSince<'a>,
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        differs: Option<&'a [crate::cli::held_at::Differs]>,
    },
    /// A container's data would move.
    Moves {
        moves: &'a [crate::plan::Move],
        reason: String,
    },
    /// An assignment is held back (its provider gone or not ready).
    Assignment {
        assignment: &'a crate::resolve::Held,
    },
    /// The rollout stopped before its wave, or a provider of it did not answer ready.
    Rollout {
        kind: &'static str,
        wave: usize,
        reason: String,
    },
}

/// `{"generation", "since"}` of a rollback's hold.
#[derive(Debug, Serialize)]
pub(crate) struct HeldSince<'a> {
    pub(crate) generation: u64,
    pub(crate) since: &'a str,
}

impl<'a> HeldNode<'a> {
    fn held(node: &'a str, why: HeldWhy<'a>) -> HeldNode<'a> {
        HeldNode {
            node,
            outcome: "held",
            why,
        }
    }

    /// Held at a generation by a rollback; `differs`: what `plan` found.
    pub(crate) fn rollback(
        h: &'a Hold,
        differs: Option<&'a [crate::cli::held_at::Differs]>,
    ) -> HeldNode<'a> {
        let why = HeldWhy::Rollback {
            kind: "rollback",
            held: HeldSince {
                generation: h.generation,
                since: &h.since,
            },
            reason: crate::cli::held_at::line(h),
            differs,
        };
        HeldNode::held(&h.node, why)
    }

    /// Held because a container's data would move.
    pub(crate) fn moves(node: &'a str, moves: &'a [crate::plan::Move]) -> HeldNode<'a> {
        let reason = crate::deploy::moves_reason(moves);
        HeldNode::held(node, HeldWhy::Moves { moves, reason })
    }

    /// Held with an assignment of it held back.
    pub(crate) fn assignment(node: &'a str, assignment: &'a crate::resolve::Held) -> HeldNode<'a> {
        HeldNode::held(node, HeldWhy::Assignment { assignment })
    }

    /// Held because the rollout stopped (`by` says what stopped it) before its wave.
    pub(crate) fn stopped(node: &'a str, wave: usize, by: &str) -> HeldNode<'a> {
        let why = HeldWhy::Rollout {
            kind: "rollout-stopped",
            wave,
            reason: crate::deploy::rollout::stopped_reason(by),
        };
        HeldNode::held(node, why)
    }

    /// Held because a provider of it did not answer ready.
    pub(crate) fn waiting(node: &'a str, wave: usize, why: &str) -> HeldNode<'a> {
        let why = HeldWhy::Rollout {
            kind: "provider-not-ready",
            wave,
            reason: why.to_string(),
        };
        HeldNode::held(node, why)
    }
}

/// A node a rollback did not send anything: what its machine has could not be read.
#[derive(Debug, Serialize)]
pub(crate) struct NotRead<'a> {
    pub(crate) node: &'a str,
    pub(crate) outcome: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) reason: String,
}

/// A node a rollback of a past push leaves alone, and why.
#[derive(Debug, Serialize)]
pub(crate) struct LeftAlone<'a> {
    pub(crate) node: &'a str,
    pub(crate) outcome: &'static str,
    pub(crate) push: i64,
    pub(crate) reason: &'a str,
}

/// `{"left": true, "wave", "state"}`: an unfinished rollout left the node in this wave.
#[derive(Debug, Serialize)]
pub(crate) struct LeftIn {
    pub(crate) left: bool,
    pub(crate) wave: usize,
    pub(crate) state: RolloutState,
}

/// Gives each entry of `list` the wave `waves` puts its node in; a held entry that names its
/// wave already takes the map's.
pub(crate) fn with_waves(list: &mut [Listed<'_>], waves: &BTreeMap<String, usize>) {
    for l in list {
        let Some(wave) = waves.get(l.entry.node()).copied() else {
            continue;
        };
        match &mut l.entry {
            Entry::Held(HeldNode {
                why: HeldWhy::Rollout { wave: own, .. },
                ..
            }) => *own = wave,
            _ => l.wave = Some(wave),
        }
    }
}

/// Marks the entries whose nodes the unfinished rollout `r` left, with their waves.
pub(crate) fn with_left(list: &mut [Listed<'_>], r: &RolloutRow) {
    let left: BTreeMap<&str, usize> = r.left().iter().map(|n| (n.node.as_str(), n.wave)).collect();
    for l in list {
        if let Some(wave) = left.get(l.entry.node()).copied() {
            l.rollout = Some(LeftIn {
                left: true,
                wave,
                state: r.state,
            });
        }
    }
}

impl Entry<'_> {
    /// The node the entry is about.
    pub(crate) fn node(&self) -> &str {
        match self {
            Entry::Planned(p) => p.node,
            Entry::Done(d) => d.node,
            Entry::Refused(r) => r.node,
            Entry::Held(h) => h.node,
            Entry::NotRead(n) => n.node,
            Entry::LeftAlone(l) => l.node,
        }
    }
}

impl<'a> From<PlanShown<'a>> for Entry<'a> {
    fn from(p: PlanShown<'a>) -> Self {
        Entry::Planned(p)
    }
}

impl<'a> From<NodeDone<'a>> for Entry<'a> {
    fn from(d: NodeDone<'a>) -> Self {
        Entry::Done(d)
    }
}

impl<'a> From<RefusedNode<'a>> for Entry<'a> {
    fn from(r: RefusedNode<'a>) -> Self {
        Entry::Refused(r)
    }
}

impl<'a> From<HeldNode<'a>> for Entry<'a> {
    fn from(h: HeldNode<'a>) -> Self {
        Entry::Held(h)
    }
}

impl<'a> From<NotRead<'a>> for Entry<'a> {
    fn from(n: NotRead<'a>) -> Self {
        Entry::NotRead(n)
    }
}

impl<'a> From<LeftAlone<'a>> for Entry<'a> {
    fn from(l: LeftAlone<'a>) -> Self {
        Entry::LeftAlone(l)
    }
}

/// Each plan as `plan` and `rollback --dry-run` list them; with `diff`, each added or changed
/// resource carries its diff text.
pub(crate) fn planned(plans: &[Plan], diff: bool) -> Vec<Listed<'_>> {
    let diff = |c: &Change| {
        diff.then(|| crate::cli::render::change_diff(c, false))
            .flatten()
    };
    plans
        .iter()
        .map(|p| Listed::of(PlanShown::new(p, diff)))
        .collect()
}

/// Every node's result as `check`, `push` and `adopt` list them.
pub(crate) fn results(results: &[NodeResult], mode: Mode) -> Vec<Listed<'_>> {
    results
        .iter()
        .map(|r| Listed::of(NodeDone::new(r, mode)))
        .collect()
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
