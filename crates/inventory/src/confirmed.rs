//! What each node's helper confirmed it has, resource by resource: the base every plan compares
//! with. A resource counts as the machine's only once its helper said so; a refused or failed one
//! keeps what was confirmed before (or nothing), so it stays in the next plan.
//!
//! The copy holds resources as sent, except that a sealed secret file keeps only its keyed
//! digest, never its content: a plan shows only that a secret changes.

use std::collections::BTreeMap;

use rusqlite::{Transaction, params};

use super::{Inventory, InventoryError};
use mesh_wire::{Declaration, FileSpec, Mode, Report, Resource, Seen, State, VERSION};

/// How the module of a resource the machine has otherwise than declared ends, when the check
/// could not say how it differs (not a file whose bytes it showed): the plan shows it changed,
/// `(differs on the machine)`, and the push sends it again.
pub const DIFFERS: &str = " (differs on the machine)";

/// Whether a node's helper ever answered a push.
pub(super) const ANSWERED: &str =
    "SELECT EXISTS (SELECT 1 FROM pushes WHERE node = ?1 AND report IS NOT NULL)";
/// What a node's helper confirmed, in order.
pub(super) const CONFIRMED: &str =
    "SELECT resource FROM confirmed WHERE node = ?1 ORDER BY position, id";

impl Inventory {
    /// Whether this node's helper has ever answered a push: then the machine keeps a record,
    /// and one without it has lost it.
    pub fn answered(&self, node: &str) -> Result<bool, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(ANSWERED)?
            .query_row([node], |r| r.get(0))?)
    }

    /// What `node`'s helper has confirmed, in the order it was declared; `None` when it never
    /// answered a push, or this inventory knows neither a generation of it nor anything it
    /// confirmed, nor that a check found its machine new (a node removed and added again: its
    /// old pushes stay in the history, but what its machine has is not known, and the plan says
    /// so as for a first push).
    pub fn confirmed(&self, node: &str) -> Result<Option<Declaration>, InventoryError> {
        let resources = read(&self.conn, node)?;
        // a machine a check found new is known to have nothing
        let known = !resources.is_empty()
            || (self.answered(node)?
                && (self.known_generation(node)?.is_some() || self.found_new(node)?));
        Ok(known.then(|| Declaration {
            version: VERSION,
            node: node.to_string(),
            resources,
            expects_record: false,
            confirm_within: None,
            confirm_removals: Vec::new(),
            keep: Vec::new(),
            planned: None,
        }))
    }
}

pub(super) fn read(
    conn: &rusqlite::Connection,
    node: &str,
) -> Result<Vec<Resource>, InventoryError> {
    let mut stmt = conn.prepare_cached(CONFIRMED)?;
    let rows = stmt.query_map([node], |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for text in rows {
        out.push(serde_json::from_str(&text?).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!(
                "what {node}'s helper confirmed cannot be read: {e}"
            )))
        })?);
    }
    Ok(out)
}

/// Replaces what `node` has confirmed with what `report` (its helper's answer to `sent`) says,
/// inside the caller's transaction.
pub(super) fn store(
    tx: &Transaction<'_>,
    node: &str,
    push_id: i64,
    sent: &Declaration,
    report: &Report,
) -> Result<(), InventoryError> {
    // a new machine has nothing of what was confirmed before (it was rebuilt)
    let previous = if report.new_machine {
        Vec::new()
    } else {
        read(tx, node)?
    };
    let now = confirm(previous, sent, report);
    replace(tx, node, push_id, &now)
}

/// Replaces what `node` has confirmed with `now` (confirmed by push `push_id`), inside the
/// caller's transaction.
pub(super) fn replace(
    tx: &Transaction<'_>,
    node: &str,
    push_id: i64,
    now: &[Resource],
) -> Result<(), InventoryError> {
    tx.execute("DELETE FROM confirmed WHERE node = ?1", [node])?;
    for (position, r) in now.iter().enumerate() {
        let mut r = r.clone();
        r.drop_ciphertext();
        let text = serde_json::to_string(&r).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!("{}: {e}", r.id)))
        })?;
        tx.execute(
            "INSERT INTO confirmed (node, id, position, push_id, resource)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![node, r.id, position as i64, push_id, text],
        )?;
    }
    Ok(())
}

