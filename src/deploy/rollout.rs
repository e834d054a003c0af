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
}

impl Rollout {
    /// A new rollout of `waves`, recorded before anything is sent.
    pub fn begin(
        inventory: &mut Inventory,
        started_at: &str,
        waves: Vec<Wave>,
        budget: FailureBudget,
    ) -> Result<Rollout, InventoryError> {
        let nodes: Vec<RolloutNode> = waves
            .iter()
            .flat_map(|w| {
                w.nodes.iter().map(|n| RolloutNode {
                    node: n.clone(),
                    wave: w.number,
                    canary: w.canary,
                    outcome: None,
                })
            })
            .collect();
        let id = inventory.begin_rollout(started_at, &nodes)?;
        Ok(Rollout::new(id, waves, budget))
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
        inventory.set_rollout_state(last.id, RolloutState::Running, None)?;
        Ok(Rollout::new(last.id, waves, budget))
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
        }
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

#[cfg(test)]
mod tests {
    use super::{Rollout, Step};
    use crate::deploy::{FailureBudget, RolloutState, Wave};

    fn wave(number: usize, canary: bool, nodes: &[&str]) -> Wave {
        Wave {
            number,
            canary,
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
        }
    }

    fn rollout(budget: FailureBudget) -> (tempfile::TempDir, crate::inventory::Inventory, Rollout) {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = crate::inventory::Inventory::init(&dir.path().join("i.db")).unwrap();
        let waves = vec![
            wave(1, true, &["a"]),
            wave(2, false, &["b", "c"]),
            wave(3, false, &["d"]),
        ];
        let r = Rollout::begin(&mut inv, "now", waves, budget).unwrap();
        (dir, inv, r)
    }

    #[test]
    fn a_failed_canary_stops_the_rollout_whatever_the_budget() {
        let (_d, mut inv, mut r) = rollout(FailureBudget::Count(5));
        r.failed.push(("a".into(), "broke".into()));
        let w = r.waves[0].clone();
        assert!(
            matches!(r.after_wave(&mut inv, &w).unwrap(), Step::Stop { by } if by.contains("canary"))
        );
        let last = inv.last_rollout().unwrap().unwrap();
        assert_eq!(last.state, RolloutState::Stopped);
    }

    #[test]
    fn an_unreachable_canary_stops_the_rollout_naming_it() {
        let (_d, mut inv, mut r) = rollout(FailureBudget::Count(5));
        r.unreachable.push("a".into());
        let w = r.waves[0].clone();
        let step = r.after_wave(&mut inv, &w).unwrap();
        assert!(
            matches!(&step, Step::Stop { by } if by.contains("the canary a could not be reached")),
            "{step:?}"
        );
        assert_eq!(
            inv.last_rollout().unwrap().unwrap().state,
            RolloutState::Stopped
        );
        // a node of a later wave not reached is counted apart, and stops nothing
        let (_d, mut inv, mut r) = rollout(FailureBudget::None);
        r.unreachable.push("b".into());
        let w = r.waves[1].clone();
        assert_eq!(r.after_wave(&mut inv, &w).unwrap(), Step::Continue);
    }

    #[test]
    fn a_resume_of_some_nodes_sends_only_those_and_leaves_the_rest_for_the_next() {
        let (_d, mut inv, mut r) = rollout(FailureBudget::None);
        let refused = r.only(&["e".into()]).unwrap_err().to_string();
        assert!(
            refused
                .contains("e not among the nodes the last rollout has left to send (a, b, c, d)"),
            "{refused}"
        );
        r.only(&["c".into(), "d".into()]).unwrap();
        let left: Vec<(usize, Vec<String>)> = r
            .waves
            .iter()
            .map(|w| (w.number, w.nodes.clone()))
            .collect();
        assert_eq!(
            left,
            [(2, vec!["c".to_string()]), (3, vec!["d".to_string()])]
        );
        r.finish(&mut inv).unwrap();
        assert_eq!(
            inv.last_rollout().unwrap().unwrap().state,
            RolloutState::Stopped,
            "a and b are still to send"
        );
    }

    #[test]
    fn a_consumer_waits_for_a_provider_that_failed_or_was_not_reached_in_this_rollout() {
        let (_d, _inv, mut r) = rollout(FailureBudget::Count(5));
        let named = |n: &[&str]| n.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(r.provider_not_ready(&named(&["a", "b"])), None);
        r.failed.push((
            "b".into(),
            "x:process:x.service: not ready after 5 s".into(),
        ));
        r.unreachable.push("c".into());
        assert_eq!(
            r.provider_not_ready(&named(&["a", "b"])).as_deref(),
            Some(
                "its provider b is not ready: its push failed (x:process:x.service: not ready after 5 s)"
            )
        );
        assert_eq!(
            r.provider_not_ready(&named(&["c"])).as_deref(),
            Some("its provider c is not ready: it was not reached")
        );
        assert_eq!(r.provider_not_ready(&named(&["a", "d"])), None);
    }

    /// `node` failed: its helper said it could not run.
    fn failed(node: &str) -> crate::push::NodeResult {
        crate::push::NodeResult {
            node: node.into(),
            result: Err(crate::push::PushError::Helper {
                node: node.into(),
                status: "1".into(),
                stderr: "broke".into(),
            }),
        }
    }

    #[test]
    fn a_waves_outcomes_the_inventory_refuses_together_are_noted_alone_each_refusal_named() {
        let (_d, mut inv, mut r) = rollout(FailureBudget::None);
        // the inventory refuses to note node c, and so the wave's one transaction
        let db = rusqlite::Connection::open(inv.path()).unwrap();
        db.execute_batch(
            "CREATE TRIGGER refuse_c BEFORE UPDATE ON rollout_nodes WHEN NEW.node = 'c'
             BEGIN SELECT RAISE(ABORT, 'c refused'); END;",
        )
        .unwrap();
        drop(db);
        let unrecorded = r.answered(&mut inv, &[failed("b"), failed("c")]);
        let named: Vec<(&str, String)> = unrecorded
            .iter()
            .map(|(n, e)| (n.as_str(), e.to_string()))
            .collect();
        assert_eq!(named.len(), 1, "{named:?}");
        assert_eq!(named[0].0, "c");
        assert!(named[0].1.contains("c refused"), "{named:?}");
        // b is noted all the same, and both count against the budget
        let row = inv.last_rollout().unwrap().unwrap();
        let b = row.nodes.iter().find(|n| n.node == "b").unwrap();
        assert_eq!(b.outcome, Some(crate::deploy::NodeOutcome::Failed));
        assert_eq!(r.failed.len(), 2);
    }

    #[test]
    fn more_failures_than_the_budget_stop_it_but_not_after_the_last_wave() {
        let (_d, mut inv, mut r) = rollout(FailureBudget::Count(1));
        let w = r.waves[1].clone();
        r.failed.push(("b".into(), "broke".into()));
        assert_eq!(r.after_wave(&mut inv, &w).unwrap(), Step::Continue);
        r.failed.push(("c".into(), "broke".into()));
        assert!(matches!(
            r.after_wave(&mut inv, &w).unwrap(),
            Step::Stop { .. }
        ));

        // every wave sent: nothing is left to stop
        let (_d, mut inv, mut r) = rollout(FailureBudget::None);
        r.failed.push(("d".into(), "broke".into()));
        let w = r.waves[2].clone();
        assert_eq!(r.after_wave(&mut inv, &w).unwrap(), Step::Continue);
        r.finish(&mut inv).unwrap();
        assert_eq!(
            inv.last_rollout().unwrap().unwrap().state,
            RolloutState::Done
        );
    }
}
