//! Pushes: every push's outcome, and what each node was last sent.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Inventory, InventoryError};
use crate::wire::Declaration;

/// What one node's push came to, to be recorded.
#[derive(Debug, Clone)]
pub struct PushRecord {
    pub node: String,
    pub started_at: String,
    pub digest: String,
    /// The declaration, as sent (JSON).
    pub declaration: String,
    /// Whether the helper answered: then the declaration counts as sent.
    pub sent: bool,
    /// `applied` or `failed`.
    pub outcome: String,
    pub reason: Option<String>,
    /// The helper's report (JSON), when it answered.
    pub report: Option<String>,
}

/// One row of the push history.
#[derive(Debug, Clone, Serialize)]
pub struct PushRow {
    pub id: i64,
    pub node: String,
    pub started_at: String,
    pub finished_at: String,
    pub outcome: String,
    pub reason: Option<String>,
    pub digest: String,
}

impl Inventory {
    /// Records a push's outcomes, all in one transaction.
    pub fn record_pushes(&mut self, records: &[PushRecord]) -> Result<(), InventoryError> {
        let tx = self.conn.transaction()?;
        for r in records {
            tx.execute(
                "INSERT INTO pushes (node, started_at, digest, outcome, reason, report)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    r.node,
                    r.started_at,
                    r.digest,
                    r.outcome,
                    r.reason,
                    r.report
                ],
            )?;
            let id = tx.last_insert_rowid();
            if r.sent {
                tx.execute(
                    "INSERT INTO sent (node, push_id, digest, declaration) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (node) DO UPDATE SET push_id = ?2, digest = ?3, declaration = ?4",
                    params![r.node, id, r.digest, r.declaration],
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// What `node` was last sent, if anything.
    pub fn last_sent(&self, node: &str) -> Result<Option<Declaration>, InventoryError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT declaration FROM sent WHERE node = ?1",
                [node],
                |r| r.get(0),
            )
            .optional()?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| {
                InventoryError::Corrupt(format!("what {node} was last sent cannot be read: {e}"))
            })
        })
        .transpose()
    }

    /// The helper's report from the last push to `node` that it answered: it says what undoing
    /// each resource would do now, which the plan shows for resources about to be undeclared.
    pub fn last_report(&self, node: &str) -> Result<Option<crate::wire::Report>, InventoryError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT report FROM pushes WHERE node = ?1 AND report IS NOT NULL ORDER BY id DESC LIMIT 1",
                [node],
                |r| r.get(0),
            )
            .optional()?;
        // a report an older mesh wrote and this one cannot read only costs the plan its detail
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// The outcome of `node`'s last push, if any.
    pub fn last_outcome(&self, node: &str) -> Result<Option<String>, InventoryError> {
        Ok(self
            .conn
            .query_row(
                "SELECT outcome FROM pushes WHERE node = ?1 ORDER BY id DESC LIMIT 1",
                [node],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The push history, newest first (of one node, or of all).
    pub fn push_history(
        &self,
        node: Option<&str>,
        limit: i64,
    ) -> Result<Vec<PushRow>, InventoryError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, node, started_at, finished_at, outcome, reason, digest FROM pushes
             WHERE ?1 IS NULL OR node = ?1 ORDER BY id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![node, limit], |r| {
            Ok(PushRow {
                id: r.get(0)?,
                node: r.get(1)?,
                started_at: r.get(2)?,
                finished_at: r.get(3)?,
                outcome: r.get(4)?,
                reason: r.get(5)?,
                digest: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
