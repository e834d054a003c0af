//! A rollout as it runs: each node's outcome recorded the moment it is known, the failure
//! budget kept after every wave, and the nodes of the waves a stop leaves unsent held.

use serde::Serialize;

use crate::inventory::{Inventory, InventoryError};
use crate::push::{NodeResult, PushError};
use crate::ssh::SshError;

use super::waves::Wave;
use super::{DeployError, FailureBudget, NodeOutcome, RolloutNode, RolloutState};

/// Whether the next wave starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "step", rename_all = "lowercase")]
pub enum Step {
    Continue,
    /// No further wave starts: what stopped it.
    Stop {
        by: String,
    },
}

/// A rollout being pushed.
#[derive(Debug)]
pub struct Rollout {
    pub id: i64,
    pub waves: Vec<Wave>,
    budget: FailureBudget,
    /// Nodes sent something that failed, each with why.
    pub failed: Vec<(String, String)>,
    /// Nodes not reached: counted apart, never against the budget.
    pub unreachable: Vec<String>,
    /// What stopped the rollout, once something did.
    pub stopped: Option<String>,
    /// Resumed for some of its nodes only: the others stay left for the next `--resume`.
    partial: bool,
    /// What the rollout planned to send each node it has left, as [`planned_digest`] says it
    /// (a rollout recorded before this was kept has none).
    planned: std::collections::BTreeMap<String, String>,
}

/// A digest of what `declaration` asks of its machine (its resources and what it holds back),
/// for comparing what a rollout planned with what a resume would send.
pub fn planned_digest(declaration: &crate::wire::Declaration) -> String {
    let d = declaration.without_ciphertext();
    let json = serde_json::to_vec(&(&d.resources, &d.keep)).unwrap_or_default();
    crate::catalogue::digest(&[&json])
}

impl Rollout {
    /// A new rollout of `waves`, recorded before anything is sent.
    /// `planned`: what it plans to send each node ([`planned_digest`]).
    pub fn begin(
        inventory: &mut Inventory,
        started_at: &str,
        waves: Vec<Wave>,
        budget: FailureBudget,
        planned: &std::collections::BTreeMap<String, String>,
    ) -> Result<Rollout, InventoryError> {
        let nodes: Vec<RolloutNode> = waves
            .iter()
            .flat_map(|w| {
                w.nodes.iter().map(|n| RolloutNode {
                    node: n.clone(),
                    wave: w.number,
                    canary: w.canary,
                    outcome: None,
                    planned: planned.get(n).cloned(),
                })
            })
            .collect();
        let id = inventory.begin_rollout(started_at, &nodes)?;
        let mut r = Rollout::new(id, waves, budget);
        r.planned = planned.clone();
        Ok(r)
    }

    /// The last rollout, stopped or cut short, with the nodes it has not applied, in their
    /// waves; it runs again.
    pub fn resume(
        inventory: &mut Inventory,
        budget: FailureBudget,
    ) -> Result<Rollout, DeployError> {
        let last = inventory.last_rollout()?;
        let Some(last) = last.filter(|r| r.state != RolloutState::Done) else {
            return Err(DeployError::NothingToResume(
                inventory.last_rollout()?.map(|r| r.started_at),
            ));
        };
        let mut waves: Vec<Wave> = Vec::new();
        for n in last.left() {
            match waves.last_mut() {
                Some(w) if w.number == n.wave => w.nodes.push(n.node.clone()),
                _ => waves.push(Wave {
                    number: n.wave,
                    canary: n.canary,
                    nodes: vec![n.node.clone()],
                }),
            }
        }
        let planned = last
            .left()
            .into_iter()
            .filter_map(|n| Some((n.node.clone(), n.planned.clone()?)))
            .collect();
        inventory.set_rollout_state(last.id, RolloutState::Running, None)?;
        let mut r = Rollout::new(last.id, waves, budget);
        r.planned = planned;
        Ok(r)
    }

    fn new(id: i64, waves: Vec<Wave>, budget: FailureBudget) -> Rollout {
        Rollout {
            id,
            waves,
            budget,
            failed: Vec::new(),
            unreachable: Vec::new(),
            stopped: None,
            partial: false,
            planned: std::collections::BTreeMap::new(),
        }
    }

