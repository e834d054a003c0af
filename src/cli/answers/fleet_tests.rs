//! The node lists of `plan`, `check`, `push`, `rollback` and `adopt`, from fixed values: each
//! entry's keys, in their order, as scripts and the acceptance checks read them.

use std::collections::BTreeMap;

use serde_json::json;

use crate::inventory::Hold;
use crate::plan::{Action, Change, Plan, UnitChange};
use crate::push::{Answer, Confirmation, NodeResult, PushError};
use crate::wire::{Cost, Mode, Report, Resource};

fn report() -> Report {
    let report = json!({
        "version": 9, "mode": "apply", "hostname": "web1",
        "resources": [
            {"id": "web:file:/etc/web.conf", "state": "changed", "detail": "content"},
            {"id": "web:service:web.service", "state": "unchanged", "detail": "running"}
        ],
        "units": [{"unit": "web.service", "action": "restart", "because": ["web:file:/etc/web.conf"],
                   "done": "restarted", "error": null}],
        "pending": "c-41",
        "generation": {"number": 3, "inventory": "inv-a", "pushed_at": 1700000000}
    });
    serde_json::from_value(report).unwrap()
}

fn answered(node: &str, confirmation: Option<Confirmation>) -> NodeResult {
    NodeResult {
        node: node.into(),
        result: Ok(Answer {
            report: report(),
            uploaded: true,
            confirmation,
            facts_refused: None,
        }),
    }
}

fn stale(node: &str) -> NodeResult {
    let stale = json!({
        "machine": {"number": 5, "inventory": "inv-b", "pushed_at": 1700000100},
        "planned": {"number": 4, "inventory": "inv-a"}
    });
    NodeResult {
        node: node.into(),
        result: Err(PushError::Stale {
            node: node.into(),
            stale: Box::new(serde_json::from_value(stale).unwrap()),
        }),
    }
}

fn platform(node: &str) -> NodeResult {
    NodeResult {
        node: node.into(),
        result: Err(PushError::Platform {
            node: node.into(),
            machine: "sparc".into(),
        }),
    }
}

fn file(path: &str, content: &str) -> Resource {
    serde_json::from_value(json!({
        "id": format!("web:file:{path}"), "instance": "web", "module": "web 1",
        "kind": "file", "path": path, "owner": "root", "group": "root", "mode": 420,
        "content": content, "source": "s", "settings": {}, "cost": "none", "units": []
    }))
    .unwrap()
}

fn change(action: Action, old: Option<Resource>, new: Option<Resource>) -> Change {
    let r = new.as_ref().or(old.as_ref()).unwrap();
    Change {
        id: r.id.clone(),
        action,
        fields: if action == Action::Changed {
            vec!["content".into()]
        } else {
            vec![]
        },
        old,
        new,
        undo: None,
        settings: vec![],
        drift: false,
        found: vec![],
    }
}

fn plan(node: &str, first_send: bool) -> Plan {
    Plan {
        node: node.into(),
        first_send,
        unconfirmed: !first_send,
        running: false,
        rekeyed: false,
        new_machine: false,
        pending_confirmation: (!first_send).then(|| "c-41".to_string()),
        held: vec![],
        facts_moved: vec![],
        changes: vec![
            change(Action::Added, None, Some(file("/etc/a.conf", "a\n"))),
            change(
                Action::Changed,
                Some(file("/etc/b.conf", "old\n")),
                Some(file("/etc/b.conf", "new\n")),
            ),
        ],
        units: vec![UnitChange {
            unit: "web.service".into(),
            action: Cost::Restart,
            because: vec!["web:file:/etc/b.conf".into()],
            stops: false,
            verb: "restart",
        }],
        needs_confirmation: vec![],
    }
}

fn hold(node: &str) -> Hold {
    Hold {
        node: node.into(),
        generation: 2,
        since: "2026-01-02 03:04:05".into(),
    }
}

#[test]
fn a_node_pushed_says_its_report_its_confirmation_and_what_awaits() {
    let results = vec![
        answered("web1", Some(Confirmation::Confirmed)),
        answered("web2", None),
    ];
    insta::assert_json_snapshot!(answered::results(&results, Mode::Apply));
}

#[test]
fn a_node_that_failed_says_its_kind_and_a_stale_one_both_generations() {
    let results = vec![stale("web1"), platform("web2")];
    insta::assert_json_snapshot!(answered::results(&results, Mode::DryRun));
    insta::assert_json_snapshot!("adopted", answered::results(&results[1..], Mode::Adopt));
}

#[test]
fn a_plan_never_asked_says_how_to_ask_and_each_addition_may_take_over() {
    let plans = vec![plan("web1", true), plan("web2", false)];
    insta::assert_json_snapshot!(answered::plans(&plans, false));
    insta::assert_json_snapshot!("plans_with_diff", answered::plans(&plans[1..], true));
}

#[test]
fn a_node_held_at_a_generation_says_since_when_and_how_its_declaration_differs() {
    let differs = vec![crate::cli::held_at::Differs {
        id: "web:file:/etc/a.conf".into(),
        action: Action::Removed,
    }];
    let (h, h2) = (hold("web1"), hold("web2"));
    let list = vec![
        answered::held_at(&h, Some(&differs)),
        answered::held_at(&h, Some(&[])),
        answered::held_at(&h2, None),
    ];
    insta::assert_json_snapshot!(list);
}

