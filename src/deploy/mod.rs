//! The deploy layer: a rollout of many nodes, below the CLI and above push, plan, resolve and
//! inventory. It groups the nodes into waves from what each node's change costs
//! ([`waves`], [`cost`]), keeps the failure budget and stops the rollout when it is spent
//! ([`rollout`]), and records the rollout as it goes so that `push --resume` continues it. Its
//! outcomes are enums ([`NodeOutcome`], [`RolloutState`]) serialised for JSON and stored in the
//! inventory; the CLI only maps flags to [`Options`] and a summary to text and an exit code.

pub mod budget;
pub mod cost;
pub mod fan_out;
pub mod rollback;
pub mod rollback_plan;
pub mod rollback_secrets;
pub mod rollout;
#[cfg(test)]
mod rollout_tests;
pub mod run;
mod send;
pub mod waves;

pub use crate::catalogue::rollout::MaxUnavailable;
pub use crate::inventory::rollouts::{NodeOutcome, RolloutNode, RolloutRow, RolloutState};
pub use budget::FailureBudget;
pub use cost::{node_cost, node_cost_of, plan_waves};
pub use fan_out::{Progress, fan_out, job};
pub use rollout::{Rollout, Step};
pub use run::{Given, PushOptions, Said, Summary, Watch, push, refused};
pub use send::moves_reason;
pub use waves::{NodeCost, Wave, group, wave_map};

/// How one push rolls out.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Nodes pushed alone first; one that fails stops the rollout whatever the budget.
    pub canary: usize,
    /// Overrides every module's `"rollout": {"max-unavailable"}` for this push.
    pub max_unavailable: Option<MaxUnavailable>,
    /// Nodes that may fail before no further wave starts.
    pub max_failed: FailureBudget,
}

/// What can stop a rollout from being planned or resumed.
#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error(transparent)]
    Inventory(#[from] crate::inventory::InventoryError),
    #[error(transparent)]
    Resolve(#[from] crate::resolve::ResolveError),
    #[error(
        "there is no rollout to resume: the last one {}; `mesh push NODES` starts one",
        match .0 { Some(at) => format!("(started {at}) finished every wave"), None => "was never started".to_string() }
    )]
    NothingToResume(Option<String>),
    #[error(
        "{} not among the nodes the last rollout has left to send ({}): `mesh push --resume` \
         sends only its own nodes; `mesh push NODES` starts a new rollout",
        .0.join(", "),
        if .1.is_empty() { "none".to_string() } else { .1.join(", ") }
    )]
    NotInRollout(Vec<String>, Vec<String>),
    #[error(
        "the rollout planned other declarations for {} than today's (a setting, module or \
         assignment changed since it began): `mesh push --resume` sends only what it planned; \
         `mesh push {}` starts a new rollout with today's, canary and waves planned again",
        .0.join(", "),
        .0.join(" ")
    )]
    ResumeChanged(Vec<String>),
    #[error(transparent)]
    Prepare(#[from] crate::push::transport::PrepareError),
    #[error("cannot start the fan-out's runtime: {0}")]
    Runtime(std::io::Error),
}
