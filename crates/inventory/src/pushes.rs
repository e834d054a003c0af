//! Pushes: every push's outcome, recorded as it happens (in flight, then finished).

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;

use super::{Inventory, InventoryError};
use mesh_wire::{Declaration, Report};

/// What one node's push came to, to be recorded.
#[derive(Debug, Clone)]
pub struct PushRecord {
    pub node: String,
    pub started_at: String,
    pub digest: String,
    /// `applied`, `failed`, `held` or `adopted`.
    pub outcome: String,
    pub reason: Option<String>,
    /// The helper's report, when it answered.
    pub report: Option<Report>,
}

impl PushRecord {
    /// A push its helper answered: applied, or failed when any resource or unit did.
    pub fn answered(node: &str, started_at: &str, digest: &str, report: &Report) -> PushRecord {
        let failed = report.failed();
        PushRecord {
            node: node.to_string(),
            started_at: started_at.to_string(),
            digest: digest.to_string(),
            outcome: if failed { "failed" } else { "applied" }.into(),
            reason: failed.then(|| "some resources failed; see the report".to_string()),
            report: Some(report.clone()),
        }
    }
}

/// The outcome of a push that was sent and never finished.
const IN_FLIGHT: &str = "in-flight";

/// How the reason of a push in flight begins when it left a change awaiting confirmation; the
/// change's id follows.
const PENDING: &str = "pending confirmation: change ";

/// The reason of a node's last push, if it is in flight.
const LAST_REASON: &str = "SELECT reason FROM (SELECT reason, outcome FROM pushes WHERE node = ?1
     ORDER BY id DESC LIMIT 1) WHERE outcome = ?2";

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
    /// The generation the push made on its machine, if it made one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// The generation push `pushes.id` made, as a column.
const GENERATION_OF: &str = "(SELECT number FROM generation_history g WHERE g.push_id = pushes.id)";

/// The helper's report from a node's last push it answered.
/// (A reverted push's report is not what the machine kept.)
pub(super) const LAST_REPORT: &str =
    "SELECT report FROM pushes WHERE node = ?1 AND report IS NOT NULL
       AND outcome != 'reverted' ORDER BY id DESC LIMIT 1";
/// How a node's last push ended.
pub(super) const LAST_OUTCOME: &str =
    "SELECT outcome FROM pushes WHERE node = ?1 ORDER BY id DESC LIMIT 1";

