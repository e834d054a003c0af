//! The inventory's schema: the numbered SQL files in `state/`, embedded here and applied in
//! order, the number reached kept in `PRAGMA user_version`. A file written by a newer mesh is
//! refused rather than misread.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::InventoryError;

/// The schema, in order. A migration is never edited or removed once released: add a new one.
pub(crate) const MIGRATIONS: &[(&str, &str)] = &[
    (
        "0001_init.sql",
        include_str!("../../../state/0001_init.sql"),
    ),
    (
        "0002_requirements.sql",
        include_str!("../../../state/0002_requirements.sql"),
    ),
    (
        "0003_confirmed.sql",
        include_str!("../../../state/0003_confirmed.sql"),
    ),
    (
        "0004_tags.sql",
        include_str!("../../../state/0004_tags.sql"),
    ),
    (
        "0005_jump.sql",
        include_str!("../../../state/0005_jump.sql"),
    ),
    (
        "0006_sealed.sql",
        include_str!("../../../state/0006_sealed.sql"),
    ),
    (
        "0007_indexes.sql",
        include_str!("../../../state/0007_indexes.sql"),
    ),
    (
        "0008_providers.sql",
        include_str!("../../../state/0008_providers.sql"),
    ),
    (
        "0009_rollouts.sql",
        include_str!("../../../state/0009_rollouts.sql"),
    ),
    (
        "0010_generations.sql",
        include_str!("../../../state/0010_generations.sql"),
    ),
    (
        "0011_generation_history.sql",
        include_str!("../../../state/0011_generation_history.sql"),
    ),
    (
        "0012_rollback_holds.sql",
        include_str!("../../../state/0012_rollback_holds.sql"),
    ),
    (
        "0013_facts.sql",
        include_str!("../../../state/0013_facts.sql"),
    ),
    (
        "0014_push_nonces.sql",
        include_str!("../../../state/0014_push_nonces.sql"),
    ),
    (
        "0015_push_runs.sql",
        include_str!("../../../state/0015_push_runs.sql"),
    ),
    (
        "0016_local_nodes.sql",
        include_str!("../../../state/0016_local_nodes.sql"),
    ),
    (
        "0017_secret_copies.sql",
        include_str!("../../../state/0017_secret_copies.sql"),
    ),
    (
        "0018_layers_by_node.sql",
        include_str!("../../../state/0018_layers_by_node.sql"),
    ),
    (
        "0019_confirmed_in_order.sql",
        include_str!("../../../state/0019_confirmed_in_order.sql"),
    ),
    (
        "0020_rollout_planned.sql",
        include_str!("../../../state/0020_rollout_planned.sql"),
    ),
    (
        "0021_catalogue_folders.sql",
        include_str!("../../../state/0021_catalogue_folders.sql"),
    ),
];

/// Brings the file's schema up to date, in one exclusive transaction; refuses a newer one.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), InventoryError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive)?;
    let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let known = MIGRATIONS.len() as i64;
    if found > known {
        return Err(InventoryError::Storage(crate::StorageError::TooNew {
            path: path.to_path_buf(),
            found,
            known,
        }));
    }
    if found == known {
        // nothing to migrate: a command that only reads, or is refused, leaves the file as it was
        return Ok(());
    }
    for (_, sql) in &MIGRATIONS[found as usize..] {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", known)?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::{Inventory, Node};

    #[test]
    fn an_already_migrated_inventory_opens_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inv.db");
        let inv = Inventory::init(&path).unwrap();
        inv.add_node(&Node::new("a", "127.0.0.1")).unwrap();
        drop(inv);
        let again = Inventory::open(&path).unwrap();
        assert_eq!(again.schema_version().unwrap(), MIGRATIONS.len() as i64);
        assert_eq!(again.nodes().unwrap().len(), 1);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inv.db");
        drop(Inventory::init(&path).unwrap());
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", 99)
            .unwrap();
        assert!(matches!(
            Inventory::open(&path),
            Err(InventoryError::Storage(crate::StorageError::TooNew {
                found: 99,
                ..
            }))
        ));
    }

    #[test]
    fn every_file_in_state_is_a_migration_in_order() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../state");
        let mut files: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        files.sort();
        let names: Vec<&str> = MIGRATIONS.iter().map(|(n, _)| *n).collect();
        assert_eq!(files, names);
        for (i, n) in names.iter().enumerate() {
            assert!(
                n.starts_with(&format!("{:04}_", i + 1)),
                "{n} is out of order"
            );
        }
    }
}
