//! Generations as the inventory knows them: its own id, and the generation each
//! node's machine was last seen at, by a push it confirmed or a `mesh check`. Every push says
//! which one it was planned against; a machine at a newer one refuses it as stale.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, Transaction, params};

use super::{Inventory, InventoryError};
use mesh_wire::{Declaration, Generation, Known, Mode, Planned, Report};

const KNOWN: &str = "SELECT number, inventory, pushed_at FROM generations WHERE node = ?1";

impl Inventory {
    /// This inventory's id, made when it was created (or first opened by a mesh that knows
    /// generations).
    pub fn inventory_id(&self) -> Result<String, InventoryError> {
        self.conn
            .prepare_cached("SELECT id FROM inventory_id LIMIT 1")?
            .query_row([], |r| r.get(0))
            .optional()?
            .ok_or_else(|| {
                InventoryError::Storage(crate::StorageError::Corrupt(
                    "the inventory has no id".into(),
                ))
            })
    }

    /// The generation `node`'s machine was last seen at; `None`: this inventory never heard
    /// from it since generations.
    pub fn known_generation(&self, node: &str) -> Result<Option<Generation>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(KNOWN)?
            .query_row([node], |r| row(r, 0))
            .optional()?)
    }

    /// What a push to `node` says it was planned against; `overwrite`: `push --overwrite`.
    pub fn planned(&self, node: &str, overwrite: bool) -> Result<Planned, InventoryError> {
        Ok(Planned {
            // a push sent and never recorded (or never answered) may have made the machine's
            // next generation
            unrecorded: self.unanswered(node)?,
            // set once the push is begun (`begin_pushes` gives it its nonce)
            push: None,
            lost: self.unanswered_nonce(node)?,
            inventory: self.inventory_id()?,
            against: self.known_generation(node)?.map(|g| Known {
                number: g.number,
                inventory: g.inventory,
            }),
            overwrite,
        })
    }

    /// Records what a `mesh check` (`report`, its helper's dry run of `checked`) found of
    /// `node`'s generation: a machine another inventory (or a push not recorded here, or root at
    /// its console) moved is known at its generation from now on, so the next push is planned
    /// against it, and what the check found there is the next plan's base
    /// ([`super::confirmed::found`]): the plan shows, resource by resource, what the push will
    /// change. A machine whose generation did not move keeps what this inventory confirmed.
    /// A check that saw an older generation than one a push of this inventory recorded since
    /// (they ran at once: the found one was made no later, by the machine's clock) changes
    /// nothing: the push's is the newer word. One made later with a lower number (the machine
    /// was rebuilt, or its record lost, and pushed since) is what the machine has, and recorded.
    /// One rolled back on the machine (`mesh-host rollback GEN`) to a generation this inventory
    /// keeps, with no declaration checked, has GEN's resources: they are what it confirmed.
    pub fn note_checked(
        &mut self,
        node: &str,
        checked: Option<&Declaration>,
        report: &Report,
    ) -> Result<(), InventoryError> {
        self.note_facts(node, report)?;
        let (Some(found), None, Mode::DryRun) = (&report.generation, &report.pending, report.mode)
        else {
            return Ok(());
        };
        let known = self.known_generation(node)?;
        // within one second the clock cannot tell: another inventory's lower number is then
        // taken as what the machine has (at worst the next push is refused and checks again)
        let raced = known.as_ref().is_some_and(|k| {
            k == found
                || (k.number > found.number
                    && (found.inventory == k.inventory || found.pushed_at < k.pushed_at))
        });
        if raced {
            return Ok(());
        }
        let rolled_back = match found.rolled_back_to {
            Some(to) => self
                .kept_generation(node, to)?
                .filter(|kept| kept.inventory == found.inventory),
            None => None,
        };
        // what the machine's record holds, where this inventory keeps it: the generation the
        // machine went back to, or the one it is at; a resource of it the check says a push
        // removes is then known, and planned as removed
        let held = match &rolled_back {
            Some(kept) => Some(kept.declaration.resources.clone()),
            None => self
                .kept_generation(node, found.number)?
                .filter(|kept| kept.inventory == found.inventory)
                .map(|kept| kept.declaration.resources),
        };
        let last_push = self.last_push_id(node)?;
        let tx = self.conn.transaction()?;
        store(&tx, node, found)?;
        // what the check found is what the machine has, whoever moved it there; without it, a
        // rollback on the machine to a generation this inventory keeps has what that one sent
        if let (Some(checked), Some(push)) = (checked, last_push) {
            let previous = match held.clone() {
                Some(resources) => resources,
                None => super::confirmed::read(&tx, node)?,
            };
            let now = super::confirmed::found(previous, checked, report);
            super::confirmed::replace(&tx, node, push, &now)?;
        } else if let Some(kept) = rolled_back {
            super::confirmed::replace(&tx, node, kept.push, &kept.declaration.resources)?;
        }
        // a generation a push of this inventory made and never recorded (interrupted, a rollback
        // killed mid-way) is that push's in the history, as what the check measured
        if let (Some(checked), Some(push)) =
            (checked, super::generation_history::maker(&tx, node, found)?)
        {
            super::generation_history::keep(&tx, node, push, found, checked)?;
        }
        tx.commit()?;
        Ok(())
    }
}

impl Inventory {
    /// The id of `node`'s last push, if any: what a check found is recorded under it.
    fn last_push_id(&self, node: &str) -> Result<Option<i64>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached("SELECT max(id) FROM pushes WHERE node = ?1")?
            .query_row([node], |r| r.get(0))?)
    }

    /// Every node's known generation, by node.
    pub(super) fn generations(&self) -> Result<BTreeMap<String, Generation>, InventoryError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT node, number, inventory, pushed_at FROM generations")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, row(r, 1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The generation in `r`'s columns from `first` on (number, inventory, pushed_at).
