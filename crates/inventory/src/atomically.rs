//! One transaction around what a command writes, for a command that changes many rows from one
//! document (an import of another tool's inventory): stored whole, or not at all.

use super::{Inventory, InventoryError};

impl Inventory {
    /// Runs `f` in one transaction: everything it writes is stored, or (it fails) nothing.
    pub fn atomically<T, E: From<InventoryError>>(
        &self,
        f: impl FnOnce(&Inventory) -> Result<T, E>,
    ) -> Result<T, E> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(InventoryError::from)?;
        let out = f(self)?;
        tx.commit().map_err(InventoryError::from)?;
        Ok(out)
    }
}
