//! The inventory: one SQLite file holding nodes, assignments, settings layers with their history,
//! pinned host keys, every push as it happens, and what each node's helper confirmed it has.
//!
//! Its schema is the numbered SQL files in `state/`, embedded and applied in order by `schema`;
//! the number reached is kept in `PRAGMA user_version`. A file written by a newer mesh is refused
//! rather than misread. Write transactions are IMMEDIATE, so two writers never deadlock on the
//! upgrade from reader to writer.

pub mod allocate;
pub mod ansible;
mod answers;
mod assignments;
mod atomically;
mod catalogue_folders;
pub mod catalogued;
mod confirmed;
mod error;
pub mod export;
mod facts;
mod generation_history;
mod generations;
pub mod import;
mod import_catalogue;
mod import_check;
mod layers;
mod machine;
mod nodes;
mod operator_key;
mod pushes;
mod rollback_holds;
pub mod rollouts;
mod schema;
mod sealed;
mod secret_copies;
mod secrets;
mod select;
mod tags;
pub mod validate;

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

pub use allocate::Unallocated;
pub use answers::{PORTS, Seat};
pub use assignments::Assignment;
pub use confirmed::DIFFERS;
pub use error::{InventoryError, Refusal, StorageError};
pub use facts::KnownFacts;
pub use generation_history::Kept;
pub use layers::{HistoryEntry, Layer, LayerOf};
pub use nodes::{
    AsWritten, DEFAULT_ROOT, Machines, Node, NodeMachine, valid_address,
    valid_name as nodes_valid_name, valid_user,
};
pub use pushes::{PushRecord, PushRow};
pub use rollback_holds::{Hold, PushGeneration};
pub use secrets::consumer_key;
pub use select::{Scope, glob_match};

/// Makes the folder `path` goes in, the operator's alone (0700), if it is missing.
fn private_parent(path: &Path) -> Result<(), InventoryError> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(dir) = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.exists())
    {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| {
                InventoryError::Storage(crate::StorageError::Io {
                    path: path.to_path_buf(),
                    source,
                })
            })?;
    }
    Ok(())
}

/// An open inventory.
pub struct Inventory {
    conn: Connection,
    path: PathBuf,
    operator: operator_key::OperatorKey,
    /// Every node's name, read once per [`Inventory::batch`]: the host's facts answer with it
    /// each module that reads it.
    names: std::cell::RefCell<Option<std::rc::Rc<Vec<String>>>>,
    /// The mesh-wide and tag layers read in this transaction, by module and column: they are
    /// the same for every node, and a plan of the fleet asked for them once per assignment.
    /// `None` outside a transaction; only `&mut self` writes a layer, so none changes inside one.
    shared_layers: std::cell::RefCell<Option<layers::Shared>>,
    /// The tags of the node last asked for in this transaction (`tags::Last`): a plan asks
    /// for a node's tags once per assignment. `None` outside a transaction.
    last_tags: std::cell::RefCell<Option<tags::Last>>,
    /// The node layers of the node last asked for in this transaction (`layers::NodeLayers`):
    /// a plan asks for one per assignment. `None` outside a transaction.
    last_layers: std::cell::RefCell<Option<layers::NodeLayers>>,
    /// Each sealed value opened so far, by its sealed text (which only ever opens to the one
    /// value): a plan opens a provider's secret for each consumer's section and for the consumer
    /// again, and X25519 is the dearest step of a plan.
    opened: std::cell::RefCell<std::collections::HashMap<String, String>>,
    /// Each secret content sealed to a machine in this command, by its keyed digest: a confirmed
    /// push keeps a copy sealed to the operator (`secret_copies`), so a rollback can seal it again.
    rendered: std::cell::RefCell<std::collections::HashMap<String, String>>,
    /// Inside [`Inventory::trial`]: what is composed there is only shown or checked, never
    /// confirmed, so no copy of its secrets is noted (`rendered`).
    in_trial: std::cell::Cell<bool>,
    /// This command's run id, random, written with every row it adds to `pushes`: the nodes of
    /// one push are its rows, not every row begun in the same second.
    run: String,
    /// The file, open for [`Inventory::lock_pushes`] from the start to the end. SQLite locks
    /// with `fcntl`, which `flock` does not touch, but closing any descriptor of the file drops
    /// all of the process's `fcntl` locks on it: so this one is opened once and closed only
    /// after the connection (fields drop in order).
    file: File,
    /// Whether this command holds the push lock ([`Inventory::lock_pushes`]).
    locked: std::cell::Cell<bool>,
}

