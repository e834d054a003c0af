//! What can go wrong with the inventory, in two kinds: the file could not be read or written
//! ([`StorageError`]), or the inventory refused what it was asked ([`Refusal`]).

use std::path::PathBuf;

/// What can go wrong with the inventory: its storage failed, or it refused.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// The inventory could not be read or written.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The inventory refused what it was asked.
    #[error(transparent)]
    Refused(#[from] Refusal),
}

impl InventoryError {
    /// Whether the inventory refused what it was asked (rather than failing to be read or
    /// written).
    pub fn is_refusal(&self) -> bool {
        matches!(self, InventoryError::Refused(_))
    }

    /// Whether the inventory could not be read or written.
    pub fn is_storage(&self) -> bool {
        matches!(self, InventoryError::Storage(_))
    }
}

impl From<rusqlite::Error> for InventoryError {
    fn from(e: rusqlite::Error) -> Self {
        InventoryError::Storage(StorageError::Db(e))
    }
}

/// The inventory could not be read or written: the file (or the operator's key its secrets are
/// sealed to) is missing, there already, newer, unreadable, or holds what this mesh cannot read.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("no inventory at {}: run `mesh init` first (or point --inventory / MESH_INVENTORY at one)", path.display())]
    Missing { path: PathBuf },
    #[error("an inventory already exists at {}; it was left as it is", path.display())]
    Exists { path: PathBuf },
    #[error("{} was written by a newer mesh (schema {found}; this mesh knows {known}): use that mesh", path.display())]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("cannot create {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("inventory: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("the inventory holds something this mesh cannot read: {0}")]
    Corrupt(String),
    #[error(
        "cannot open the inventory's secrets with the operator's key {}: {why}; put the key back \
         (or point MESH_OPERATOR_KEY at it); nothing secret was read or sent",
        path.display()
    )]
    OperatorKey { path: PathBuf, why: String },
}

/// The inventory refused what it was asked, naming the thing it refused.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("no node called {name:?} in the inventory (nodes: {known})")]
    NoNode { name: String, known: String },
    #[error(
        "the inventory keeps no generation {number} of {node} (it keeps: {known}); `mesh history {node}` lists them"
    )]
    NoGeneration {
        node: String,
        number: u64,
        known: String,
    },
    #[error("there is no push #{id} in the inventory: `mesh history` lists them")]
    NoPush { id: i64 },
    #[error(
        "a node called {name:?} is already in the inventory; `mesh node remove {name}` first to replace it"
    )]
    NodeExists { name: String },
    #[error(
        "{instance:?} is already assigned to {node} (module {module}); use --as to run it twice under another name"
    )]
    AlreadyAssigned {
        node: String,
        instance: String,
        module: String,
    },
    #[error("nothing is assigned to {node} as {instance:?} (assigned there: {known})")]
    NotAssigned {
        node: String,
        instance: String,
        known: String,
    },
    #[error(
        "{name} would reach {address}:{port}, which the node {other} already reaches; one machine is one node (`mesh node set {other}` edits it); nothing was stored"
    )]
    SameAddress {
        name: String,
        other: String,
        address: String,
        port: u16,
    },
    #[error(
        "{other} has this host key: one machine is one node (`mesh node set {other}` edits it); {name} was not pinned"
    )]
    SameHostKey { name: String, other: String },
    #[error(
        "{tag:?} cannot be a tag: use letters, digits, '-', '_' and '.', starting with a letter"
    )]
    BadTag { tag: String },
    #[error("{selector:?} selects no node ({known}){}", if *exclude { "; an --exclude that spares nothing is taken for a typo" } else { "" })]
    NoMatch {
        selector: String,
        known: String,
        exclude: bool,
    },
    #[error("{selectors} leave no node once {excluded} are excluded; nothing was done")]
    NoneLeft { selectors: String, excluded: String },
    #[error("another mesh push is running against the inventory {} (it holds the file's lock); try again when it is done", path.display())]
    Busy { path: PathBuf },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_told_from_a_storage_error_and_says_what_it_said() {
        let missing = InventoryError::from(StorageError::Missing {
            path: PathBuf::from("/x/inv.db"),
        });
        assert!(missing.is_storage() && !missing.is_refusal());
        assert_eq!(
            missing.to_string(),
            "no inventory at /x/inv.db: run `mesh init` first (or point --inventory / \
             MESH_INVENTORY at one)"
        );
        let no_push = InventoryError::from(Refusal::NoPush { id: 3 });
        assert!(no_push.is_refusal() && !no_push.is_storage());
        assert_eq!(
            no_push.to_string(),
            "there is no push #3 in the inventory: `mesh history` lists them"
        );
        assert!(matches!(
            no_push,
            InventoryError::Refused(Refusal::NoPush { id: 3 })
        ));
    }

    #[test]
    fn a_database_error_is_a_storage_error_through_question_mark() {
        fn query() -> Result<i64, InventoryError> {
            let conn = rusqlite::Connection::open_in_memory()?;
            Ok(conn.query_row("SELECT no_such_column", [], |r| r.get(0))?)
        }
        let e = query().err();
        assert!(
            matches!(e, Some(InventoryError::Storage(StorageError::Db(_)))),
            "{e:?}"
        );
        assert!(e.is_some_and(|e| e.to_string().starts_with("inventory: ")));
    }
}
