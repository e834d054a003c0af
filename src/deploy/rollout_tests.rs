//! The rollout's bookkeeping: its budget, its canary, its resume.

use super::rollout::{Rollout, Step};
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
    let r = Rollout::begin(&mut inv, "now", waves, budget, &Default::default()).unwrap();
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
        refused.contains("e not among the nodes the last rollout has left to send (a, b, c, d)"),
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
