//! Every generation a node's machine confirmed, kept with its declaration exactly as sent
//! (rendered; a secret stays sealed to the machine): `mesh history show NODE@GEN` reads it, and
//! it does not depend on today's catalogue or settings.

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;

use super::{Inventory, InventoryError};
use mesh_wire::{Declaration, Generation};

/// One kept generation of a node.
#[derive(Debug, Clone, Serialize)]
pub struct Kept {
    pub node: String,
    pub generation: u64,
    /// The push that made it (`mesh history show ID`).
    pub push: i64,
    /// The id of the inventory that pushed it.
    pub inventory: String,
    /// When the machine applied it, seconds since the epoch.
    pub pushed_at: u64,
    /// What was sent, as sent.
    pub declaration: Declaration,
}

/// Keeps generation `generation` of `node`, answered to push `push_id` sending `sent`, inside
/// the caller's transaction. It is kept under the push whose nonce it carries, when that is
/// another push of this inventory (one interrupted before its answer was recorded, a rollback
/// killed mid-way): a later push that changed nothing answers it, and never takes it over.
pub(super) fn keep(
    tx: &Transaction<'_>,
    node: &str,
    push_id: i64,
    generation: &Generation,
    sent: &Declaration,
) -> Result<(), InventoryError> {
    let push_id = maker(tx, node, generation)?.unwrap_or(push_id);
    let text = serde_json::to_string(sent).map_err(|e| {
        InventoryError::Storage(crate::StorageError::Corrupt(format!(
            "{node}'s declaration: {e}"
        )))
    })?;
    tx.execute(
        // a push that changed nothing answers the generation an earlier push made: that one
        // stays its maker; only a generation made anew under the same number (the machine
        // rebuilt, its record lost) replaces what was kept
        "INSERT INTO generation_history
             (node, number, push_id, inventory, pushed_at, declaration)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (node, number) DO UPDATE SET push_id = excluded.push_id,
             inventory = excluded.inventory, pushed_at = excluded.pushed_at,
             declaration = excluded.declaration
         WHERE generation_history.inventory != excluded.inventory
            OR generation_history.pushed_at != excluded.pushed_at",
        params![
            node,
            i64::try_from(generation.number).unwrap_or(i64::MAX),
            push_id,
            generation.inventory,
            i64::try_from(generation.pushed_at).unwrap_or(i64::MAX),
            text
        ],
    )?;
    Ok(())
}

/// The push of this inventory to `node` that made `generation`: the one whose nonce it carries.
pub(super) fn maker(
    tx: &Transaction<'_>,
    node: &str,
    generation: &Generation,
) -> Result<Option<i64>, InventoryError> {
    let Some(nonce) = &generation.push else {
        return Ok(None);
    };
    Ok(tx
        .prepare_cached("SELECT id FROM pushes WHERE node = ?1 AND nonce = ?2")?
        .query_row(params![node, nonce], |r| r.get(0))
        .optional()?)
}

