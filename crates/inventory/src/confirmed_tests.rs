//! What the helper confirmed: which resources count as the machine's, and how the copy is kept.

use super::*;
use crate::{Node, PushRecord};
use mesh_wire::{Outcome, PackageSpec, Spec};

fn package(name: &str) -> Resource {
    Resource {
        id: format!("m:package:{name}"),
        instance: "m".into(),
        module: "m@1".into(),
        confirm: false,
        spec: Spec::Package(PackageSpec {
            name: name.into(),
            version: None,
            absent: false,
        }),
    }
}

fn decl(resources: &[Resource]) -> Declaration {
    Declaration {
        version: VERSION,
        node: "n".into(),
        resources: resources.to_vec(),
        expects_record: false,
        confirm_within: None,
        confirm_removals: Vec::new(),
        keep: Vec::new(),
        planned: None,
    }
}

fn report(mode: Mode, states: &[(&Resource, State)]) -> Report {
    Report {
        version: VERSION,
        mode,
        hostname: "n".into(),
        host_keys: Vec::new(),
        new_machine: false,
        resources: states
            .iter()
            .map(|(r, s)| Outcome {
                id: r.id.clone(),
                state: *s,
                detail: String::new(),
                undo: None,
                seen: Vec::new(),
                micros: 0,
            })
            .collect(),
        units: vec![],
        adoption: None,
        awaiting: None,
        reverted: Vec::new(),
        pending: None,
        generation: None,
        facts: None,
        steps: Vec::new(),
        generation_not_kept: None,
    }
}

fn ids(rs: &[Resource]) -> Vec<&str> {
    rs.iter().map(|r| r.id.as_str()).collect()
}

#[test]
fn only_what_the_helper_applied_is_confirmed() {
    let (a, b, c) = (package("a"), package("b"), package("c"));
    let sent = decl(&[a.clone(), b.clone(), c.clone()]);
    let said = report(
        Mode::Apply,
        &[
            (&a, State::Created),
            (&b, State::Failed),
            (&c, State::Unchanged),
        ],
    );
    assert_eq!(
        ids(&confirm(vec![], &sent, &said)),
        ["m:package:a", "m:package:c"]
    );
}

#[test]
fn a_failed_change_keeps_what_was_confirmed_before() {
    let old = package("a");
    let mut new = package("a");
    new.module = "m@2".into();
    let said = report(Mode::Apply, &[(&new, State::Failed)]);
    let now = confirm(vec![old.clone()], &decl(&[new]), &said);
    assert_eq!(now, vec![old]);
}

#[test]
fn a_removal_drops_it_and_a_failed_removal_keeps_it() {
    let (gone, stuck, unknown) = (package("gone"), package("stuck"), package("unknown"));
    let said = report(
        Mode::Apply,
        &[(&gone, State::Removed), (&stuck, State::Failed)],
    );
    let now = confirm(vec![gone, stuck.clone(), unknown], &decl(&[]), &said);
    assert_eq!(now, vec![stuck]);
}

#[test]
fn what_a_push_keeps_stays_confirmed_as_it_was() {
    let (held, gone) = (package("held"), package("gone"));
    let mut sent = decl(&[]);
    sent.keep = vec![held.id.clone()];
    let said = report(Mode::Apply, &[(&gone, State::Removed)]);
    assert_eq!(confirm(vec![held.clone(), gone], &sent, &said), vec![held]);
}

#[test]
fn a_dry_run_confirms_only_what_it_found_as_sent() {
    let (same, moved, old) = (package("same"), package("moved"), package("old"));
    let mut next = moved.clone();
    next.module = "m@2".into();
    let said = report(
        Mode::DryRun,
        &[(&same, State::Unchanged), (&next, State::Changed)],
    );
    let now = confirm(
        vec![moved.clone(), old.clone()],
        &decl(&[same.clone(), next]),
        &said,
    );
    assert_eq!(now, vec![same, moved, old]);
}

