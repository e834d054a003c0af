//! The catalogue folders the inventory remembers, in the order they are read (a later folder's
//! module overrides an earlier one's and the built-in one of the same name). Kept as given,
//! absolute: the command that adds one makes it so.

use std::path::{Path, PathBuf};

use rusqlite::params;

use super::{Inventory, InventoryError};

impl Inventory {
    /// The remembered folders, first read first.
    pub fn catalogue_folders(&self) -> Result<Vec<PathBuf>, InventoryError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT path FROM catalogue_folders ORDER BY position")?;
        let rows = st.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(PathBuf::from)
            .collect())
    }

    /// Remembers `folder` after the others; `false` where it is remembered already.
    pub fn remember_catalogue_folder(&self, folder: &Path) -> Result<bool, InventoryError> {
        let added = self.conn.execute(
            "INSERT OR IGNORE INTO catalogue_folders (position, path) VALUES \
             ((SELECT COALESCE(MAX(position), 0) + 1 FROM catalogue_folders), ?1)",
            params![folder.to_string_lossy()],
        )?;
        Ok(added > 0)
    }

    /// Forgets `folder`; `false` where it was not remembered.
    pub fn forget_catalogue_folder(&self, folder: &Path) -> Result<bool, InventoryError> {
        let gone = self.conn.execute(
            "DELETE FROM catalogue_folders WHERE path = ?1",
            params![folder.to_string_lossy()],
        )?;
        Ok(gone > 0)
    }
}
