//! A push as its waves go: the nodes refused before anything is sent failed alone, the rollout
//! begun (or resumed), each wave composed again and sent, consumers of a provider that did not
//! answer ready held, the failure budget kept after every wave and the waves a stop leaves
//! held; every node recorded as it happens. What the operator sees is the caller's ([`Watch`]);
//! what it came to is a [`Summary`].

use std::collections::{BTreeMap, BTreeSet};

use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, InventoryError, Node, PushRecord};
use crate::plan;
use crate::push::{self, NodeResult};
use crate::resolve::{self, Composed, Held};

use super::rollout::stopped_reason;
use super::send::push_wave;
use super::{DeployError, NodeOutcome, Options, Progress, Rollout, Wave, plan_waves, wave_map};

/// How one push sends its nodes, besides its waves.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// Only the nodes behind what their helper confirmed (`--behind`).
    pub behind: bool,
    /// Instances whose container data may move (`--move`).
    pub moves: Vec<String>,
    /// Seconds a change that can cut the operator off waits to be confirmed.
    pub confirm_timeout: u64,
    /// Replace whatever generation the machines are at (`--overwrite`).
    pub overwrite: bool,
    pub push: push::Options,
}

/// What the operator is told as the push goes, the moment it happens.
#[derive(Debug)]
pub enum Said<'a> {
    /// A wave of `of` starts (said only when there is more than one).
    WaveStarts {
        wave: &'a Wave,
        of: usize,
        parallel: usize,
    },
    /// An assignment of `node` held back, keeping what it has.
    Kept { node: &'a str, held: &'a Held },
    /// What `--overwrite` replaces on a node.
    Overwrite(String),
    /// `node` held because a running container's data would move.
    Moves {
        node: &'a str,
        moves: &'a [plan::Move],
    },
    /// `node` held because the rollout stopped before its wave.
    Stopped { node: &'a str },
    /// `node` held because a provider of it did not answer ready.
    Waiting { node: &'a str, why: &'a str },
    /// `node` failed before anything was sent to it.
    Refused(&'a NodeResult),
    /// The rollout's progress could not be recorded (`end`: its end).
    Unrecorded {
        end: bool,
        error: &'a InventoryError,
    },
}

/// How the caller shows a push as it runs.
pub trait Watch {
    /// Progress for the nodes of one fan-out.
    fn progress(&self, nodes: &[String]) -> Box<dyn Progress>;
    /// Tells the operator something, as it happens.
    fn said(&self, said: Said<'_>);
    /// A node's result, the moment it is in: the text to print then (empty: nothing).
    fn finished(&self, r: &NodeResult) -> String;
}

/// What every wave of one push came to.
#[derive(Default)]
pub struct Summary {
    pub results: Vec<NodeResult>,
    /// Nodes held because a running container's data would move.
    pub held: Vec<(String, Vec<plan::Move>)>,
    /// Assignments held back (provider gone or not ready), by node.
    pub kept: Vec<(String, Held)>,
    /// Nodes not sent because the rollout stopped, with their waves.
    pub stopped: Vec<(String, usize)>,
    /// Nodes not sent because a provider of theirs did not answer ready in this rollout: each
    /// with its wave and why.
    pub waiting: Vec<(String, usize, String)>,
    pub unrecorded: Vec<(String, InventoryError)>,
    /// Nodes left alone because a rollback holds them at a generation.
    pub rolled_back: Vec<crate::inventory::Hold>,
}

impl Summary {
    /// Each node's outcome, as the rollout records it.
    pub fn outcomes(&self) -> Vec<(String, NodeOutcome)> {
        let mut out: Vec<(String, NodeOutcome)> = self
            .results
            .iter()
            .map(|r| (r.node.clone(), super::rollout::outcome(r)))
            .collect();
        out.extend(
            self.held
                .iter()
                .map(|(n, _)| (n.clone(), NodeOutcome::Refused)),
        );
        out.extend(
            self.stopped
                .iter()
                .map(|(n, _)| (n.clone(), NodeOutcome::Held)),
        );
        out.extend(
            self.waiting
                .iter()
                .map(|(n, _, _)| (n.clone(), NodeOutcome::Held)),
        );
        out.extend(
            self.rolled_back
                .iter()
                .map(|h| (h.node.clone(), NodeOutcome::Refused)),
        );
        out
    }
}

/// The nodes a push is given: composed, those that cannot be (each with every problem of it),
/// and, with `--resume`, the rollout it continues.
pub struct Given {
    pub nodes: Vec<Node>,
    pub composed: Vec<(Node, Composed)>,
    pub refusals: Vec<(String, Vec<resolve::Problem>)>,
    pub resumed: Option<Rollout>,
    /// The selected nodes a rollback holds at a generation: left alone, said as such.
    pub held_at: Vec<crate::inventory::Hold>,
}

/// Pushes `given` in the waves of its rollout (`rollout`'s options for a new one). The push
/// lock is the caller's to hold.
pub fn push(
    inv: &mut Inventory,
    cat: &Catalogue,
    given: Given,
    rollout: &Options,
    options: &PushOptions,
    watch: &dyn Watch,
) -> Result<(Rollout, Summary), DeployError> {
    let Given {
        nodes,
        composed,
        refusals,
        resumed,
        held_at,
    } = given;
    let started = inv.now()?;
    let mut out = Summary::default();
    for (node, problems) in &refusals {
        fail_alone(
            inv,
            watch,
            &started,
            refused(node.clone(), problems),
            &mut out,
        )?;
    }
    let mut nodes: BTreeMap<String, Node> = nodes
        .into_iter()
        .filter(|n| !refusals.iter().any(|(r, _)| *r == n.name))
        .map(|n| (n.name.clone(), n))
        .collect();
    let mut rollout = begin_or_resume(
        inv, cat, resumed, composed, &refusals, &held_at, rollout, options, &started,
    )?;
    out.rolled_back = held_at;
    let waves = rollout.waves.clone();
    let mut run = Run {
        inv,
        options,
        watch,
        cat,
        started: &started,
        out: &mut out,
    };
    for wave in &waves {
        let members: Vec<Node> = wave.nodes.iter().filter_map(|n| nodes.remove(n)).collect();
        match rollout.stopped.clone() {
            Some(by) => run.hold(&mut rollout, wave.number, members, &by)?,
            None => {
                if waves.len() > 1 {
                    let of = waves.last().map_or(0, |w| w.number);
                    let parallel = options.push.parallel;
                    watch.said(Said::WaveStarts { wave, of, parallel });
                }
                run.wave(&mut rollout, wave, members)?;
            }
        }
    }
    if let Err(error) = rollout.finish(inv) {
        watch.said(Said::Unrecorded {
            end: true,
            error: &error,
        });
    }
    Ok((rollout, out))
}

/// The rollout a push runs: the one `--resume` continues (refused when what it would send is not
/// what it planned; the nodes refused or held noted), or a new one of `composed`'s waves.
#[allow(clippy::too_many_arguments)]
fn begin_or_resume(
    inv: &mut Inventory,
    cat: &Catalogue,
    resumed: Option<Rollout>,
    mut composed: Vec<(Node, Composed)>,
    refusals: &[(String, Vec<resolve::Problem>)],
    held_at: &[crate::inventory::Hold],
    rollout: &Options,
    options: &PushOptions,
    started: &str,
) -> Result<Rollout, DeployError> {
    Ok(match resumed {
        Some(mut r) => {
            if let Err(refused) = r.refuse_changed(&composed) {
                // nothing was sent: the rollout stays as it was, stopped, for a resume or a new one
                let by = refused.to_string();
                inv.set_rollout_state(r.id, super::RolloutState::Stopped, Some(&by))?;
                return Err(refused);
            }
            let held = held_at.iter().map(|h| &h.node);
            for node in refusals.iter().map(|(node, _)| node).chain(held) {
                r.note(inv, node, NodeOutcome::Refused)?;
            }
            r
        }
        None => {
            if options.behind {
                composed = behind(inv, composed)?;
            }
            let waves = plan_waves(inv, cat, &composed, rollout)?;
            let planned = composed
                .iter()
                .map(|(n, c)| {
                    (
                        n.name.clone(),
                        super::rollout::planned_digest(&c.declaration),
                    )
                })
                .collect();
            Rollout::begin(inv, started, waves, rollout.max_failed, &planned)?
        }
    })
}

/// A node refused before anything was sent to it, as a push's or check's result.
pub fn refused(node: String, problems: &[resolve::Problem]) -> NodeResult {
    NodeResult {
        result: Err(push::PushError::Unresolved {
            node: node.clone(),
            problems: resolve::problem::joined(problems, "; "),
        }),
        node,
    }
}

/// One push as its waves go.
struct Run<'a> {
    inv: &'a mut Inventory,
    options: &'a PushOptions,
    watch: &'a dyn Watch,
    cat: &'a Catalogue,
    started: &'a str,
    out: &'a mut Summary,
}

impl Run<'_> {
    /// Pushes one wave, each node's outcome noted in the rollout, then keeps its budget.
    fn wave(
        &mut self,
        rollout: &mut Rollout,
        wave: &Wave,
        members: Vec<Node>,
    ) -> Result<(), DeployError> {
        let before = (self.out.results.len(), self.out.held.len());
        // composed again: what the wave before confirmed may have ended a consumer's wait, and
        // what then takes part may be refused; machines were changed already, so such a node
        // fails alone
        let members = self.waiting(rollout, wave.number, members)?;
        let (inv, watch) = (&mut *self.inv, self.watch);
        let mut composed = compose_wave(inv, watch, self.started, self.cat, members, self.out)?;
        if self.options.behind {
            let names: Vec<String> = composed.iter().map(|(n, _)| n.name.clone()).collect();
            composed = behind(inv, composed)?;
            for up_to_date in names
                .iter()
                .filter(|n| !composed.iter().any(|(c, _)| c.name == **n))
            {
                rollout.note(inv, up_to_date, NodeOutcome::Applied)?;
            }
        }
        push_wave(
            inv,
            self.options,
            watch,
            self.started,
            composed,
            None,
            self.out,
        )?;
        for (node, e) in rollout.answered(inv, &self.out.results[before.0..]) {
            // a node the inventory could not record is said once, with the way back
            if !self.out.unrecorded.iter().any(|(n, _)| *n == node) {
                self.out.unrecorded.push((node, e));
            }
        }
        for (node, _) in &self.out.held[before.1..] {
            rollout.note(inv, node, NodeOutcome::Refused)?;
        }
        if let Err(error) = rollout.after_wave(inv, wave) {
            watch.said(Said::Unrecorded {
                end: false,
                error: &error,
            });
        }
        Ok(())
    }

    /// The members of wave `wave` whose provider did not answer ready earlier in this rollout
    /// are held (recorded, noted and shown), so a consumer never starts against a provider that
    /// is not ready; the others are returned.
    fn waiting(
        &mut self,
        rollout: &mut Rollout,
        wave: usize,
        members: Vec<Node>,
    ) -> Result<Vec<Node>, DeployError> {
        let all: BTreeSet<String> = wave_map(&rollout.waves).into_keys().collect();
        let mut ready = Vec::new();
        for node in members {
            let providers = resolve::order::providers(self.inv, self.cat, &node, &all)?;
            let Some(why) = rollout.provider_not_ready(providers.keys()) else {
                ready.push(node);
                continue;
            };
            self.inv.record_push(&PushRecord {
                node: node.name.clone(),
                started_at: self.started.to_string(),
                digest: String::new(),
                outcome: "held".into(),
                reason: Some(why.clone()),
                report: None,
            })?;
            rollout.note(self.inv, &node.name, NodeOutcome::Held)?;
            self.watch.said(Said::Waiting {
                node: &node.name,
                why: &why,
            });
            self.out.waiting.push((node.name, wave, why));
        }
        Ok(ready)
    }

    /// The nodes of a wave the rollout's stop keeps from being sent: recorded held, and shown.
    fn hold(
        &mut self,
        rollout: &mut Rollout,
        wave: usize,
        nodes: Vec<Node>,
        by: &str,
    ) -> Result<(), DeployError> {
        for node in nodes {
            self.inv.record_push(&PushRecord {
                node: node.name.clone(),
                started_at: self.started.to_string(),
                digest: String::new(),
                outcome: "held".into(),
                reason: Some(stopped_reason(by)),
                report: None,
            })?;
            rollout.note(self.inv, &node.name, NodeOutcome::Held)?;
            self.watch.said(Said::Stopped { node: &node.name });
            self.out.stopped.push((node.name, wave));
        }
        Ok(())
    }
}