/// What the machine has after its helper answered `sent` with `report`.
///
/// An apply: a resource created, changed or unchanged is the resource as sent; a failed one keeps
/// what was confirmed before; a removed one is gone; a failed removal stays. The helper reports
/// everything its record holds, so a resource it does not mention is not on the machine. What
/// the push kept (`keep`: an assignment held back) stays as it was confirmed.
/// A dry run changes nothing: it only confirms what it found already as sent (`unchanged`).
pub(crate) fn confirm(
    previous: Vec<Resource>,
    sent: &Declaration,
    report: &Report,
) -> Vec<Resource> {
    let states: BTreeMap<&str, State> = report
        .resources
        .iter()
        .map(|o| (o.id.as_str(), o.state))
        .collect();
    let mut before: BTreeMap<String, Resource> =
        previous.into_iter().map(|r| (r.id.clone(), r)).collect();
    let mut out = Vec::new();
    for r in &sent.resources {
        let kept = before.remove(&r.id);
        let taken = match (report.mode, states.get(r.id.as_str())) {
            (Mode::Apply, Some(State::Created | State::Changed | State::Unchanged))
            | (Mode::DryRun, Some(State::Unchanged)) => Some(r.clone()),
            _ => kept,
        };
        out.extend(taken);
    }
    // confirmed before and no longer declared: gone, unless the push kept it as it was
    for (id, r) in before {
        let stays = match (report.mode, states.get(id.as_str())) {
            _ if sent.keep.contains(&id) => true,
            (Mode::Apply, Some(State::Failed)) => true,
            (Mode::Apply, _) => false,
            (Mode::DryRun | Mode::Adopt, _) => true,
        };
        if stays {
            out.push(r);
        }
    }
    out
}

/// What the machine has, as a check (`report`, its helper's dry run of `sent`) found it, where
/// the machine's generation moved since this inventory last saw it (another inventory pushed,
/// or root rolled it back at its console): the next plan is made from this, not from what this
/// inventory confirmed before (`previous`). A resource found as sent is the machine's as sent;
/// one it lacks is not the machine's; one it has otherwise is kept as the machine's bytes where
/// the helper showed them, else as what was confirmed before if that differs, else marked
/// [`DIFFERS`]. One the machine's record holds and `sent` does not is kept as confirmed before
/// (a push gives it back); one the helper did not mention is not on the machine.
pub(crate) fn found(previous: Vec<Resource>, sent: &Declaration, report: &Report) -> Vec<Resource> {
    let outcome = |id: &str| report.resources.iter().find(|o| o.id == id);
    let mut before: BTreeMap<String, Resource> =
        previous.into_iter().map(|r| (r.id.clone(), r)).collect();
    let mut out = Vec::new();
    for r in &sent.resources {
        let kept = before.remove(&r.id);
        let taken = match outcome(&r.id).map(|o| (o.state, &o.seen)) {
            Some((State::Unchanged, _)) => Some(r.clone()),
            Some((State::Created, _)) => None,
            Some((State::Changed, seen)) => Some(otherwise(r, kept, seen)),
            // not measured (it failed, or was not mentioned): what was known stays
            Some((State::Failed | State::Removed, _)) | None => kept,
        };
        out.extend(taken);
    }
    for (id, r) in before {
        let stays = sent.keep.contains(&id)
            || outcome(&id).is_some_and(|o| matches!(o.state, State::Removed | State::Failed));
        if stays {
            out.push(r);
        }
    }
    out
}

/// `declared` as the machine has it otherwise (see [`found`]).
fn otherwise(declared: &Resource, before: Option<Resource>, seen: &[Seen]) -> Resource {
    if let Some(f) = declared.spec.get::<FileSpec>()
        && let Some(bytes) = seen
            .iter()
            .find(|s| s.path == f.path)
            .and_then(|s| s.found.as_ref())
        && *bytes != f.content
    {
        // what it was confirmed with before, where known: its settings' digests are then what
        // the machine read, so the plan names the settings that move and the units they cost
        let mut machine = before
            .filter(|b| b.spec.get::<FileSpec>().is_some())
            .unwrap_or_else(|| declared.clone());
        if let Some(m) = machine.spec.get_mut::<FileSpec>() {
            m.content.clone_from(bytes);
            m.sealed = None;
        }
        return machine;
    }
    if let Some(before) = before.filter(|b| b != declared) {
        return before;
    }
    let mut machine = declared.clone();
    machine.module.push_str(DIFFERS);
    machine
}

#[cfg(test)]
mod tests {
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
}