#[test]
fn nodes_a_rollout_held_name_their_wave_and_why() {
    let list = vec![
        answered::stopped("web3", 2, "web1 failed"),
        answered::waiting("web4", 3, "kv@web9 did not answer ready"),
    ];
    insta::assert_json_snapshot!(list);
}

fn moved() -> crate::plan::Move {
    crate::plan::Move {
        instance: "db".into(),
        module: "db 1".into(),
        container: "db".into(),
        target: "/var/lib/db".into(),
        from: "/srv/mesh/db/data".into(),
        to: "/srv/elsewhere".into(),
    }
}

fn kept() -> crate::resolve::Held {
    crate::resolve::Held {
        instance: "app".into(),
        module: "app".into(),
        waiting_for: Some("kv@web9".into()),
        reason: "its provider kv@web9 has not answered ready".into(),
    }
}

#[test]
fn every_entry_of_a_push_carries_its_wave() {
    let results = vec![answered("web1", None), platform("web2")];
    let waves = BTreeMap::from([
        ("web1".to_string(), 1),
        ("web2".to_string(), 2),
        ("web3".to_string(), 4),
        ("web5".to_string(), 1),
        ("web6".to_string(), 2),
        ("web7".to_string(), 3),
    ]);
    let holds = vec![hold("web7")];
    let pushed = answered::Pushed {
        results: &results,
        moves: &[("web5".to_string(), vec![moved()])],
        kept: &[("web6".to_string(), kept())],
        stopped: &[("web3".to_string(), 3)],
        waiting: &[(
            "web4".to_string(),
            3,
            "kv@web9 did not answer ready".to_string(),
        )],
        rolled_back: &holds,
    };
    insta::assert_json_snapshot!(answered::pushed(&pushed, "web1 failed", &waves));
}

#[test]
fn a_rollback_says_the_generation_it_holds_each_node_at() {
    let results = vec![answered("web1", None), platform("web2")];
    let held = vec![hold("web1")];
    insta::assert_json_snapshot!(answered::rolled_back(&results, &held));
}

#[test]
fn a_plan_marks_the_nodes_an_unfinished_rollout_left() {
    let plans = vec![plan("web1", false), plan("web2", false)];
    let waves = BTreeMap::from([("web1".to_string(), 1), ("web2".to_string(), 2)]);
    let node = |node: &str, wave, outcome| crate::deploy::RolloutNode {
        planned: None,
        node: node.into(),
        wave,
        canary: false,
        outcome,
    };
    let row = crate::deploy::RolloutRow {
        id: 7,
        started_at: "2026-01-02 03:04:05".into(),
        state: crate::deploy::RolloutState::Stopped,
        stopped_by: Some("web1 failed".into()),
        nodes: vec![
            node("web1", 1, Some(crate::deploy::NodeOutcome::Applied)),
            node("web2", 2, None),
        ],
    };
    insta::assert_json_snapshot!(answered::planned_in_rollout(&plans, &waves, &row));
}

/// The answers as the commands build them.
mod answered {
    use std::collections::BTreeMap;

    use crate::cli::answers::fleet::{self, HeldNode, Listed};
    use crate::cli::held_at;
    use crate::inventory::Hold;
    use crate::plan::Plan;
    use crate::push::NodeResult;
    use crate::wire::Mode;

    pub(super) fn results(r: &[NodeResult], mode: Mode) -> Vec<Listed<'_>> {
        fleet::results(r, mode)
    }

    pub(super) fn plans(p: &[Plan], diff: bool) -> Vec<Listed<'_>> {
        fleet::planned(p, diff)
    }

    pub(super) fn held_at<'a>(h: &'a Hold, differs: Option<&'a [held_at::Differs]>) -> Listed<'a> {
        Listed::of(HeldNode::rollback(h, differs))
    }

    pub(super) fn stopped<'a>(node: &'a str, wave: usize, by: &str) -> Listed<'a> {
        Listed::of(HeldNode::stopped(node, wave, by))
    }

    pub(super) fn waiting<'a>(node: &'a str, wave: usize, why: &str) -> Listed<'a> {
        Listed::of(HeldNode::waiting(node, wave, why))
    }

    pub(super) use crate::cli::pushed::Held as Pushed;

    pub(super) fn pushed<'a>(
        p: &Pushed<'a>,
        by: &str,
        waves: &BTreeMap<String, usize>,
    ) -> Vec<Listed<'a>> {
        crate::cli::pushed::listed(p, by, waves)
    }

    pub(super) fn rolled_back<'a>(results: &'a [NodeResult], held: &[Hold]) -> Vec<Listed<'a>> {
        crate::cli::rollback::listed(results, held)
    }

    pub(super) fn planned_in_rollout<'a>(
        plans: &'a [Plan],
        waves: &BTreeMap<String, usize>,
        row: &crate::deploy::RolloutRow,
    ) -> Vec<Listed<'a>> {
        let mut all = fleet::planned(plans, false);
        fleet::with_waves(&mut all, waves);
        fleet::with_left(&mut all, row);
        all
    }
}
