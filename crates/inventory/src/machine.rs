//! Whether the machine at a node's address is the one the inventory knows: a machine rebuilt in
//! place (a blank disk, new host keys, the same address) is new, not a machine that lost its
//! record. What tells them apart is the host key: the node's pinned key is one the machine had
//! when its helper last answered, or it is another machine.
//!
//! A machine found new (no record, no signs of the mesh) has nothing the inventory confirmed of
//! it: that is forgotten, so the plan shows everything to add and the push applies in full.

use rusqlite::{OptionalExtension as _, params};

use super::{Inventory, InventoryError, Node};
use mesh_wire::Report;

/// How `mesh check` records a machine it found new.
pub(super) const FOUND_NEW: &str = "new";

/// The last row of a node's history its helper answered (a reverted push's report is not what
/// the machine kept): its outcome and the host keys its report names (only those are read, so a
/// plan of a large fleet does not parse every report again).
const LAST_ANSWER: &str = "SELECT outcome, json_extract(report, '$.host_keys') FROM pushes
       WHERE node = ?1 AND report IS NOT NULL AND outcome != 'reverted'
       ORDER BY id DESC LIMIT 1";

/// A public key as `TYPE BASE64`, without its comment.
fn key_words(key: &str) -> String {
    key.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

impl Inventory {
    /// The outcome of the last push (or check that found the machine new) that `node`'s helper
    /// answered, and the host keys it said the machine has.
    fn last_answer(&self, node: &str) -> Result<Option<(String, Vec<String>)>, InventoryError> {
        let row: Option<(String, Option<String>)> = self
            .conn
            .prepare_cached(LAST_ANSWER)?
            .query_row([node], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        // a report an older helper wrote names no keys
        Ok(row.map(|(outcome, keys)| {
            let keys = keys
                .and_then(|k| serde_json::from_str(&k).ok())
                .unwrap_or_default();
            (outcome, keys)
        }))
    }

    /// Whether `node`'s pinned host key is not one its machine had when its helper last
    /// answered: another machine is at its address (rebuilt), until it is asked. A node with no
    /// pinned key, or whose helper never said its keys, is taken as the same machine.
    pub fn rekeyed(&self, node: &Node) -> Result<bool, InventoryError> {
        let Some(pinned) = node.host_key.as_deref() else {
            return Ok(false);
        };
        let Some((_, keys)) = self.last_answer(&node.name)? else {
            return Ok(false);
        };
        let pinned = key_words(pinned);
        Ok(!keys.is_empty() && !keys.iter().any(|k| key_words(k) == pinned))
    }

    /// Whether the machine should have a record: its helper answered a push, it was not found
    /// new since, and it is the same machine (its host key). A machine with no record is then
    /// refused as having lost it, never taken for new.
    pub fn knows_record(&self, node: &Node) -> Result<bool, InventoryError> {
        let answered = self
            .last_answer(&node.name)?
            .is_some_and(|(outcome, _)| outcome != FOUND_NEW);
        Ok(answered && !self.rekeyed(node)?)
    }

    /// Whether `mesh check` found the node's machine new since its last push.
    pub fn found_new(&self, node: &str) -> Result<bool, InventoryError> {
        Ok(self
            .last_answer(node)?
            .is_some_and(|(outcome, _)| outcome == FOUND_NEW))
    }

    /// Records that `mesh check` found `node`'s machine new (`report` says so), in one
    /// transaction: what the inventory had confirmed of it is forgotten, and the history says
    /// why. Nothing is recorded for a node the inventory knew nothing of, or already found new.
    pub fn record_found_new(
        &mut self,
        node: &str,
        started_at: &str,
        digest: &str,
        report: &Report,
    ) -> Result<(), InventoryError> {
        let knew = self.last_answer(node)?.is_some() || self.confirmed(node)?.is_some();
        // a push running now records what it made there itself
        if !report.new_machine || !knew || self.found_new(node)? || self.in_flight(node)? {
            return Ok(());
        }
        let text = serde_json::to_string(report).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!(
                "{node}'s report: {e}"
            )))
        })?;
        let run = self.run.clone();
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM confirmed WHERE node = ?1", [node])?;
        tx.execute(
            "INSERT INTO pushes (node, started_at, digest, outcome, reason, report, run)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                node,
                started_at,
                digest,
                FOUND_NEW,
                "`mesh check` found no record and no signs of the mesh: a new machine (rebuilt?); \
                 what it had confirmed before is forgotten, and the next push applies everything",
                text,
                run
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Forgets what `node`'s machine confirmed: it was found new (adopted as new).
    pub fn forget_confirmed(&mut self, node: &str) -> Result<(), InventoryError> {
        self.conn
            .execute("DELETE FROM confirmed WHERE node = ?1", [node])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PushRecord;
    use mesh_wire::{Mode, VERSION};

    fn report(mode: Mode, keys: &[&str], new_machine: bool) -> Report {
        Report {
            version: VERSION,
            mode,
            hostname: "n".into(),
            host_keys: keys.iter().map(|k| k.to_string()).collect(),
            new_machine,
            resources: Vec::new(),
            units: Vec::new(),
            adoption: None,
            awaiting: None,
            pending: None,
            reverted: Vec::new(),
            generation: None,
            facts: None,
            steps: Vec::new(),
            generation_not_kept: None,
        }
    }

    fn pinned(inv: &mut Inventory, key: &str) -> Node {
        let mut node = Node::new("n", "127.0.0.1");
        node.host_key = Some(key.to_string());
        if inv.node("n").is_err() {
            inv.add_node(&node).unwrap();
        }
        node
    }

    #[test]
    fn a_machine_whose_pinned_key_it_no_longer_has_is_another_until_asked() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        let old = pinned(&mut inv, "ssh-ed25519 AAAAold root@n");
        assert!(!inv.knows_record(&old).unwrap(), "never answered");
        inv.record_push(&PushRecord::answered(
            "n",
            "t0",
            "d",
            &report(
                Mode::Apply,
                &["ssh-ed25519 AAAAold", "ssh-rsa AAAArsa"],
                true,
            ),
        ))
        .unwrap();
        assert!(inv.knows_record(&old).unwrap(), "answered, same key");
        assert!(!inv.rekeyed(&old).unwrap());

        let mut new = old.clone();
        new.host_key = Some("ssh-ed25519 AAAAnew".into());
        assert!(inv.rekeyed(&new).unwrap());
        assert!(!inv.knows_record(&new).unwrap(), "another machine");
        let mut unpinned = old.clone();
        unpinned.host_key = None;
        assert!(
            inv.knows_record(&unpinned).unwrap(),
            "no pin: the same machine"
        );

        // check finds it new: what was confirmed is forgotten, and the next push applies in full
        inv.record_found_new(
            "n",
            "t1",
            "d",
            &report(Mode::DryRun, &["ssh-ed25519 AAAAnew"], true),
        )
        .unwrap();
        assert!(inv.found_new("n").unwrap());
        assert!(!inv.rekeyed(&new).unwrap(), "the machine said its new key");
        assert!(
            !inv.knows_record(&new).unwrap(),
            "found new: no record expected"
        );
        assert_eq!(
            inv.confirmed("n").unwrap().map(|d| d.resources.len()),
            Some(0)
        );
        // said once
        inv.record_found_new(
            "n",
            "t2",
            "d",
            &report(Mode::DryRun, &["ssh-ed25519 AAAAnew"], true),
        )
        .unwrap();
        assert_eq!(inv.push_history(None, 10).unwrap().len(), 2);
    }

    #[test]
    fn a_check_of_a_machine_the_inventory_never_knew_records_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        pinned(&mut inv, "ssh-ed25519 AAAA");
        inv.record_found_new("n", "t", "d", &report(Mode::DryRun, &[], true))
            .unwrap();
        assert!(inv.push_history(None, 10).unwrap().is_empty());
        assert!(!inv.found_new("n").unwrap());
    }
}