impl Inventory {
    /// Generation `number` of `node`, as it was sent; `None`: this inventory keeps no such one.
    pub fn kept_generation(&self, node: &str, number: u64) -> Result<Option<Kept>, InventoryError> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT push_id, inventory, pushed_at, declaration FROM generation_history
                 WHERE node = ?1 AND number = ?2",
            )?
            .query_row(
                params![node, i64::try_from(number).unwrap_or(i64::MAX)],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()?;
        let Some((push, inventory, pushed_at, text)) = row else {
            return Ok(None);
        };
        let declaration = serde_json::from_str(&text).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!(
                "generation {number} of {node} cannot be read: {e}"
            )))
        })?;
        Ok(Some(Kept {
            node: node.to_string(),
            generation: number,
            push,
            inventory,
            pushed_at: pushed_at.try_into().unwrap_or(0),
            declaration,
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Inventory, Node, PushRecord};
    use mesh_wire::{Declaration, Generation, Mode};

    #[test]
    fn a_confirmed_push_keeps_its_generation_as_sent_and_the_history_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&Node::new("n", "192.0.2.1")).unwrap();
        let sent = Declaration {
            version: 1,
            node: "n".into(),
            resources: vec![],
            expects_record: true,
            confirm_within: None,
            confirm_removals: vec![],
            keep: vec!["kept:file:/etc/x".into()],
            planned: None,
        };
        let generation = Generation {
            number: 4,
            inventory: inv.inventory_id().unwrap(),
            pushed_at: 9,
            rolled_back_to: None,
            push: None,
        };
        let report = crate::generations::tests::report(Mode::Apply, generation);
        let id = inv.begin_pushes("t0", &[("n", "d")]).unwrap()[0];
        let record = PushRecord::answered("n", "t0", "d", &report);
        inv.finish_push(id, &record, Some(&sent)).unwrap();
        let kept = inv.kept_generation("n", 4).unwrap().expect("kept");
        assert_eq!((kept.push, kept.pushed_at), (id, 9));
        assert_eq!(kept.declaration, sent);
        assert!(inv.kept_generation("n", 3).unwrap().is_none());
        let rows = inv.push_history(None, 5).unwrap();
        assert_eq!(rows[0].generation, Some(4));
        let (row, _) = inv.push_by_id(id).unwrap().unwrap();
        assert_eq!(row.generation, Some(4));
        // a push that changed nothing answers the same generation: it stays the first one's
        let again = inv.begin_pushes("t1", &[("n", "d")]).unwrap()[0];
        inv.finish_push(
            again,
            &PushRecord::answered("n", "t1", "d", &report),
            Some(&sent),
        )
        .unwrap();
        let kept = inv.kept_generation("n", 4).unwrap().expect("kept");
        assert_eq!(kept.push, id, "a no-op push took over generation 4");
    }

    #[test]
    fn a_check_that_finds_the_machine_rolled_back_to_a_kept_generation_confirms_its_resources() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&Node::new("n", "192.0.2.1")).unwrap();
        let id = inv.inventory_id().unwrap();
        let sent = |package: &str| Declaration {
            version: 1,
            node: "n".into(),
            resources: vec![mesh_wire::Resource {
                id: format!("m:package:{package}"),
                instance: "m".into(),
                module: "m@1".into(),
                confirm: false,
                spec: mesh_wire::Spec::Package(mesh_wire::PackageSpec {
                    name: package.into(),
                    version: None,
                    absent: false,
                }),
            }],
            expects_record: true,
            confirm_within: None,
            confirm_removals: vec![],
            keep: vec![],
            planned: None,
        };
        let generation = |number, rolled_back_to| Generation {
            number,
            inventory: id.clone(),
            pushed_at: 9 + number,
            rolled_back_to,
            push: None,
        };
        for (number, package) in [(1, "one"), (2, "two")] {
            let mut report =
                crate::generations::tests::report(Mode::Apply, generation(number, None));
            report.resources = vec![mesh_wire::Outcome {
                id: format!("m:package:{package}"),
                state: mesh_wire::State::Created,
                detail: String::new(),
                undo: None,
                seen: vec![],
                micros: 0,
            }];
            let push = inv.begin_pushes("t0", &[("n", "d")]).unwrap()[0];
            let record = PushRecord::answered("n", "t0", "d", &report);
            inv.finish_push(push, &record, Some(&sent(package)))
                .unwrap();
        }
        let confirmed = |inv: &Inventory| inv.confirmed("n").unwrap().unwrap().resources;
        assert_eq!(confirmed(&inv), sent("two").resources);

        let checked = crate::generations::tests::report(Mode::DryRun, generation(3, Some(1)));
        inv.note_checked("n", None, &checked).unwrap();
        assert_eq!(
            inv.known_generation("n").unwrap().map(|g| g.number),
            Some(3)
        );
        assert_eq!(confirmed(&inv), sent("one").resources);
    }
}

#[cfg(test)]
mod interrupted_tests {
    use crate::{Inventory, Node, PushRecord};
    use mesh_wire::{Declaration, Generation, Mode};

    fn sent() -> Declaration {
        Declaration {
            version: 1,
            node: "n".into(),
            resources: vec![],
            expects_record: true,
            confirm_within: None,
            confirm_removals: vec![],
            keep: vec![],
            planned: None,
        }
    }

    fn made_by(inv: &Inventory, push: i64, number: u64) -> Generation {
        Generation {
            number,
            inventory: inv.inventory_id().unwrap(),
            pushed_at: 9,
            rolled_back_to: None,
            push: inv.push_nonce(push).unwrap(),
        }
    }

    fn generations(inv: &Inventory) -> Vec<(i64, Option<i64>)> {
        let rows = inv.push_history(None, 10).unwrap();
        rows.into_iter().map(|r| (r.id, r.generation)).collect()
    }

    #[test]
    fn an_interrupted_pushs_generation_stays_its_own_when_a_later_push_answers_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&Node::new("n", "192.0.2.1")).unwrap();
        // killed while reading the answer: the machine made generation 1 under its nonce
        let cut = inv.begin_pushes("t0", &[("n", "d")]).unwrap()[0];
        let generation = made_by(&inv, cut, 1);
        let next = inv.begin_pushes("t1", &[("n", "d")]).unwrap()[0];
        let said = crate::generations::tests::report(Mode::Apply, generation);
        let record = PushRecord::answered("n", "t1", "d", &said);
        inv.finish_push(next, &record, Some(&sent())).unwrap();
        assert_eq!(inv.kept_generation("n", 1).unwrap().unwrap().push, cut);
        assert_eq!(generations(&inv), [(next, None), (cut, Some(1))]);
    }

    #[test]
    fn a_killed_rollbacks_generation_is_in_the_history_as_a_rollback_once_checked() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&Node::new("n", "192.0.2.1")).unwrap();
        let rollback = inv.begin_pushes("t0", &[("n", "d")]).unwrap()[0];
        inv.note_rollback_push(rollback, 1).unwrap();
        let found = made_by(&inv, rollback, 4);
        let checked = crate::generations::tests::report(Mode::DryRun, found);
        inv.note_checked("n", Some(&sent()), &checked).unwrap();
        assert_eq!(inv.kept_generation("n", 4).unwrap().unwrap().push, rollback);
        assert_eq!(generations(&inv), [(rollback, Some(4))]);
    }
}