impl Inventory {
    /// Records a push that ends where it starts (held, adopted).
    pub fn record_push(&mut self, r: &PushRecord) -> Result<(), InventoryError> {
        let report = report_text(r)?;
        self.conn.execute(
            "INSERT INTO pushes (node, started_at, digest, outcome, reason, report, run)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                r.node,
                r.started_at,
                r.digest,
                r.outcome,
                r.reason,
                report,
                self.run
            ],
        )?;
        Ok(())
    }

    /// Marks every node in flight, all or none, before any declaration is sent; `nodes` are
    /// (node, digest of what it is sent). Returns each push's id, in order. A push of a node that
    /// never finished is closed as interrupted: this one asks the machine again.
    pub fn begin_pushes(
        &mut self,
        started_at: &str,
        nodes: &[(&str, &str)],
    ) -> Result<Vec<i64>, InventoryError> {
        let run = self.run.clone();
        let tx = self.conn.transaction()?;
        let mut ids = Vec::new();
        for (node, digest) in nodes {
            close_interrupted(&tx, node, "a later push")?;
            tx.execute(
                "INSERT INTO pushes (node, started_at, digest, outcome, nonce, run)
                 VALUES (?1, ?2, ?3, ?4, lower(hex(randomblob(8))), ?5)",
                params![node, started_at, digest, IN_FLIGHT, run],
            )?;
            ids.push(tx.last_insert_rowid());
        }
        tx.commit()?;
        Ok(ids)
    }

    /// Records how push `id` ended, and what its helper confirmed (when it answered `sent`), in
    /// one transaction of its own.
    pub fn finish_push(
        &mut self,
        id: i64,
        r: &PushRecord,
        sent: Option<&Declaration>,
    ) -> Result<(), InventoryError> {
        let text = report_text(r)?;
        // sealed to the operator before the transaction: sealing reads the operator's key
        let copies = match (sent, r.report.as_ref().and_then(|r| r.generation.as_ref())) {
            (Some(sent), Some(_)) => self.copies_to_keep(sent)?,
            _ => Vec::new(),
        };
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE pushes SET outcome = ?2, reason = ?3, report = ?4,
                 finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
             WHERE id = ?1",
            params![id, r.outcome, r.reason, text],
        )?;
        if let Some(report) = &r.report {
            super::facts::store_pushed(&tx, &r.node, report)?;
        }
        if let (Some(sent), Some(report)) = (sent, &r.report) {
            super::confirmed::store(&tx, &r.node, id, sent, report)?;
            // the generation the machine confirmed: the next push is planned against it
            if let Some(generation) = &report.generation {
                super::generations::store(&tx, &r.node, generation)?;
                super::generation_history::keep(&tx, &r.node, id, generation, sent)?;
                super::secret_copies::keep(&tx, &copies)?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Reconciles a node whose last push was interrupted with its helper's dry run of `sent`:
    /// what it found already as sent is confirmed, and the interrupted push is closed. A node
    /// not in flight is left as it is.
    pub fn reconcile(
        &mut self,
        node: &str,
        sent: &Declaration,
        report: &Report,
    ) -> Result<(), InventoryError> {
        let tx = self.conn.transaction()?;
        let id: Option<i64> = tx
            .prepare_cached(
                "SELECT id FROM pushes WHERE node = ?1 AND outcome = ?2 ORDER BY id DESC LIMIT 1",
            )?
            .query_row(params![node, IN_FLIGHT], |r| r.get(0))
            .optional()?;
        let Some(id) = id else {
            return Ok(());
        };
        super::confirmed::store(&tx, node, id, sent, report)?;
        close_interrupted(&tx, node, "`mesh check`")?;
        tx.commit()?;
        Ok(())
    }

    /// Notes that `node`'s push in flight left change `id` awaiting confirmation on the machine
    /// (its helper said so, or a check found it): it stays in flight, unconfirmed, until the
    /// machine says the change was confirmed or reverted. A node not in flight is left as it is.
    pub fn note_pending(&mut self, node: &str, id: &str) -> Result<(), InventoryError> {
        self.conn.execute(
            "UPDATE pushes SET reason = ?3 WHERE node = ?1 AND outcome = ?2",
            params![
                node,
                IN_FLIGHT,
                format!("{PENDING}{id} on the machine; recorded once it is confirmed or reverted")
            ],
        )?;
        Ok(())
    }

    /// Leaves push `id` in flight, saying `reason`: the machine did not say what it has (a
    /// confirm whose answer never came back), so the next push or check asks it.
    pub fn leave_in_flight(&mut self, id: i64, reason: &str) -> Result<(), InventoryError> {
        self.conn.execute(
            "UPDATE pushes SET reason = ?3 WHERE id = ?1 AND outcome = ?2",
            params![id, IN_FLIGHT, reason],
        )?;
        Ok(())
    }

    /// The change `node`'s push in flight left awaiting confirmation, if it is noted.
    pub fn pending_confirmation(&self, node: &str) -> Result<Option<String>, InventoryError> {
        let reason: Option<Option<String>> = self
            .conn
            .prepare_cached(LAST_REASON)?
            .query_row(params![node, IN_FLIGHT], |r| r.get(0))
            .optional()?;
        Ok(reason
            .flatten()
            .and_then(|r| {
                let rest = r.strip_prefix(PENDING)?;
                rest.split_whitespace().next().map(str::to_string)
            })
            .filter(|id| mesh_wire::Awaiting::valid_id(id)))
    }

    /// Whether `node`'s last push was sent and never recorded as finished.
    pub fn in_flight(&self, node: &str) -> Result<bool, InventoryError> {
        Ok(self.last_outcome(node)?.as_deref() == Some(IN_FLIGHT))
    }

    /// Whether the last push to `node` may have changed the machine unseen: it is in flight
    /// (never recorded), or it failed with no answer from the helper (a timeout, a dropped
    /// connection), which may have applied before it went.
    pub fn unanswered(&self, node: &str) -> Result<bool, InventoryError> {
        let last: Option<(String, bool)> = self
            .conn
            .prepare_cached(
                "SELECT outcome, report IS NULL FROM pushes WHERE node = ?1 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([node], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(last.is_some_and(|(outcome, no_report)| {
            outcome == IN_FLIGHT || (outcome == "failed" && no_report)
        }))
    }

    /// The nonce of push `id` (`begin_pushes` gives every push one): the generation it makes
    /// on the machine carries it.
    pub fn push_nonce(&self, id: i64) -> Result<Option<String>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached("SELECT nonce FROM pushes WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?
            .flatten())
    }

    /// The nonce of `node`'s last push when it is unanswered (see [`Inventory::unanswered`]).
    pub fn unanswered_nonce(&self, node: &str) -> Result<Option<String>, InventoryError> {
        if !self.unanswered(node)? {
            return Ok(None);
        }
        Ok(self
            .conn
            .prepare_cached("SELECT nonce FROM pushes WHERE node = ?1 ORDER BY id DESC LIMIT 1")?
            .query_row([node], |r| r.get(0))
            .optional()?
            .flatten())
    }

    /// The helper's report from the last push to `node` that it answered: it says what undoing
    /// each resource would do now, which the plan shows for resources about to be undeclared.
    pub fn last_report(&self, node: &str) -> Result<Option<mesh_wire::Report>, InventoryError> {
        // a reverted push's report tells of changes the machine put back: not what it has
        let text: Option<String> = self
            .conn
            .prepare_cached(LAST_REPORT)?
            .query_row([node], |r| r.get(0))
            .optional()?;
        // a report an older mesh wrote and this one cannot read only costs the plan its detail
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// The outcome of `node`'s last push, if any.
    pub fn last_outcome(&self, node: &str) -> Result<Option<String>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(LAST_OUTCOME)?
            .query_row([node], |r| r.get(0))
            .optional()?)
    }

    /// The push history, newest first (of these nodes, or of all).
    pub fn push_history(
        &self,
        nodes: Option<&[&str]>,
        limit: i64,
    ) -> Result<Vec<PushRow>, InventoryError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT id, node, started_at, finished_at, outcome, reason, digest, {GENERATION_OF}
                 FROM pushes WHERE ?1 IS NULL OR node IN (SELECT value FROM json_each(?1))
                 ORDER BY id DESC LIMIT ?2"
        ))?;
        let nodes = nodes.map(|n| serde_json::json!(n).to_string());
        let rows = stmt.query_map(params![nodes, limit], push_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One past push by its id (as `push_history` lists it) with the report its helper gave,
    /// when it answered; `None` when there is no such push.
    pub fn push_by_id(&self, id: i64) -> Result<Option<(PushRow, Option<Report>)>, InventoryError> {
        let row = self
            .conn
            .prepare_cached(&format!(
                "SELECT id, node, started_at, finished_at, outcome, reason, digest, {GENERATION_OF},
                 report FROM pushes WHERE id = ?1"
            ))?
            .query_row([id], |r| Ok((push_row(r)?, r.get::<_, Option<String>>(8)?)))
            .optional()?;
        let Some((row, text)) = row else {
            return Ok(None);
        };
        let report = text
            .map(|t| serde_json::from_str(&t))
            .transpose()
            .map_err(|e| {
                InventoryError::Storage(crate::StorageError::Corrupt(format!(
                    "push #{id}'s report: {e}"
                )))
            })?;
        Ok(Some((row, report)))
    }
}

fn report_text(r: &PushRecord) -> Result<Option<String>, InventoryError> {
    r.report
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!(
                "{}'s report: {e}",
                r.node
            )))
        })
}

/// Closes `node`'s push left in flight: `by` (a later push, a check) asked the machine since.
fn close_interrupted(tx: &Transaction<'_>, node: &str, by: &str) -> Result<(), InventoryError> {
    tx.execute(
        "UPDATE pushes SET outcome = 'interrupted', reason = ?3 WHERE node = ?1 AND outcome = ?2",
        params![
            node,
            IN_FLIGHT,
            format!("interrupted before its result was recorded; {by} asked the machine")
        ],
    )?;
    Ok(())
}

/// A row of `pushes` read as its first eight columns are selected (id, node, started_at,
/// finished_at, outcome, reason, digest, the generation it made).
fn push_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PushRow> {
    Ok(PushRow {
        id: r.get(0)?,
        node: r.get(1)?,
        started_at: r.get(2)?,
        finished_at: r.get(3)?,
        outcome: r.get(4)?,
        reason: r.get(5)?,
        digest: r.get(6)?,
        generation: r.get(7)?,
    })
}
