//! Secret fields as the inventory keeps them, sealed to the operator's key: read back (one an
//! older mesh kept in clear is given as it is, and sealed by `allocate`), set by the operator
//! (`mesh secret set`) and rotated (`mesh secret rotate`). A per-consumer provision keeps one value for each consumer,
//! under [`consumer_key`]; it is forgotten once the consumer's provision is withdrawn.

use rusqlite::{OptionalExtension, params};

use super::{Inventory, InventoryError};

/// Where a per-consumer provision keeps what it made for one consumer: `PROVISION/LOGIN`.
pub fn consumer_key(provision: &str, login: &str) -> String {
    format!("{provision}/{login}")
}

/// The SQL test that `provision` (a column) is one of `?3`'s per-consumer keys.
const PER_CONSUMER: &str = "substr(provision, 1, length(?3) + 1) = ?3 || '/'";

impl Inventory {
    /// A kept secret field, opened; `None` when there is none (a generated one not made yet, or
    /// an operator's never set).
    pub fn kept_secret(
        &self,
        node: &str,
        instance: &str,
        provision: &str,
        field: &str,
    ) -> Result<Option<String>, InventoryError> {
        // kept compiled: a plan asks this for every provision of every node
        let kept: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT value FROM secrets
                 WHERE node = ?1 AND instance = ?2 AND provision = ?3 AND field = ?4",
            )?
            .query_row(params![node, instance, provision, field], |r| r.get(0))
            .optional()?;
        let Some(v) = kept else {
            return Ok(None);
        };
        // kept in clear by an older mesh: sealed by the next command that allocates
        if !Self::is_sealed(&v) {
            return Ok(Some(v));
        }
        self.unseal(&v).map(Some)
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
        // a per-consumer provision keeps one value per consumer (`PROVISION/LOGIN`): each is new
        let mut keys: Vec<String> = self
            .conn
            .prepare(&format!(
                "SELECT provision FROM secrets WHERE node = ?1 AND instance = ?2 AND field = ?4
                   AND (provision = ?3 OR {PER_CONSUMER})"
            ))?
            .query_map(params![node, instance, provision, field], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if keys.is_empty() {
            keys.push(provision.to_string());
        }
        for key in keys {
            let value = super::answers::generate_password()?;
            self.set_secret(node, instance, &key, field, &value)?;
        }
        Ok(())
    }

    /// The consumers (by login) `provision` of `instance` on `node` keeps a secret for.
    pub fn consumers_kept(
        &self,
        node: &str,
        instance: &str,
        provision: &str,
    ) -> Result<Vec<String>, InventoryError> {
        // kept compiled, as `kept_secret`: asked for every provider of the fleet
        let keys: Vec<String> = self
            .conn
            .prepare_cached(&format!(
                "SELECT DISTINCT provision FROM secrets
                 WHERE node = ?1 AND instance = ?2 AND {PER_CONSUMER} ORDER BY provision"
            ))?
            .query_map(params![node, instance, provision], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let prefix = consumer_key(provision, "");
        Ok(keys
            .iter()
            .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
            .collect())
    }

    /// Forgets every secret `provision` of `instance` on `node` kept for the consumer `login`:
    /// its provision was withdrawn from the machine.
    pub fn forget_consumer(
        &self,
        node: &str,
        instance: &str,
        provision: &str,
        login: &str,
    ) -> Result<(), InventoryError> {
        self.conn.execute(
            "DELETE FROM secrets WHERE node = ?1 AND instance = ?2 AND provision = ?3",
            params![node, instance, consumer_key(provision, login)],
        )?;
        Ok(())
    }
}
