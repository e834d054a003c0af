//! Plans made after a `mesh check` found the machine's generation moved (another inventory
//! pushed, root rolled it back at its console, a kept generation edited on the machine): what
//! the check found, recorded in a real inventory file, is the next plan's base.

use super::*;
use crate::inventory::{Inventory, Node, PushRecord};
use crate::wire::{Costing, FileSpec, Generation, Mode, Outcome, Seen, Spec, State, VERSION};

fn file(path: &str, content: &str) -> Resource {
    Resource {
        id: format!("m:file:{path}"),
        instance: "m".into(),
        module: "m@1".into(),
        confirm: false,
        spec: Spec::File(FileSpec {
            path: path.into(),
            owner: "root".into(),
            group: "root".into(),
            mode: 0o644,
            content: content.into(),
            validate: vec![],
            secret: false,
            sealed: None,
            effective: None,
            costing: Costing {
                source: "s".into(),
                settings: BTreeMap::new(),
                cost: Cost::Restart,
                units: vec!["m.service".into()],
            },
        }),
    }
}

fn decl(resources: Vec<Resource>) -> Declaration {
    Declaration {
        version: VERSION,
        node: "n".into(),
        resources,
        expects_record: true,
        confirm_within: None,
        confirm_removals: Vec::new(),
        keep: Vec::new(),
        planned: None,
    }
}

fn outcome(id: &str, state: State, found: Option<&str>) -> Outcome {
    Outcome {
        id: format!("m:file:{id}"),
        state,
        detail: String::new(),
        undo: None,
        seen: found
            .map(|f| Seen {
                path: id.into(),
                found: Some(f.into()),
                declared: String::new(),
            })
            .into_iter()
            .collect(),
        micros: 0,
    }
}

fn report(mode: Mode, generation: Generation, resources: Vec<Outcome>) -> Report {
    Report {
        version: VERSION,
        mode,
        hostname: "n".into(),
        host_keys: vec![],
        new_machine: false,
        resources,
        units: vec![],
        adoption: None,
        awaiting: None,
        reverted: vec![],
        pending: None,
        generation: Some(generation),
        facts: None,
        steps: Vec::new(),
        generation_not_kept: None,
    }
}

/// An inventory whose push of `sent` the machine confirmed as generation 1.
fn pushed(sent: &Declaration) -> (tempfile::TempDir, Inventory, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
    inv.add_node(&Node::new("n", "192.0.2.1")).unwrap();
    let id = inv.inventory_id().unwrap();
    let created = sent
        .resources
        .iter()
        .map(|r| Outcome {
            id: r.id.clone(),
            ..outcome("", State::Created, None)
        })
        .collect();
    let said = report(Mode::Apply, at(1, &id, None), created);
    let push = inv.begin_pushes("t0", &[("n", "d")]).unwrap()[0];
    inv.finish_push(
        push,
        &PushRecord::answered("n", "t0", "d", &said),
        Some(sent),
    )
    .unwrap();
    (dir, inv, id)
}

fn at(number: u64, inventory: &str, rolled_back_to: Option<u64>) -> Generation {
    Generation {
        number,
        inventory: inventory.into(),
        pushed_at: 10 + number,
        rolled_back_to,
        push: None,
    }
}

fn planned(inv: &Inventory, next: &Declaration) -> Vec<(char, String, Vec<String>, bool)> {
    let confirmed = inv.confirmed("n").unwrap();
    plan(next, confirmed.as_ref(), None)
        .changes
        .into_iter()
        .map(|c| (c.action.sign(), c.id, c.fields, c.drift))
        .collect()
}

#[test]
fn after_a_check_found_the_generation_moved_the_plan_shows_what_the_push_will_change() {
    let ours = decl(vec![
        file("/a", "A1\n"),
        file("/b", "b\n"),
        file("/c", "c\n"),
    ]);
    let (_dir, mut inv, _) = pushed(&ours);
    assert!(planned(&inv, &ours).is_empty());
    // another inventory pushed generation 2: /a has its bytes, /b differs in a way the helper
    // cannot show (its owner), /c is gone
    let found = report(
        Mode::DryRun,
        at(2, "other", None),
        vec![
            outcome("/a", State::Changed, Some("B1\n")),
            outcome("/b", State::Changed, None),
            outcome("/c", State::Created, None),
        ],
    );
    inv.note_checked("n", Some(&ours), &found).unwrap();
    let got = planned(&inv, &ours);
    let s = |v: &[&str]| v.iter().map(|f| f.to_string()).collect::<Vec<_>>();
    assert_eq!(
        got,
        [
            ('~', "m:file:/a".into(), s(&["content"]), false),
            (
                '~',
                "m:file:/b".into(),
                s(&["differs on the machine"]),
                true
            ),
            ('+', "m:file:/c".into(), s(&[]), false),
        ]
    );
    let confirmed = inv.confirmed("n").unwrap().unwrap();
    assert!(
        matches!(&confirmed.resources[0].spec, Spec::File(f) if f.content == "B1\n"),
        "the diff is from the machine's bytes"
    );
    // the same check again (the generation did not move) keeps what it recorded
    inv.note_checked("n", Some(&ours), &found).unwrap();
    assert_eq!(planned(&inv, &ours), got);
}