fn row(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Generation> {
    Ok(Generation {
        number: r.get::<_, i64>(first)?.try_into().unwrap_or(0),
        inventory: r.get(first + 1)?,
        pushed_at: r.get::<_, i64>(first + 2)?.try_into().unwrap_or(0),
        rolled_back_to: None,
        push: None,
    })
}

/// What an imported document says `node`'s machine was last seen at, taken unless this
/// inventory knows a newer generation of it.
pub(super) fn imported(
    tx: &Transaction<'_>,
    node: &str,
    generation: &Generation,
) -> Result<(), InventoryError> {
    let known: Option<i64> = tx
        .prepare_cached("SELECT number FROM generations WHERE node = ?1")?
        .query_row([node], |r| r.get(0))
        .optional()?;
    if known.is_some_and(|k| u64::try_from(k).unwrap_or(0) >= generation.number) {
        return Ok(());
    }
    store(tx, node, generation)
}

/// Records `node`'s machine at `generation`, inside the caller's transaction.
pub(super) fn store(
    tx: &Transaction<'_>,
    node: &str,
    generation: &Generation,
) -> Result<(), InventoryError> {
    let number = i64::try_from(generation.number).unwrap_or(i64::MAX);
    let at = i64::try_from(generation.pushed_at).unwrap_or(i64::MAX);
    tx.execute(
        "INSERT INTO generations (node, number, inventory, pushed_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (node) DO UPDATE SET number = ?2, inventory = ?3, pushed_at = ?4",
        params![node, number, generation.inventory, at],
    )?;
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn inventory() -> (tempfile::TempDir, Inventory) {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&crate::Node::new("n", "192.0.2.1")).unwrap();
        (dir, inv)
    }

    fn at(number: u64, inventory: &str) -> Generation {
        Generation {
            number,
            inventory: inventory.into(),
            pushed_at: 1,
            rolled_back_to: None,
            push: None,
        }
    }

    fn checked(generation: Generation) -> Report {
        report(Mode::DryRun, generation)
    }

    /// A helper's report in `mode` saying the machine is at `generation`.
    pub(crate) fn report(mode: Mode, generation: Generation) -> Report {
        Report {
            version: 1,
            mode,
            hostname: "n".into(),
            host_keys: vec![],
            new_machine: false,
            resources: vec![],
            units: vec![],
            adoption: None,
            awaiting: None,
            reverted: vec![],
            pending: None,
            generation: Some(generation),
            facts: None,
            steps: Vec::new(),
            generation_not_kept: None,
        }
    }

    #[test]
    fn every_inventory_has_its_own_id_and_plans_against_what_it_last_saw() {
        let (_a, a) = inventory();
        let (_b, b) = inventory();
        let id = a.inventory_id().unwrap();
        assert_eq!(id.len(), 16);
        assert_ne!(id, b.inventory_id().unwrap());
        let first = a.planned("n", false).unwrap();
        assert_eq!((first.inventory, first.against), (id, None));
    }

    #[test]
    fn a_check_records_a_moved_generation_and_never_an_older_one() {
        let (_d, mut inv) = inventory();
        inv.note_checked("n", None, &checked(at(3, "a"))).unwrap();
        assert_eq!(inv.known_generation("n").unwrap(), Some(at(3, "a")));
        let planned = inv.planned("n", true).unwrap();
        assert_eq!(
            planned.against,
            Some(Known {
                number: 3,
                inventory: "a".into()
            })
        );
        assert!(planned.overwrite);
        // a check that ran beside a push of this inventory saw what the push replaced
        inv.note_checked("n", None, &checked(at(2, "a"))).unwrap();
        assert_eq!(inv.known_generation("n").unwrap(), Some(at(3, "a")));
        // a lower number made later: the machine was rebuilt and pushed since; it is what it has
        let later = Generation {
            pushed_at: at(3, "a").pushed_at + 60,
            ..at(2, "b")
        };
        inv.note_checked("n", None, &checked(later.clone()))
            .unwrap();
        assert_eq!(inv.known_generation("n").unwrap(), Some(later.clone()));
        // in the same second, another inventory's lower number is still what the machine has
        inv.note_checked("n", None, &checked(at(9, "a"))).unwrap();
        inv.note_checked(
            "n",
            None,
            &checked(Generation {
                pushed_at: at(9, "a").pushed_at,
                ..at(4, "b")
            }),
        )
        .unwrap();
        assert_eq!(
            inv.known_generation("n").unwrap().map(|g| g.number),
            Some(4)
        );
    }

    #[test]
    fn an_inventory_imported_from_an_export_knows_its_generations_under_an_id_of_its_own() {
        let (_a, mut a) = inventory();
        a.note_checked("n", None, &checked(at(3, "a"))).unwrap();
        let doc = a.export().unwrap();
        assert!(
            doc.to_text().contains("\"generation\""),
            "{}",
            doc.to_text()
        );
        let dir = tempfile::tempdir().unwrap();
        let mut b = Inventory::init(&dir.path().join("b.db")).unwrap();
        b.import(&doc).unwrap();
        assert_eq!(b.known_generation("n").unwrap(), Some(at(3, "a")));
        assert_ne!(b.inventory_id().unwrap(), a.inventory_id().unwrap());
        // an older document never takes a newer generation back
        b.note_checked("n", None, &checked(at(5, "b"))).unwrap();
        b.import(&doc).unwrap();
        assert_eq!(b.known_generation("n").unwrap(), Some(at(5, "b")));
        // and what the machines said is no change for the operator to review
        assert!(b.import_changes(&doc).unwrap().is_empty());
    }
}
