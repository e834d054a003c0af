//! What each node's helper confirmed it has, resource by resource: the base every plan compares
//! with. A resource counts as the machine's only once its helper said so; a refused or failed one
//! keeps what was confirmed before (or nothing), so it stays in the next plan.
//!
//! The copy holds resources as sent, except that a sealed secret file keeps only its keyed
//! digest, never its content: a plan shows only that a secret changes.

use std::collections::{BTreeMap, HashMap};

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

/// Makes what `node` has confirmed `now` (confirmed by push `push_id`), inside the caller's
/// transaction. Only the rows that differ are written: a resource confirmed again as it was keeps
/// its row, and with it the push that confirmed it so. A no-op push rewrote every node's whole
/// copy before, each file's content twice with SQLite's journal: 7.2 MB for ten nodes, three of
/// them with forty 24 KB files.
pub(super) fn replace(
    tx: &Transaction<'_>,
    node: &str,
    push_id: i64,
    now: &[Resource],
) -> Result<(), InventoryError> {
    let mut stored = stored_rows(tx, node)?;
    for (position, r) in now.iter().enumerate() {
        let mut r = r.clone();
        r.drop_ciphertext();
        let text = serde_json::to_string(&r).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!("{}: {e}", r.id)))
        })?;
        let position = position as i64;
        match stored.remove(&r.id) {
            Some((at, kept)) if at == position && kept == text => {}
            Some(_) => {
                tx.prepare_cached(
                    "UPDATE confirmed SET position = ?3, push_id = ?4, resource = ?5
                     WHERE node = ?1 AND id = ?2",
                )?
                .execute(params![node, r.id, position, push_id, text])?;
            }
            None => {
                tx.prepare_cached(
                    "INSERT INTO confirmed (node, id, position, push_id, resource)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![node, r.id, position, push_id, text])?;
            }
        }
    }
    // what is left was confirmed before and is not now
    for id in stored.keys() {
        tx.prepare_cached("DELETE FROM confirmed WHERE node = ?1 AND id = ?2")?
            .execute(params![node, id])?;
    }
    Ok(())
}

/// `node`'s confirmed rows as stored: each resource's id, with its position and its text.
fn stored_rows(
    tx: &Transaction<'_>,
    node: &str,
) -> Result<HashMap<String, (i64, String)>, InventoryError> {
    let mut stmt =
        tx.prepare_cached("SELECT id, position, resource FROM confirmed WHERE node = ?1")?;
    let rows = stmt.query_map([node], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
    let mut out = HashMap::new();
    for row in rows {
        let (id, kept) = row?;
        out.insert(id, kept);
    }
    Ok(out)
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
#[path = "confirmed_tests.rs"]
mod tests;