/// A later wave's nodes composed one by one: a node refused now fails alone, recorded and shown,
/// since the waves before it have changed machines already.
fn compose_wave(
    inv: &mut Inventory,
    watch: &dyn Watch,
    started: &str,
    cat: &Catalogue,
    wave: Vec<Node>,
    out: &mut Summary,
) -> Result<Vec<(Node, Composed)>, DeployError> {
    let mut composed = Vec::new();
    for node in wave {
        // allocated already by the push's first composition, unless the catalogue asks more
        match resolve::allocation::compose(inv, cat, &node) {
            Ok(c) => composed.push((node, c)),
            Err(resolve::ResolveError::Unresolved { node, problems }) => {
                let failure = push::PushError::Refused {
                    node: node.clone(),
                    problems: resolve::problem::joined(&problems, "; "),
                };
                let result = NodeResult {
                    node,
                    result: Err(failure),
                };
                fail_alone(inv, watch, started, result, out)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(composed)
}

/// A node refused before anything was sent to it: recorded as failed and shown; the others go on.
fn fail_alone(
    inv: &mut Inventory,
    watch: &dyn Watch,
    started: &str,
    result: NodeResult,
    out: &mut Summary,
) -> Result<(), DeployError> {
    let reason = result.result.as_ref().err().map(ToString::to_string);
    inv.record_push(&PushRecord {
        node: result.node.clone(),
        started_at: started.to_string(),
        digest: String::new(),
        outcome: "failed".into(),
        reason,
        report: None,
    })?;
    watch.said(Said::Refused(&result));
    out.results.push(result);
    Ok(())
}

/// Only the nodes whose declaration differs from what their helper confirmed, whose last push
/// failed, or that hold an assignment back.
fn behind(
    inv: &Inventory,
    composed: Vec<(Node, Composed)>,
) -> Result<Vec<(Node, Composed)>, DeployError> {
    let mut out = Vec::new();
    for (node, c) in composed {
        let confirmed = inv.confirmed(&node.name)?;
        let failed = inv
            .last_outcome(&node.name)?
            .is_some_and(|o| o != "applied");
        if failed
            || confirmed.is_none()
            || inv.rekeyed(&node)?
            || !c.held.is_empty()
            || !plan::plan(&c.declaration, confirmed.as_ref(), None).is_empty()
        {
            out.push((node, c));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{NodeOutcome, Summary, refused};

    #[test]
    fn a_summary_says_each_nodes_outcome_as_the_rollout_records_it() {
        let summary = Summary {
            results: vec![refused(
                "a".into(),
                &[crate::resolve::Problem::says("no module")],
            )],
            held: vec![("b".into(), vec![])],
            stopped: vec![("c".into(), 2)],
            waiting: vec![("d".into(), 3, "its provider a is not ready".into())],
            ..Summary::default()
        };
        assert_eq!(
            summary.outcomes(),
            vec![
                ("a".to_string(), NodeOutcome::Refused),
                ("b".to_string(), NodeOutcome::Refused),
                ("c".to_string(), NodeOutcome::Held),
                ("d".to_string(), NodeOutcome::Held),
            ]
        );
    }
}
