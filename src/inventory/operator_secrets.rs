//! Secrets the operator sets (`mesh secret set`) and rotates (`mesh secret rotate`): kept, like a
//! generated one, sealed to the operator's key in the secrets table.

use rusqlite::{OptionalExtension, params};

use super::{Inventory, InventoryError};

impl Inventory {
    /// A secret field the operator set, opened; `None` when it was never set.
    pub fn operator_secret(
        &self,
        node: &str,
        instance: &str,
        provision: &str,
        field: &str,
    ) -> Result<Option<String>, InventoryError> {
        let kept: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM secrets
                 WHERE node = ?1 AND instance = ?2 AND provision = ?3 AND field = ?4",
                params![node, instance, provision, field],
                |r| r.get(0),
            )
            .optional()?;
        kept.map(|v| self.unseal(&v)).transpose()
    }

    /// Keeps `value` (sealed) as the secret field, replacing what was there; `true` when there
    /// was a value before.
    pub fn set_secret(
        &self,
        node: &str,
        instance: &str,
        provision: &str,
        field: &str,
        value: &str,
    ) -> Result<bool, InventoryError> {
        let sealed = self.seal(value)?;
        let before = self.conn.execute(
            "DELETE FROM secrets WHERE node = ?1 AND instance = ?2 AND provision = ?3 AND field = ?4",
            params![node, instance, provision, field],
        )?;
        self.conn.execute(
            "INSERT INTO secrets (node, instance, provision, field, value) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![node, instance, provision, field, sealed],
        )?;
        Ok(before > 0)
    }

    /// Makes a new generated value for a generated secret field.
    pub fn rotate_secret(
        &self,
        node: &str,
        instance: &str,
        provision: &str,
        field: &str,
    ) -> Result<(), InventoryError> {
        let value = super::answers::generate_password()?;
        self.set_secret(node, instance, provision, field, &value)?;
        Ok(())
    }
}
