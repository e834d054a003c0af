//! Assignments: a module on a node, under an instance name.

use rusqlite::params;
use serde::Serialize;

use super::nodes::{COLUMN_COUNT, COLUMNS, from_row};
use super::{Inventory, InventoryError, Node};

/// A module on a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assignment {
    pub node: String,
    /// The name it runs under on that node (by default the module's).
    pub instance: String,
    pub module: String,
}

/// One node's assignments.
pub(super) const NODE_ASSIGNMENTS: &str =
    "SELECT node, instance, module FROM assignments WHERE node = ?1 ORDER BY node, instance";

impl Inventory {
    /// Assigns `module` to `node` as `instance`.
    pub fn assign(&self, node: &str, module: &str, instance: &str) -> Result<(), InventoryError> {
        self.node(node)?;
        if let Some(a) = self
            .assignments(Some(node))?
            .into_iter()
            .find(|a| a.instance == instance)
        {
            return Err(InventoryError::Refused(crate::Refusal::AlreadyAssigned {
                node: node.to_string(),
                instance: instance.to_string(),
                module: a.module,
            }));
        }
        self.conn.execute(
            "INSERT INTO assignments (node, instance, module) VALUES (?1, ?2, ?3)",
            params![node, instance, module],
        )?;
        Ok(())
    }

    /// Takes `instance` off `node`.
    pub fn unassign(&self, node: &str, instance: &str) -> Result<Assignment, InventoryError> {
        self.node(node)?;
        let here = self.assignments(Some(node))?;
        let Some(a) = here.iter().find(|a| a.instance == instance).cloned() else {
            let known: Vec<&str> = here.iter().map(|a| a.instance.as_str()).collect();
            return Err(InventoryError::Refused(crate::Refusal::NotAssigned {
                node: node.to_string(),
                instance: instance.to_string(),
                known: if known.is_empty() {
                    "nothing".into()
                } else {
                    known.join(", ")
                },
            }));
        };
        self.conn.execute(
            "DELETE FROM assignments WHERE node = ?1 AND instance = ?2",
            params![node, instance],
        )?;
        Ok(a)
    }

    /// Every assignment (of one node, or of all), by node then instance.
    pub fn assignments(&self, node: Option<&str>) -> Result<Vec<Assignment>, InventoryError> {
        // two statements rather than `?1 IS NULL OR`: that form keeps SQLite off the index, and
        // one node's assignments would cost a read of every node's
        let mut stmt = self.conn.prepare_cached(if node.is_some() {
            NODE_ASSIGNMENTS
        } else {
            "SELECT node, instance, module FROM assignments WHERE ?1 IS NULL ORDER BY node, instance"
        })?;
        let rows = stmt.query_map([node], |r| {
            Ok(Assignment {
                node: r.get(0)?,
                instance: r.get(1)?,
                module: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl Inventory {
    /// How many assignments any of `modules` has, counting no further than `at_most`: whether a
    /// provision has one provider or several, without reading (and sorting) all of them.
    pub fn count_assigned(
        &self,
        modules: &[&str],
        at_most: usize,
    ) -> Result<usize, InventoryError> {
        let modules = serde_json::to_string(modules).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!("module names: {e}")))
        })?;
        let at_most = i64::try_from(at_most).unwrap_or(i64::MAX);
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM (SELECT 1 FROM assignments
                 WHERE module IN (SELECT value FROM json_each(?1)) LIMIT ?2)",
            )?
            .query_row(params![modules, at_most], |r| r.get(0))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// The assignments of any of `modules`, each with its node, by node then instance: on `node`
    /// only when one is named, and at most `limit` of them. Resolution asks this for a
    /// provision's providers, so a fleet-wide plan never reads every assignment once per node.
    pub fn assignments_of(
        &self,
        modules: &[&str],
        node: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<(Assignment, Node)>, InventoryError> {
        let modules = serde_json::to_string(modules).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!("module names: {e}")))
        })?;
        let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
        // two statements rather than `?2 IS NULL OR`, as in `assignments`
        let on_node = if node.is_some() {
            "AND a.node = ?2"
        } else {
            "AND ?2 IS NULL"
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS}, a.instance, a.module FROM assignments AS a
             JOIN nodes ON nodes.name = a.node
             WHERE a.module IN (SELECT value FROM json_each(?1)) {on_node}
             ORDER BY a.node, a.instance LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![modules, node, limit], |r| {
            let node = from_row(r)?;
            Ok((
                Assignment {
                    node: node.name.clone(),
                    instance: r.get(COLUMN_COUNT)?,
                    module: r.get(COLUMN_COUNT + 1)?,
                },
                node,
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
