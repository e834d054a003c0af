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
        // module by module through `assignments_by_module`: `module IN (SELECT value FROM
        // json_each(…))` costs SQLite a subquery and a Bloom filter of 10,000 bytes at every call
        let mut stmt = self.conn.prepare_cached(
            "SELECT count(*) FROM (SELECT 1 FROM assignments WHERE module = ?1 LIMIT ?2)",
        )?;
        let mut n = 0usize;
        for (i, module) in modules.iter().enumerate() {
            if n >= at_most {
                break;
            }
            // a module named twice is counted once, as `IN` counts it
            if modules[..i].contains(module) {
                continue;
            }
            let left = i64::try_from(at_most - n).unwrap_or(i64::MAX);
            let found: i64 = stmt.query_row(params![module, left], |r| r.get(0))?;
            n += usize::try_from(found).unwrap_or(usize::MAX);
        }
        Ok(n)
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
        let Some(node) = node else {
            return self.assignments_of_fleet(modules, limit);
        };
        // one node's few assignments, found by the table's key and sifted here: `module IN
        // (SELECT value FROM json_each(…))` costs SQLite a subquery and a Bloom filter of 10,000
        // bytes at every call, and a plan asks this of every node
        let mut stmt = self.conn.prepare_cached(&NODE_ASSIGNMENTS_WITH_NODE)?;
        let rows = stmt.query_map([node], assignment_with_node)?;
        let mut out = Vec::new();
        for row in rows {
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            let (a, n) = row?;
            if modules.contains(&a.module.as_str()) {
                out.push((a, n));
            }
        }
        Ok(out)
    }

    /// [`Inventory::assignments_of`] on every node.
    fn assignments_of_fleet(
        &self,
        modules: &[&str],
        limit: Option<usize>,
    ) -> Result<Vec<(Assignment, Node)>, InventoryError> {
        let modules = serde_json::to_string(modules).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!("module names: {e}")))
        })?;
        let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS}, a.instance, a.module FROM assignments AS a
             JOIN nodes ON nodes.name = a.node
             WHERE a.module IN (SELECT value FROM json_each(?1))
             ORDER BY a.node, a.instance LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![modules, limit], assignment_with_node)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// One node's assignments, each with the node: [`COLUMNS`], then instance and module.
pub(super) static NODE_ASSIGNMENTS_WITH_NODE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| {
        format!(
            "SELECT {COLUMNS}, a.instance, a.module FROM assignments AS a
             JOIN nodes ON nodes.name = a.node WHERE a.node = ?1 ORDER BY a.instance"
        )
    });

/// An assignment and its node from a row of [`COLUMNS`], then instance and module.
fn assignment_with_node(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Assignment, Node)> {
    let node = from_row(r)?;
    Ok((
        Assignment {
            node: node.name.clone(),
            instance: r.get(COLUMN_COUNT)?,
            module: r.get(COLUMN_COUNT + 1)?,
        },
        node,
    ))
}

#[cfg(test)]
mod tests {
    use crate::{Inventory, Node};

    /// One node's assignments of some modules, sifted from its own, and the count of a
    /// provision's providers module by module, are what the fleet-wide query says of them.
    #[test]
    fn a_nodes_assignments_of_modules_and_their_count_match_the_fleets() {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        for (n, address) in [("n1", "192.0.2.1"), ("n2", "192.0.2.2")] {
            inv.add_node(&Node::new(n, address)).unwrap();
            for (instance, module) in [("a", "m1"), ("b", "m2"), ("c", "m1"), ("d", "m3")] {
                inv.assign(n, module, instance).unwrap();
            }
        }
        let of = |node, limit| {
            inv.assignments_of(&["m1", "m3"], node, limit)
                .unwrap()
                .into_iter()
                .map(|(a, n)| format!("{}:{}:{}:{}", a.node, a.instance, a.module, n.address))
                .collect::<Vec<_>>()
        };
        let fleet = of(None, None);
        assert_eq!(fleet.len(), 6);
        assert_eq!(of(Some("n2"), None), fleet[3..]);
        assert_eq!(of(Some("n1"), Some(2)), fleet[..2]);
        assert_eq!(of(Some("n1"), Some(0)), Vec::<String>::new());
        assert_eq!(of(Some("none"), None), Vec::<String>::new());
        assert_eq!(inv.count_assigned(&["m1", "m1", "m3"], 10).unwrap(), 6);
        assert_eq!(inv.count_assigned(&["m3", "m1"], 5).unwrap(), 5);
        assert_eq!(inv.count_assigned(&["m2", "m4"], 2).unwrap(), 2);
        assert_eq!(inv.count_assigned(&["m4"], 2).unwrap(), 0);
        assert_eq!(inv.count_assigned(&["m1"], 0).unwrap(), 0);
    }
}