    /// Refuses to resume when a node it would send has a declaration other than the one the
    /// rollout planned (a setting, a module or an assignment changed since), naming them: a
    /// resume sends what the rollout planned, the canary's verdict was on that.
    pub fn refuse_changed(
        &self,
        composed: &[(crate::inventory::Node, crate::resolve::Composed)],
    ) -> Result<(), DeployError> {
        let changed: Vec<String> = composed
            .iter()
            .filter(|(n, c)| {
                self.planned
                    .get(&n.name)
                    .is_some_and(|d| *d != planned_digest(&c.declaration))
            })
            .map(|(n, _)| n.name.clone())
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        Err(DeployError::ResumeChanged(changed))
    }

    /// Keeps only `names` of the nodes left (a `--resume` given a selection): each must be one
    /// of them, or the resume is refused naming it. The rollout's other nodes stay left.
    pub fn only(&mut self, names: &[String]) -> Result<(), DeployError> {
        let left: Vec<String> = self.waves.iter().flat_map(|w| w.nodes.clone()).collect();
        let strangers: Vec<String> = names
            .iter()
            .filter(|n| !left.contains(n))
            .cloned()
            .collect();
        if !strangers.is_empty() {
            return Err(DeployError::NotInRollout(strangers, left));
        }
        for w in &mut self.waves {
            w.nodes.retain(|n| names.contains(n));
        }
        self.waves.retain(|w| !w.nodes.is_empty());
        self.partial = names.len() < left.len();
        Ok(())
    }

    /// Every node of the rollout.
    pub fn total(&self) -> usize {
        self.waves.iter().map(|w| w.nodes.len()).sum()
    }

    /// The wave `node` is in.
    pub fn wave_of(&self, node: &str) -> Option<usize> {
        self.waves
            .iter()
            .find(|w| w.nodes.iter().any(|n| n == node))
            .map(|w| w.number)
    }

    /// Records what `node` came to.
    pub fn note(
        &mut self,
        inventory: &mut Inventory,
        node: &str,
        outcome: NodeOutcome,
    ) -> Result<(), InventoryError> {
        inventory.note_rollout_node(self.id, node, outcome)
    }

    /// Records a wave's pushed nodes' results, counting each against the budget; returns the
    /// nodes whose outcome the inventory could not record. (An outcome counts against the
    /// budget even then.) One transaction for the wave; should it fail, each node is noted
    /// alone, so each failure names its node.
    pub fn answered(
        &mut self,
        inventory: &mut Inventory,
        results: &[NodeResult],
    ) -> Vec<(String, InventoryError)> {
        let mut outcomes = Vec::with_capacity(results.len());
        for r in results {
            let outcome = outcome(r);
            match outcome {
                NodeOutcome::Failed => self.failed.push((r.node.clone(), reason(r))),
                NodeOutcome::Unreachable => self.unreachable.push(r.node.clone()),
                _ => {}
            }
            outcomes.push((r.node.as_str(), outcome));
        }
        if inventory.note_rollout_nodes(self.id, &outcomes).is_ok() {
            return Vec::new();
        }
        outcomes
            .into_iter()
            .filter_map(|(node, outcome)| {
                let noted = inventory.note_rollout_node(self.id, node, outcome);
                noted.err().map(|e| (node.to_string(), e))
            })
            .collect()
    }