impl Inventory {
    /// The default location: `$XDG_STATE_HOME/mesh/inventory.db`, else
    /// `~/.local/state/mesh/inventory.db`.
    pub fn default_path() -> Option<PathBuf> {
        let state = std::env::var_os("XDG_STATE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
        Some(state.join("mesh").join("inventory.db"))
    }

    /// Creates a new inventory file (mode 0600) with the current schema.
    pub fn init(path: &Path) -> Result<Inventory, InventoryError> {
        use std::os::unix::fs::OpenOptionsExt;
        let io = |source| {
            InventoryError::Storage(crate::StorageError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        private_parent(path)?;
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(InventoryError::Storage(crate::StorageError::Exists {
                    path: path.to_path_buf(),
                }));
            }
            Err(e) => return Err(io(e)),
        }
        Self::connect(path)
    }

    /// Opens an existing inventory, bringing its schema up to date.
    pub fn open(path: &Path) -> Result<Inventory, InventoryError> {
        if !path.is_file() {
            return Err(InventoryError::Storage(crate::StorageError::Missing {
                path: path.to_path_buf(),
            }));
        }
        Self::connect(path)
    }

    fn connect(path: &Path) -> Result<Inventory, InventoryError> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        // a fleet-wide plan runs the same few dozen statements once per node
        conn.set_prepared_statement_cache_capacity(64);
        // one plan per statement whatever is bound: without it a statement whose parameter meets
        // an index is compiled again each time it is bound, which a fleet-wide plan does per node
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // SQLite's default page cache (2 MB) holds a few thousand nodes' rows: a plan of a larger
        // fleet would read its pages again for every node. 32 MB holds 10,000 nodes' inventory
        conn.pragma_update(None, "cache_size", -32_000)?;
        conn.set_transaction_behavior(TransactionBehavior::Immediate);
        schema::migrate(&mut conn, path)?;
        let file = File::open(path).map_err(|source| {
            InventoryError::Storage(crate::StorageError::Io {
                path: path.to_path_buf(),
                source,
            })
        })?;
        let run = conn.query_row("SELECT lower(hex(randomblob(8)))", [], |r| r.get(0))?;
        Ok(Inventory {
            run,
            conn,
            path: path.to_path_buf(),
            operator: operator_key::OperatorKey::of(path),
            names: std::cell::RefCell::new(None),
            shared_layers: std::cell::RefCell::new(None),
            last_tags: std::cell::RefCell::new(None),
            last_layers: std::cell::RefCell::new(None),
            opened: std::cell::RefCell::default(),
            rendered: std::cell::RefCell::default(),
            in_trial: std::cell::Cell::new(false),
            file,
            locked: std::cell::Cell::new(false),
        })
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version (the number of migrations applied).
    pub fn schema_version(&self) -> Result<i64, InventoryError> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    /// Takes the push lock: one push at a time per inventory, held until this inventory is
    /// dropped.
    ///
    /// The lock is on the inventory file itself (`flock`), not on a name beside it: the same file
    /// reached through a symlink, a hard link, `./inv.db` or its absolute path is one lock, and
    /// two inventories never share one.
    pub fn lock_pushes(&self) -> Result<(), InventoryError> {
        match self.file.try_lock() {
            Ok(()) => {
                self.locked.set(true);
                Ok(())
            }
            Err(fs::TryLockError::WouldBlock) => {
                Err(InventoryError::Refused(crate::Refusal::Busy {
                    path: self.path.clone(),
                }))
            }
            Err(fs::TryLockError::Error(source)) => {
                Err(InventoryError::Storage(crate::StorageError::Io {
                    path: self.path.clone(),
                    source,
                }))
            }
        }
    }

    /// Whether another command holds the push lock now (a push or rollback running): a push of
    /// it in flight is then running, not interrupted. The lock is tried on the one descriptor
    /// this inventory has (closing another would drop SQLite's locks) and let go at once.
    pub fn pushing_elsewhere(&self) -> Result<bool, InventoryError> {
        if self.locked.get() {
            return Ok(false);
        }
        match self.file.try_lock() {
            Ok(()) => {
                self.file.unlock().map_err(|source| {
                    InventoryError::Storage(crate::StorageError::Io {
                        path: self.path.clone(),
                        source,
                    })
                })?;
                Ok(false)
            }
            Err(fs::TryLockError::WouldBlock) => Ok(true),
            Err(fs::TryLockError::Error(source)) => {
                Err(InventoryError::Storage(crate::StorageError::Io {
                    path: self.path.clone(),
                    source,
                }))
            }
        }
    }

    /// Runs `work` in one transaction: a command that reads (and allocates) for every node of the
    /// fleet takes the file's lock once rather than once per statement. What `work` wrote is kept
    /// when it returns, an error included (a port it allocated stays allocated, as it would have
    /// outside a transaction); only a failure of the inventory itself rolls it back.
    pub fn batch<T, E: From<InventoryError>>(
        &self,
        work: impl FnOnce(&Self) -> Result<T, E>,
    ) -> Result<T, E> {
        self.transaction(TransactionBehavior::Immediate, true, work)
    }

    /// Runs `work` in one transaction that is always rolled back: a question whose answer
    /// resolves (and so would allocate ports or generate secrets) asked by a command that may
    /// still refuse, leaving the file byte for byte as it was.
    pub fn trial<T, E: From<InventoryError>>(
        &self,
        work: impl FnOnce(&Self) -> Result<T, E>,
    ) -> Result<T, E> {
        self.transaction(TransactionBehavior::Deferred, false, work)
    }

    /// `work` in one transaction, kept or rolled back whatever it returns.
    fn transaction<T, E: From<InventoryError>>(
        &self,
        behavior: TransactionBehavior,
        keep: bool,
        work: impl FnOnce(&Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, behavior)
            .map_err(InventoryError::from)?;
        self.shared_layers.replace(Some(layers::Shared::default()));
        self.last_tags.replace(Some(tags::Last::default()));
        self.last_layers
            .replace(Some(layers::NodeLayers::default()));
        let outer = self.in_trial.replace(!keep);
        let out = work(self);
        self.in_trial.set(outer);
        self.names.replace(None);
        self.shared_layers.replace(None);
        self.last_tags.replace(None);
        self.last_layers.replace(None);
        if keep { tx.commit() } else { tx.rollback() }.map_err(InventoryError::from)?;
        out
    }

    /// The current time as the inventory writes it (UTC, ISO 8601).
    pub fn now(&self) -> Result<String, InventoryError> {
        Ok(self
            .conn
            .prepare_cached("SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now')")?
            .query_row([], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan of the whole fleet makes these reads once per node: each must find the node's rows
    /// through an index, never by reading every node's (a plan of N nodes would cost N^2).
    #[test]
    fn what_a_plan_reads_per_node_it_finds_through_an_index() {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        let per_node = [
            ("assignments", assignments::NODE_ASSIGNMENTS),
            ("answered", confirmed::ANSWERED),
            ("confirmed", confirmed::CONFIRMED),
            ("last_report", pushes::LAST_REPORT),
            ("last_outcome", pushes::LAST_OUTCOME),
            ("node_layers", layers::NODE_LAYERS),
            (
                "node_assignments_with_node",
                assignments::NODE_ASSIGNMENTS_WITH_NODE.as_str(),
            ),
        ];
        for (name, sql) in per_node {
            let mut stmt = inv
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let steps: Vec<String> = stmt
                .query_map(["node1"], |r| r.get(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(
                // `SCAN CONSTANT ROW` is the one row of `SELECT EXISTS (…)`
                steps
                    .iter()
                    .all(|s| !s.starts_with("SCAN") || s == "SCAN CONSTANT ROW"),
                "{name} reads every node's rows: {steps:?}"
            );
            // nor sorts them: a sorter is opened, and its memory taken, at every node
            assert!(
                steps.iter().all(|s| !s.contains("TEMP B-TREE")),
                "{name} sorts each node's rows: {steps:?}"
            );
        }
    }

    #[test]
    fn a_fresh_inventory_gets_every_migration_and_mode_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/inv.db");
        let inv = Inventory::init(&path).unwrap();
        assert_eq!(
            inv.schema_version().unwrap(),
            schema::MIGRATIONS.len() as i64
        );
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn init_refuses_an_existing_file_and_open_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inv.db");
        Inventory::init(&path).unwrap();
        assert!(matches!(
            Inventory::init(&path),
            Err(InventoryError::Storage(crate::StorageError::Exists { .. }))
        ));
        let missing = dir.path().join("none.db");
        let e = Inventory::open(&missing).err().unwrap().to_string();
        assert!(e.contains("mesh init"), "{e}");
    }

    #[test]
    fn the_push_lock_is_the_files_whatever_name_reaches_it() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("inv.db");
        Inventory::init(&real).unwrap();
        let linked = dir.path().join("link.db");
        std::os::unix::fs::symlink(&real, &linked).unwrap();
        let hard = dir.path().join("hard.sqlite");
        fs::hard_link(&real, &hard).unwrap();
        let roundabout = dir.path().join("sub/../inv.db");
        fs::create_dir(dir.path().join("sub")).unwrap();
        let held = Inventory::open(&real).unwrap();
        // bound, so a lock that lives in what it returns stays held
        let lock = held.lock_pushes();
        assert!(lock.is_ok());
        for name in [&linked, &hard, &roundabout] {
            let other = Inventory::open(name).unwrap();
            match other.lock_pushes() {
                Err(InventoryError::Refused(crate::Refusal::Busy { .. })) => {}
                Err(e) => panic!("{}: {e}", name.display()),
                Ok(_) => panic!("{} took a second push lock", name.display()),
            }
        }
        // another inventory beside it is not held: inv.sqlite is not inv.db
        let beside = dir.path().join("inv.sqlite");
        assert!(Inventory::init(&beside).unwrap().lock_pushes().is_ok());
        drop(lock);
        drop(held);
        assert!(Inventory::open(&linked).unwrap().lock_pushes().is_ok());
    }
}