#[test]
fn a_kept_generation_edited_on_the_machine_and_rolled_back_to_is_planned_from_what_it_has() {
    let ours = decl(vec![file("/a", "A1\n")]);
    let (_dir, mut inv, id) = pushed(&ours);
    // root edited generation 1's file on the machine, then `mesh-host rollback 1`: generation 2
    let found = report(
        Mode::DryRun,
        at(2, &id, Some(1)),
        vec![outcome("/a", State::Changed, Some("EVIL\n"))],
    );
    inv.note_checked("n", Some(&ours), &found).unwrap();
    let got = planned(&inv, &ours);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0, got[0].1.as_str()), ('~', "m:file:/a"));
}

#[test]
fn a_node_removed_and_added_again_is_planned_as_a_first_push() {
    let ours = decl(vec![file("/a", "A1\n")]);
    let (_dir, inv, _) = pushed(&ours);
    assert!(!plan(&ours, inv.confirmed("n").unwrap().as_ref(), None).first_send);
    inv.remove_node("n").unwrap();
    inv.add_node(&Node::new("n", "192.0.2.1")).unwrap();
    assert!(!inv.push_history(Some(&["n"]), 5).unwrap().is_empty());
    let p = plan(&ours, inv.confirmed("n").unwrap().as_ref(), None);
    assert!(
        p.first_send,
        "its old pushes do not say what the machine has"
    );
}

#[test]
fn a_file_found_as_confirmed_before_keeps_the_settings_it_was_confirmed_with() {
    // a check of a declaration whose setting moved (content "bad") finds the machine has what
    // was confirmed ("good"): what it records keeps the settings that file was written with,
    // so the next plan names the setting that moves and the unit it costs, and a declaration
    // back at "good" plans nothing
    let with = |content: &str, digest: &str| {
        let mut r = file("/a", content);
        if let Spec::File(f) = &mut r.spec {
            f.costing.settings.insert(
                "value".into(),
                crate::wire::SettingUse {
                    digest: digest.into(),
                    cost: Cost::Restart,
                },
            );
        }
        r
    };
    let good = decl(vec![with("good\n", "g")]);
    let (_dir, mut inv, _) = pushed(&good);
    let bad = decl(vec![with("bad\n", "b")]);
    let found = report(
        Mode::DryRun,
        at(2, "other", None),
        vec![outcome("/a", State::Changed, Some("good\n"))],
    );
    inv.note_checked("n", Some(&bad), &found).unwrap();
    assert!(
        planned(&inv, &good).is_empty(),
        "{:?}",
        planned(&inv, &good)
    );
    let confirmed = inv.confirmed("n").unwrap();
    let p = plan(&bad, confirmed.as_ref(), None);
    assert_eq!(p.changes[0].settings, ["value"], "{:?}", p.changes[0]);
    assert_eq!(p.units.len(), 1, "{:?}", p.units);
}

#[test]
fn a_machine_rolled_back_to_a_kept_generation_plans_the_removal_of_what_only_that_one_had() {
    // found by an attacker: generation 1 had /x, generation 2 took it away; root rolled the
    // machine back to 1; the check said the push removes /x, the plan did not list it
    let one = decl(vec![file("/a", "a\n"), file("/x", "x\n")]);
    let (_dir, mut inv, id) = pushed(&one);
    let two = decl(vec![file("/a", "a\n")]);
    let removed = Outcome {
        id: "m:file:/x".into(),
        ..outcome("", State::Removed, None)
    };
    let said = report(
        Mode::Apply,
        at(2, &id, None),
        vec![outcome("/a", State::Unchanged, None), removed.clone()],
    );
    let push = inv.begin_pushes("t1", &[("n", "d")]).unwrap()[0];
    inv.finish_push(
        push,
        &PushRecord::answered("n", "t1", "d", &said),
        Some(&two),
    )
    .unwrap();
    assert!(planned(&inv, &two).is_empty());
    let found = report(
        Mode::DryRun,
        at(3, &id, Some(1)),
        vec![outcome("/a", State::Unchanged, None), removed],
    );
    inv.note_checked("n", Some(&two), &found).unwrap();
    let got = planned(&inv, &two);
    assert_eq!(
        got.iter().map(|c| (c.0, c.1.as_str())).collect::<Vec<_>>(),
        [('-', "m:file:/x")],
        "{got:?}"
    );
}