    /// After `wave` answered: whether the next one starts. A failed canary stops the rollout
    /// whatever the budget; otherwise more failed nodes than the budget allow do. After the last
    /// wave nothing is left to stop: the rollout is done, its failed nodes failed.
    pub fn after_wave(
        &mut self,
        inventory: &mut Inventory,
        wave: &Wave,
    ) -> Result<Step, InventoryError> {
        if self.stopped.is_some() {
            return Ok(Step::Stop {
                by: self.stopped.clone().unwrap_or_default(),
            });
        }
        if self.waves.last().is_none_or(|w| w.number == wave.number) {
            return Ok(Step::Continue);
        }
        let in_wave = |n: &String| wave.nodes.contains(n);
        let failed_canary = wave.canary && self.failed.iter().any(|(n, _)| in_wave(n));
        // a canary that was not reached has not passed: the waves after it wait for one that did
        let unreached: Vec<&String> = self.unreachable.iter().filter(|n| in_wave(n)).collect();
        if wave.canary && !failed_canary && !unreached.is_empty() {
            let names: Vec<&str> = unreached.iter().map(|n| n.as_str()).collect();
            let by = format!(
                "the canary {} could not be reached: a canary not reached has not passed; \
                 `mesh push --resume` once it is reachable, or push again with another canary",
                names.join(", ")
            );
            self.stopped = Some(by.clone());
            inventory.set_rollout_state(self.id, RolloutState::Stopped, Some(&by))?;
            return Ok(Step::Stop { by });
        }
        let over = self.failed.len() > self.budget.allowed(self.total());
        if !(failed_canary || over) {
            return Ok(Step::Continue);
        }
        let what: Vec<String> = self
            .failed
            .iter()
            .map(|(n, why)| format!("{n}: {why}"))
            .collect();
        let by = if failed_canary {
            format!("the canary failed ({})", what.join("; "))
        } else {
            format!(
                "{} failed, more than --max-failed allows ({}): {}",
                self.failed.len(),
                self.budget.allowed(self.total()),
                what.join("; ")
            )
        };
        // stopped whether or not the inventory can record it: no further wave starts
        self.stopped = Some(by.clone());
        inventory.set_rollout_state(self.id, RolloutState::Stopped, Some(&by))?;
        Ok(Step::Stop { by })
    }

    /// Why a consumer of `providers` (nodes) waits: the first of them that did not answer ready
    /// in this rollout (its push failed, a probe included, or it was not reached). `None`: every
    /// one of them that was pushed answered ready, or none was.
    pub fn provider_not_ready<'a>(
        &self,
        providers: impl IntoIterator<Item = &'a String>,
    ) -> Option<String> {
        providers.into_iter().find_map(|p| {
            if let Some((_, why)) = self.failed.iter().find(|(n, _)| n == p) {
                Some(format!(
                    "its provider {p} is not ready: its push failed ({why})"
                ))
            } else if self.unreachable.contains(p) {
                Some(format!("its provider {p} is not ready: it was not reached"))
            } else {
                None
            }
        })
    }

    /// Every wave ran: done, unless it stopped (then it stays stopped, for `--resume`). A node
    /// that failed within the budget, or was unreachable, is not applied: the plan shows its
    /// change pending and the next push sends it.
    pub fn finish(&self, inventory: &mut Inventory) -> Result<(), InventoryError> {
        if self.stopped.is_some() {
            return Ok(());
        }
        if self.partial {
            let by = "resumed for some of its nodes: the rest are left for `mesh push --resume`";
            return inventory.set_rollout_state(self.id, RolloutState::Stopped, Some(by));
        }
        inventory.set_rollout_state(self.id, RolloutState::Done, None)
    }
}

/// The reason a node held by a stop (`by`: what stopped the rollout) is recorded with.
pub fn stopped_reason(by: &str) -> String {
    format!("rollout stopped: {by}")
}

/// What a pushed node's result comes to.
pub fn outcome(r: &NodeResult) -> NodeOutcome {
    match &r.result {
        Ok(answer) if answer.failed() => NodeOutcome::Failed,
        Ok(_) => NodeOutcome::Applied,
        Err(PushError::Ssh(
            SshError::Resolve { .. } | SshError::Unreachable { .. } | SshError::Timeout { .. },
        )) => NodeOutcome::Unreachable,
        Err(PushError::Refused { .. } | PushError::Unresolved { .. }) => NodeOutcome::Refused,
        Err(_) => NodeOutcome::Failed,
    }
}

/// Why a node failed, in a line.
fn reason(r: &NodeResult) -> String {
    match &r.result {
        Ok(a) => {
            let mut failed: Vec<String> = a
                .report
                .resources
                .iter()
                .filter(|x| x.state == crate::wire::State::Failed)
                .map(|x| format!("{}: {}", x.id, x.detail))
                .collect();
            failed.extend(
                a.report
                    .units
                    .iter()
                    .filter_map(|u| u.error.as_ref().map(|e| format!("{}: {e}", u.unit))),
            );
            if failed.is_empty() {
                "its change was not kept".into()
            } else {
                failed.join("; ")
            }
        }
        Err(e) => e.to_string(),
    }
}
