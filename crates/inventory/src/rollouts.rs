//! Rollouts: a push in waves, recorded as it goes (each node's wave, and what its push came
//! to), so that a rollout stopped by its failure budget, or cut short by a killed operator, is
//! resumed with the nodes not yet done.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Inventory, InventoryError};

/// Where a rollout is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RolloutState {
    /// Its waves are being pushed (or the operator was killed while they were).
    Running,
    /// A failure stopped it: the nodes not sent are held, for `push --resume`.
    Stopped,
    /// Every wave was pushed.
    Done,
}

/// What one node of a rollout came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeOutcome {
    Applied,
    /// Sent, and its push failed: counted against the failure budget.
    Failed,
    /// Not reached (no connection): counted apart, never against the budget.
    Unreachable,
    /// Not sent: the rollout stopped before its wave.
    Held,
    /// Sent nothing: it could not be composed, or a running container's data would move.
    Refused,
}

/// The names SQLite stores, the same as JSON's.
macro_rules! named {
    ($t:ty { $($v:ident => $s:literal),* }) => {
        impl $t {
            pub fn as_str(self) -> &'static str {
                match self { $(<$t>::$v => $s),* }
            }
            fn parse(text: &str) -> Result<$t, InventoryError> {
                match text {
                    $($s => Ok(<$t>::$v),)*
                    other => Err(InventoryError::Storage(crate::StorageError::Corrupt(format!(
                        "a rollout holds {other:?}, which this mesh does not know"
                    )))),
                }
            }
        }
    };
}
named!(RolloutState { Running => "running", Stopped => "stopped", Done => "done" });
named!(NodeOutcome { Applied => "applied", Failed => "failed", Unreachable => "unreachable",
    Held => "held", Refused => "refused" });

/// One node's place in a rollout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RolloutNode {
    pub node: String,
    /// Its wave, from 1.
    pub wave: usize,
    pub canary: bool,
    /// `None` until its push answered.
    pub outcome: Option<NodeOutcome>,
    /// A digest of what the rollout planned to send it; `None`: a rollout recorded before
    /// this was kept. Not part of any answer.
    #[serde(skip)]
    pub planned: Option<String>,
}

/// A rollout as recorded.
#[derive(Debug, Clone, Serialize)]
pub struct RolloutRow {
    pub id: i64,
    pub started_at: String,
    pub state: RolloutState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    pub nodes: Vec<RolloutNode>,
}

impl RolloutRow {
    /// The nodes not yet applied, in their waves: what `push --resume` sends.
    pub fn left(&self) -> Vec<&RolloutNode> {
        self.nodes
            .iter()
            .filter(|n| n.outcome != Some(NodeOutcome::Applied))
            .collect()
    }
}

impl Inventory {
    /// Records a new rollout, running, with every node's wave; its id.
    pub fn begin_rollout(
        &mut self,
        started_at: &str,
        nodes: &[RolloutNode],
    ) -> Result<i64, InventoryError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO rollouts (started_at, state) VALUES (?1, ?2)",
            params![started_at, RolloutState::Running.as_str()],
        )?;
        let id = tx.last_insert_rowid();
        for n in nodes {
            tx.execute(
                "INSERT INTO rollout_nodes (rollout, node, wave, canary, planned)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, n.node, n.wave as i64, n.canary, n.planned],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// What one node of rollout `id` came to.
    pub fn note_rollout_node(
        &mut self,
        id: i64,
        node: &str,
        outcome: NodeOutcome,
    ) -> Result<(), InventoryError> {
        self.note_rollout_nodes(id, &[(node, outcome)])
    }

    /// What each node of rollout `id` came to, in one transaction: a wave's answers are noted
    /// together once it has answered, not one commit (and its syncs) per node after the last
    /// machine answered.
    pub fn note_rollout_nodes(
        &mut self,
        id: i64,
        outcomes: &[(&str, NodeOutcome)],
    ) -> Result<(), InventoryError> {
        let tx = self.conn.transaction()?;
        for (node, outcome) in outcomes {
            tx.prepare_cached(
                "UPDATE rollout_nodes SET outcome = ?3 WHERE rollout = ?1 AND node = ?2",
            )?
            .execute(params![id, node, outcome.as_str()])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Rollout `id` is running again, stopped (by what), or done.
    pub fn set_rollout_state(
        &mut self,
        id: i64,
        state: RolloutState,
        stopped_by: Option<&str>,
    ) -> Result<(), InventoryError> {
        self.conn.execute(
            "UPDATE rollouts SET state = ?2, stopped_by = ?3 WHERE id = ?1",
            params![id, state.as_str(), stopped_by],
        )?;
        Ok(())
    }

    /// The last rollout recorded, if any.
    pub fn last_rollout(&self) -> Result<Option<RolloutRow>, InventoryError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, started_at, state, stopped_by FROM rollouts ORDER BY id DESC LIMIT 1",
                [],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                    ))
                },
            )
            .optional()?;
        let Some((id, started_at, state, stopped_by)) = row else {
            return Ok(None);
        };
        let mut stmt = self.conn.prepare(
            "SELECT node, wave, canary, outcome, planned FROM rollout_nodes WHERE rollout = ?1
             ORDER BY wave, node",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<String>>(4)?,
            ))
        })?;
        let mut nodes = Vec::new();
        for row in rows {
            let (node, wave, canary, outcome, planned) = row?;
            nodes.push(RolloutNode {
                node,
                wave: usize::try_from(wave).unwrap_or(0),
                canary,
                outcome: outcome.as_deref().map(NodeOutcome::parse).transpose()?,
                planned,
            });
        }
        Ok(Some(RolloutRow {
            id,
            started_at,
            state: RolloutState::parse(&state)?,
            stopped_by,
            nodes,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::{NodeOutcome, RolloutNode, RolloutState};

    #[test]
    fn a_rollout_is_recorded_as_it_goes_and_what_is_left_is_what_was_not_applied() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = crate::Inventory::init(&dir.path().join("i.db")).unwrap();
        assert!(inv.last_rollout().unwrap().is_none());
        let n = |node: &str, wave| RolloutNode {
            node: node.into(),
            wave,
            canary: wave == 1,
            outcome: None,
            planned: None,
        };
        let id = inv
            .begin_rollout("now", &[n("a", 1), n("b", 2), n("c", 2)])
            .unwrap();
        inv.note_rollout_node(id, "a", NodeOutcome::Applied)
            .unwrap();
        // a wave's answers, noted together
        inv.note_rollout_nodes(
            id,
            &[("b", NodeOutcome::Failed), ("c", NodeOutcome::Unreachable)],
        )
        .unwrap();
        inv.set_rollout_state(id, RolloutState::Stopped, Some("b failed"))
            .unwrap();
        let r = inv.last_rollout().unwrap().unwrap();
        assert_eq!(r.state, RolloutState::Stopped);
        assert_eq!(r.stopped_by.as_deref(), Some("b failed"));
        let left: Vec<(&str, usize)> = r.left().iter().map(|n| (n.node.as_str(), n.wave)).collect();
        assert_eq!(left, vec![("b", 2), ("c", 2)]);
        let outcomes: Vec<Option<NodeOutcome>> = r.nodes.iter().map(|n| n.outcome).collect();
        assert_eq!(
            outcomes,
            [
                Some(NodeOutcome::Applied),
                Some(NodeOutcome::Failed),
                Some(NodeOutcome::Unreachable)
            ]
        );
    }
}
