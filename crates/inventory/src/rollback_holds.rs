//! Rollback in the inventory: which generation `mesh rollback` sends a node, which
//! generation each node of a past push had before it, and the nodes held at a generation until
//! `mesh rollback NODE --release`. A hold here outlasts any one push; a container's moving data
//! and a rollout's stop hold a node for one push only.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;

use super::{Inventory, InventoryError, Kept};

/// A node held at a generation by `mesh rollback`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hold {
    pub node: String,
    pub generation: u64,
    /// When it was held (UTC, as the inventory's clock said).
    pub since: String,
}

/// What one node's row of a past push made, and the generation the node had before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushGeneration {
    pub node: String,
    /// The node's own push id (`mesh history` shows it).
    pub push: i64,
    /// The generation that push made on the node; `None`: it made none (it failed, was held,
    /// or changed nothing).
    pub made: Option<u64>,
    /// The newest generation kept below `made`; `None`: `made` was the first this inventory kept.
    pub before: Option<u64>,
}

fn number(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl Inventory {
    /// Every generation of `node` this inventory keeps, the oldest first.
    pub fn kept_numbers(&self, node: &str) -> Result<Vec<u64>, InventoryError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT number FROM generation_history WHERE node = ?1 ORDER BY number",
        )?;
        let rows = stmt.query_map([node], |r| r.get::<_, i64>(0))?;
        Ok(rows
            .map(|n| n.map(number))
            .collect::<Result<_, rusqlite::Error>>()?)
    }

    /// Generation `number` of `node`, to be sent again; refused naming the generations kept.
    pub fn rollback_target(&self, node: &str, number: u64) -> Result<Kept, InventoryError> {
        if let Some(kept) = self.kept_generation(node, number)? {
            return Ok(kept);
        }
        let known: Vec<String> = self
            .kept_numbers(node)?
            .iter()
            .map(u64::to_string)
            .collect();
        Err(InventoryError::Refused(crate::Refusal::NoGeneration {
            node: node.to_string(),
            number,
            known: if known.is_empty() {
                "none yet".into()
            } else {
                known.join(", ")
            },
        }))
    }

    /// Every node of the push that push id `id` is one node's row of (the rows the same command
    /// run wrote), by node name, with what it made and the generation before it.
    pub fn push_generations(&self, id: i64) -> Result<Vec<PushGeneration>, InventoryError> {
        let found: Option<(String, Option<String>)> = self
            .conn
            .prepare_cached("SELECT started_at, run FROM pushes WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((started, run)) = found else {
            return Err(InventoryError::Refused(crate::Refusal::NoPush { id }));
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT p.node, p.id, g.number,
                    (SELECT MAX(b.number) FROM generation_history b
                     WHERE b.node = p.node AND b.number < g.number)
             FROM pushes p LEFT JOIN generation_history g ON g.push_id = p.id
             WHERE p.started_at = ?1 AND p.run IS ?2
             ORDER BY p.node, g.number IS NULL, p.id",
        )?;
        // the push's own rows: begun in its second by the run that wrote it (a row written
        // before runs were kept has none, and only its second to go by)
        let rows = stmt.query_map(params![started, run], |r| {
            Ok(PushGeneration {
                node: r.get(0)?,
                push: r.get(1)?,
                made: r.get::<_, Option<i64>>(2)?.map(number),
                before: r.get::<_, Option<i64>>(3)?.map(number),
            })
        })?;
        let mut out: Vec<PushGeneration> = Vec::new();
        for row in rows {
            let row = row?;
            // a node's held or failed row beside the one that made its generation says less
            if out.last().is_none_or(|last| last.node != row.node) {
                out.push(row);
            }
        }
        Ok(out)
    }

    /// Notes that `node`'s push begun at `started` was a rollback sending `generation` again.
    pub fn note_rollback(
        &mut self,
        node: &str,
        started: &str,
        generation: u64,
    ) -> Result<(), InventoryError> {
        self.conn.execute(
            "INSERT OR REPLACE INTO rollback_pushes (push_id, generation)
             SELECT MAX(id), ?3 FROM pushes WHERE node = ?1 AND started_at = ?2 AND run = ?4
             HAVING MAX(id) IS NOT NULL",
            params![
                node,
                started,
                i64::try_from(generation).unwrap_or(i64::MAX),
                self.run
            ],
        )?;
        Ok(())
    }

    /// Notes that push `id`, just begun, is a rollback sending `generation` again.
    pub fn note_rollback_push(&mut self, id: i64, generation: u64) -> Result<(), InventoryError> {
        self.conn.execute(
            "INSERT OR REPLACE INTO rollback_pushes (push_id, generation) VALUES (?1, ?2)",
            params![id, i64::try_from(generation).unwrap_or(i64::MAX)],
        )?;
        Ok(())
    }

    /// The generation `node`'s push in flight sends again, when it is a rollback's: what a
    /// check reconciles it against.
    pub fn in_flight_rollback(&self, node: &str) -> Result<Option<u64>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT r.generation FROM pushes p JOIN rollback_pushes r ON r.push_id = p.id
                 WHERE p.node = ?1 AND p.outcome = 'in-flight'
                   AND p.id = (SELECT MAX(id) FROM pushes WHERE node = ?1)",
            )?
            .query_row([node], |r| r.get::<_, i64>(0))
            .optional()?
            .map(number))
    }

    /// The generation push `id` sent again, if it was a rollback.
    pub fn rolled_back_to(&self, id: i64) -> Result<Option<u64>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached("SELECT generation FROM rollback_pushes WHERE push_id = ?1")?
            .query_row([id], |r| r.get::<_, i64>(0))
            .optional()?
            .map(number))
    }

    /// Holds `node` at `generation` (a rollback sent it), replacing any hold it had.
    pub fn hold_at(&mut self, node: &str, generation: u64) -> Result<(), InventoryError> {
        self.conn.execute(
            "INSERT INTO rollback_holds (node, generation) VALUES (?1, ?2)
             ON CONFLICT (node) DO UPDATE SET generation = ?2,
                 since = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
            params![node, i64::try_from(generation).unwrap_or(i64::MAX)],
        )?;
        Ok(())
    }

    /// The generation `node` is held at by a rollback, if it is.
    pub fn held_at(&self, node: &str) -> Result<Option<Hold>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached("SELECT generation, since FROM rollback_holds WHERE node = ?1")?
            .query_row([node], |r| {
                Ok(Hold {
                    node: node.to_string(),
                    generation: number(r.get(0)?),
                    since: r.get(1)?,
                })
            })
            .optional()?)
    }

    /// Every node's hold, by node: what an export carries.
    pub(super) fn holds(&self) -> Result<BTreeMap<String, Hold>, InventoryError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT node, generation, since FROM rollback_holds")?;
        let rows = stmt.query_map([], |r| {
            let node: String = r.get(0)?;
            let hold = Hold {
                node: node.clone(),
                generation: number(r.get(1)?),
                since: r.get(2)?,
            };
            Ok((node, hold))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Releases `node`'s hold; the hold it had, if any.
    pub fn release(&mut self, node: &str) -> Result<Option<Hold>, InventoryError> {
        let hold = self.held_at(node)?;
        self.conn
            .execute("DELETE FROM rollback_holds WHERE node = ?1", [node])?;
        Ok(hold)
    }
}

/// What an imported document says of `node`'s hold, inside the caller's transaction: held
/// where it says (its `since` kept; an unmoved hold is left as it is), released where it says
/// nothing.
pub(super) fn imported(
    tx: &Transaction<'_>,
    node: &str,
    held: Option<&super::export::HeldEntry>,
) -> Result<(), InventoryError> {
    let Some(h) = held else {
        tx.execute("DELETE FROM rollback_holds WHERE node = ?1", [node])?;
        return Ok(());
    };
    tx.execute(
        "INSERT INTO rollback_holds (node, generation, since) VALUES (?1, ?2, ?3)
         ON CONFLICT (node) DO UPDATE SET generation = ?2, since = ?3
         WHERE generation IS NOT ?2",
        params![
            node,
            i64::try_from(h.generation).unwrap_or(i64::MAX),
            h.since
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{Inventory, InventoryError, Node, PushRecord};
    use mesh_wire::{Declaration, Generation, Mode};

    fn sent(node: &str) -> Declaration {
        Declaration {
            version: 1,
            node: node.into(),
            resources: vec![],
            expects_record: true,
            confirm_within: None,
            confirm_removals: vec![],
            keep: vec![],
            planned: None,
        }
    }

    /// Pushes `nodes` at `started`, each confirming generation `number`; their push ids.
    fn pushed(inv: &mut Inventory, started: &str, nodes: &[&str], number: u64) -> Vec<i64> {
        let rows: Vec<(&str, &str)> = nodes.iter().map(|n| (*n, "d")).collect();
        let ids = inv.begin_pushes(started, &rows).unwrap();
        for (node, id) in nodes.iter().zip(&ids) {
            let generation = Generation {
                number,
                inventory: inv.inventory_id().unwrap(),
                pushed_at: number,
                rolled_back_to: None,
                push: None,
            };
            let report = crate::generations::tests::report(Mode::Apply, generation);
            let record = PushRecord::answered(node, started, "d", &report);
            inv.finish_push(*id, &record, Some(&sent(node))).unwrap();
        }
        ids
    }

    fn inventory(nodes: &[&str]) -> (tempfile::TempDir, Inventory) {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        for (i, n) in nodes.iter().enumerate() {
            inv.add_node(&Node::new(n, &format!("192.0.2.{}", i + 1)))
                .unwrap();
        }
        (dir, inv)
    }

    #[test]
    fn a_generation_not_kept_is_refused_naming_the_ones_that_are() {
        let (_d, mut inv) = inventory(&["n"]);
        pushed(&mut inv, "t1", &["n"], 1);
        pushed(&mut inv, "t2", &["n"], 2);
        assert_eq!(inv.rollback_target("n", 1).unwrap().generation, 1);
        let e = inv.rollback_target("n", 7).unwrap_err();
        assert!(matches!(
            e,
            InventoryError::Refused(crate::Refusal::NoGeneration { number: 7, .. })
        ));
        assert!(
            e.to_string()
                .contains("keeps no generation 7 of n (it keeps: 1, 2)"),
            "{e}"
        );
        let none = inv.rollback_target("n", 0).unwrap_err().to_string();
        assert!(none.contains("(it keeps: 1, 2)"), "{none}");
    }

    #[test]
    fn a_past_push_names_each_node_with_the_generation_it_had_before() {
        let (_d, mut inv) = inventory(&["a", "b", "c", "d"]);
        pushed(&mut inv, "t1", &["a", "b"], 1);
        let ids = pushed(&mut inv, "t2", &["a", "b", "c"], 2);
        // a node the same push failed on made no generation
        inv.record_push(&PushRecord {
            node: "d".into(),
            started_at: "t2".into(),
            digest: String::new(),
            outcome: "failed".into(),
            reason: Some("unreachable".into()),
            report: None,
        })
        .unwrap();
        let rows = inv.push_generations(ids[1]).unwrap();
        let seen: Vec<(&str, Option<u64>, Option<u64>)> = rows
            .iter()
            .map(|r| (r.node.as_str(), r.made, r.before))
            .collect();
        assert_eq!(
            seen,
            [
                ("a", Some(2), Some(1)),
                ("b", Some(2), Some(1)),
                ("c", Some(2), None),
                ("d", None, None)
            ]
        );
        assert!(matches!(
            inv.push_generations(999),
            Err(InventoryError::Refused(crate::Refusal::NoPush { id: 999 }))
        ));
    }

    #[test]
    fn two_pushes_begun_in_one_second_are_told_apart_by_their_runs() {
        let (d, mut first) = inventory(&["a", "b"]);
        // two commands, each its own run, begun in the same second
        let mut second = Inventory::open(&d.path().join("inv.db")).unwrap();
        pushed(&mut first, "t0", &["a", "b"], 1);
        let mut third = Inventory::open(&d.path().join("inv.db")).unwrap();
        let a = pushed(&mut second, "t1", &["a"], 2);
        let b = pushed(&mut third, "t1", &["b"], 2);
        let nodes = |id| -> Vec<String> {
            first
                .push_generations(id)
                .unwrap()
                .into_iter()
                .map(|r| r.node)
                .collect()
        };
        assert_eq!(nodes(a[0]), ["a"]);
        assert_eq!(nodes(b[0]), ["b"]);
    }

    #[test]
    fn a_hold_lasts_until_it_is_released_and_a_rollbacks_push_is_noted() {
        let (_d, mut inv) = inventory(&["n"]);
        assert_eq!(inv.held_at("n").unwrap(), None);
        let ids = pushed(&mut inv, "t1", &["n"], 4);
        inv.note_rollback("n", "t1", 2).unwrap();
        assert_eq!(inv.rolled_back_to(ids[0]).unwrap(), Some(2));
        assert_eq!(inv.rolled_back_to(ids[0] + 1).unwrap(), None);
        inv.hold_at("n", 3).unwrap();
        inv.hold_at("n", 1).unwrap();
        assert_eq!(inv.held_at("n").unwrap().map(|h| h.generation), Some(1));
        assert_eq!(inv.release("n").unwrap().map(|h| h.generation), Some(1));
        assert_eq!(inv.held_at("n").unwrap(), None);
        assert_eq!(inv.release("n").unwrap(), None);
    }

    #[test]
    fn a_hold_goes_with_the_export_and_an_export_from_before_holds_still_imports() {
        use crate::export::Document;
        let (_d, mut a) = inventory(&["n", "m"]);
        pushed(&mut a, "t1", &["n", "m"], 1);
        a.hold_at("n", 1).unwrap();
        let held = a.held_at("n").unwrap().unwrap();
        let text = a.export().unwrap().to_text();
        assert!(text.contains("\"held-at\""), "{text}");
        let doc = Document::parse("a.json", &text, &crate::AsWritten).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut b = Inventory::init(&dir.path().join("b.db")).unwrap();
        b.import(&doc).unwrap();
        assert_eq!(b.held_at("n").unwrap(), Some(held.clone()));
        assert_eq!(b.held_at("m").unwrap(), None);
        // B's own export says the same hold: the round trip keeps it
        assert_eq!(b.export().unwrap().to_text(), text);
        assert!(b.import_changes(&doc).unwrap().is_empty());
        // a document that says n is not held lets go of it, and that is a removal to review
        let mut released = doc.clone();
        released.nodes.iter_mut().for_each(|n| n.held_at = None);
        let c = b.import_changes(&released).unwrap();
        assert_eq!(c.removed, ["the rollback hold of node n at generation 1"]);
        // a document from before holds were exported (no `held-at`) reads as it always did
        let older: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut older = older;
        for n in older["nodes"].as_array_mut().unwrap() {
            n.as_object_mut().unwrap().remove("held-at");
        }
        let older = Document::parse("old.json", &older.to_string(), &crate::AsWritten).unwrap();
        assert_eq!(older, released);
        b.import(&older).unwrap();
        assert_eq!(b.held_at("n").unwrap(), None);
        // and another inventory's hold, imported, changes a held one's generation
        b.import(&doc).unwrap();
        a.hold_at("n", 7).unwrap();
        let moved = a.export().unwrap();
        let c = b.import_changes(&moved).unwrap();
        assert_eq!(c.changed, ["node n: held at generation 1 → 7 by rollback"]);
    }

    #[test]
    fn an_import_into_a_new_inventory_lists_each_nodes_hold() {
        let (_d, mut a) = inventory(&["n", "m"]);
        pushed(&mut a, "t1", &["n", "m"], 1);
        a.hold_at("n", 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let b = Inventory::init(&dir.path().join("b.db")).unwrap();
        let c = b.import_changes(&a.export().unwrap()).unwrap();
        assert_eq!(c.changed, ["node n: held at generation 1 by rollback"]);
    }

    #[test]
    fn an_import_refuses_a_hold_or_generation_no_push_makes_naming_the_field() {
        use crate::export::Document;
        let (_d, mut a) = inventory(&["n"]);
        pushed(&mut a, "t1", &["n"], 1);
        a.hold_at("n", 1).unwrap();
        let text = a.export().unwrap().to_text();
        let with = |field: &str, number: &str| {
            let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            let node = &mut doc["nodes"][0];
            match field {
                "held-at" => node["held-at"]["generation"] = serde_json::from_str(number).unwrap(),
                _ => {
                    node["generation"] =
                        serde_json::json!({"number": 1, "inventory": "a", "pushed_at": 1});
                    node["generation"]["number"] = serde_json::from_str(number).unwrap();
                }
            }
            Document::parse("a.json", &doc.to_string(), &crate::AsWritten)
        };
        assert!(with("held-at", "2").is_ok());
        assert!(with("generation", "9223372036854775807").is_ok());
        for (field, number, named) in [
            (
                "held-at",
                "0",
                "nodes[0].held-at.generation: 0 is no generation",
            ),
            (
                "held-at",
                "18446744073709551615",
                "nodes[0].held-at.generation: 18446744073709551615 is no generation",
            ),
            (
                "generation",
                "9223372036854775808",
                "nodes[0].generation.number: 9223372036854775808 is no generation a push makes",
            ),
        ] {
            let said = with(field, number).unwrap_err().to_string();
            assert!(said.contains(named), "{said}");
        }
    }
}