#[test]
fn the_confirmed_state_is_kept_per_node_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inv.db");
    let mut inv = Inventory::init(&path).unwrap();
    inv.add_node(&Node::new("n", "127.0.0.1")).unwrap();
    assert_eq!(inv.confirmed("n").unwrap(), None, "nothing answered yet");

    let (a, b) = (package("a"), package("b"));
    let id = inv.begin_pushes("t0", &[("n", "d1")]).unwrap()[0];
    assert!(inv.in_flight("n").unwrap());
    // the confirmed state is untouched while the push is in flight
    assert_eq!(inv.confirmed("n").unwrap(), None);
    let sent = decl(&[a.clone(), b.clone()]);
    let said = report(Mode::Apply, &[(&a, State::Created), (&b, State::Failed)]);
    inv.finish_push(
        id,
        &PushRecord::answered("n", "t0", "d1", &said),
        Some(&sent),
    )
    .unwrap();
    assert!(!inv.in_flight("n").unwrap());
    drop(inv);

    let mut inv = Inventory::open(&path).unwrap();
    let got = inv.confirmed("n").unwrap().unwrap();
    assert_eq!(got.resources, vec![a.clone()]);

    // an interrupted push leaves the node in flight and what it had confirmed as it was
    inv.begin_pushes("t1", &[("n", "d2")]).unwrap();
    drop(inv);
    let mut inv = Inventory::open(&path).unwrap();
    assert!(inv.in_flight("n").unwrap());
    assert_eq!(
        inv.confirmed("n").unwrap().unwrap().resources,
        vec![a.clone()]
    );

    // the next push closes the interrupted one and confirms what its helper says
    let id = inv.begin_pushes("t2", &[("n", "d3")]).unwrap()[0];
    let said = report(Mode::Apply, &[(&a, State::Removed), (&b, State::Created)]);
    inv.finish_push(
        id,
        &PushRecord::answered("n", "t2", "d3", &said),
        Some(&decl(std::slice::from_ref(&b))),
    )
    .unwrap();
    assert_eq!(inv.confirmed("n").unwrap().unwrap().resources, vec![b]);
    let outcomes: Vec<String> = inv
        .push_history(Some(&["n"]), 10)
        .unwrap()
        .into_iter()
        .map(|r| r.outcome)
        .collect();
    assert_eq!(outcomes, ["applied", "interrupted", "failed"]);
}

#[test]
fn a_resource_confirmed_again_as_it_was_is_not_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
    inv.add_node(&Node::new("n", "127.0.0.1")).unwrap();
    let push = |inv: &mut Inventory, sent: &[&Resource], said: &[(&Resource, State)]| {
        let id = inv.begin_pushes("t", &[("n", "d")]).unwrap()[0];
        let sent: Vec<Resource> = sent.iter().map(|r| (*r).clone()).collect();
        let said = PushRecord::answered("n", "t", "d", &report(Mode::Apply, said));
        inv.finish_push(id, &said, Some(&decl(&sent))).unwrap();
        id
    };
    // (id, position, the push its row was written by)
    let rows = |inv: &Inventory| -> Vec<(String, i64, i64)> {
        let mut stmt = inv
            .conn
            .prepare("SELECT id, position, push_id FROM confirmed ORDER BY position")
            .unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)));
        rows.unwrap().map(Result::unwrap).collect()
    };
    let row = |r: &Resource, at: i64, push: i64| (r.id.clone(), at, push);
    let (a, b, c) = (package("a"), package("b"), package("c"));
    let first = push(
        &mut inv,
        &[&a, &b],
        &[(&a, State::Created), (&b, State::Created)],
    );

    // a no-op writes no row again
    push(
        &mut inv,
        &[&a, &b],
        &[(&a, State::Unchanged), (&b, State::Unchanged)],
    );
    assert_eq!(rows(&inv), [row(&a, 0, first), row(&b, 1, first)]);

    // a changed resource and one that moved are written; one added before them is inserted
    let mut b2 = package("b");
    b2.module = "m@2".into();
    let third = push(
        &mut inv,
        &[&c, &a, &b2],
        &[
            (&c, State::Created),
            (&a, State::Unchanged),
            (&b2, State::Changed),
        ],
    );
    assert_eq!(
        rows(&inv),
        [row(&c, 0, third), row(&a, 1, third), row(&b2, 2, third)]
    );

    // a removed resource's row goes; the rest stay as they were but for the one that moved
    let fourth = push(
        &mut inv,
        &[&c, &b2],
        &[
            (&c, State::Unchanged),
            (&a, State::Removed),
            (&b2, State::Unchanged),
        ],
    );
    assert_eq!(rows(&inv), [row(&c, 0, third), row(&b2, 1, fourth)]);
    assert_eq!(inv.confirmed("n").unwrap().unwrap().resources, vec![c, b2]);
}

#[test]
fn what_an_older_mesh_last_sent_becomes_what_is_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inv.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    for (_, sql) in &crate::schema::MIGRATIONS[..2] {
        conn.execute_batch(sql).unwrap();
    }
    conn.pragma_update(None, "user_version", 2).unwrap();
    let resource = package("a");
    let declaration = Declaration {
        version: VERSION,
        node: "n".into(),
        resources: vec![resource.clone()],
        expects_record: false,
        confirm_within: None,
        confirm_removals: Vec::new(),
        keep: Vec::new(),
        planned: None,
    };
    conn.execute_batch(
        "INSERT INTO nodes (name, address) VALUES ('n', '127.0.0.1');
         INSERT INTO pushes (id, node, started_at, digest, outcome) VALUES (1, 'n', 't', 'd', 'applied');",
    )
    .unwrap();
    conn.execute(
        "INSERT INTO sent (node, push_id, digest, declaration) VALUES ('n', 1, 'd', ?1)",
        [serde_json::to_string(&declaration).unwrap()],
    )
    .unwrap();
    drop(conn);
    let inv = Inventory::open(&path).unwrap();
    assert_eq!(inv.confirmed("n").unwrap(), Some(declaration));
}
