//! What answers requirements, kept so that it stays the same from push to push: placements of
//! host directories, pins and seats (ports and generated secrets are made in `allocate`).

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Inventory, InventoryError};

/// The ports the host hands out; the first free one on the node is taken.
pub const PORTS: std::ops::RangeInclusive<u16> = 20000..=29999;

/// Who holds a seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seat {
    pub seat: String,
    pub instance: String,
    pub node: String,
    pub set_at: String,
}

impl Inventory {
    /// Where `mesh place` put an instance's directory, if it did.
    pub fn placement(
        &self,
        node: &str,
        instance: &str,
        name: &str,
    ) -> Result<Option<String>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT path FROM placements WHERE node = ?1 AND instance = ?2 AND name = ?3",
            )?
            .query_row(params![node, instance, name], |r| r.get(0))
            .optional()?)
    }

    /// Places an instance's directory at `path`.
    pub fn place(
        &self,
        node: &str,
        instance: &str,
        name: &str,
        path: &str,
    ) -> Result<(), InventoryError> {
        self.conn.execute(
            "INSERT INTO placements (node, instance, name, path) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (node, instance, name) DO UPDATE SET path = ?4",
            params![node, instance, name, path],
        )?;
        Ok(())
    }

    /// The assignments with a requirement pinned to `instance` on `node`: `(node, instance)`.
    pub fn pinned_to(
        &self,
        instance: &str,
        node: &str,
    ) -> Result<Vec<(String, String)>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT DISTINCT node, instance FROM pins
                 WHERE provider_instance = ?1 AND provider_node = ?2 ORDER BY node, instance",
            )?
            .query_map(params![instance, node], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?)
    }

    /// The provider an assignment's requirement is pinned to: `(instance, node)`.
    pub fn pin(
        &self,
        node: &str,
        instance: &str,
        requirement: &str,
    ) -> Result<Option<(String, String)>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT provider_instance, provider_node FROM pins
                 WHERE node = ?1 AND instance = ?2 AND requirement = ?3",
            )?
            .query_row(params![node, instance, requirement], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?)
    }

    /// Pins an assignment's requirement to a provider.
    pub fn set_pin(
        &self,
        node: &str,
        instance: &str,
        requirement: &str,
        provider: (&str, &str),
    ) -> Result<(), InventoryError> {
        self.conn.execute(
            "INSERT INTO pins (node, instance, requirement, provider_instance, provider_node)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (node, instance, requirement) DO UPDATE SET provider_instance = ?4,
                 provider_node = ?5",
            params![node, instance, requirement, provider.0, provider.1],
        )?;
        Ok(())
    }

    /// Who holds `seat`.
    pub fn seat(&self, seat: &str) -> Result<Option<Seat>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached("SELECT seat, instance, node, set_at FROM seats WHERE seat = ?1")?
            .query_row([seat], |r| {
                Ok(Seat {
                    seat: r.get(0)?,
                    instance: r.get(1)?,
                    node: r.get(2)?,
                    set_at: r.get(3)?,
                })
            })
            .optional()?)
    }

    /// Every held seat.
    pub fn seats(&self) -> Result<Vec<Seat>, InventoryError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seat, instance, node, set_at FROM seats ORDER BY seat")?;
        let rows = stmt.query_map([], |r| {
            Ok(Seat {
                seat: r.get(0)?,
                instance: r.get(1)?,
                node: r.get(2)?,
                set_at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Gives `seat` to `instance` on `node`, returning who held it before.
    pub fn set_seat(
        &self,
        seat: &str,
        instance: &str,
        node: &str,
    ) -> Result<Option<Seat>, InventoryError> {
        let before = self.seat(seat)?;
        self.conn.execute(
            "INSERT INTO seats (seat, instance, node) VALUES (?1, ?2, ?3)
             ON CONFLICT (seat) DO UPDATE SET instance = ?2, node = ?3,
                 set_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
            params![seat, instance, node],
        )?;
        Ok(before)
    }
}

/// 32 characters from [A-Za-z0-9], from the kernel's random source (about 190 bits).
pub(super) fn generate_password() -> Result<String, InventoryError> {
    use std::io::Read;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::new();
    let mut random = std::fs::File::open("/dev/urandom").map_err(|e| {
        InventoryError::Storage(crate::StorageError::Corrupt(format!(
            "cannot read /dev/urandom: {e}"
        )))
    })?;
    while out.len() < 32 {
        let mut byte = [0u8; 1];
        random.read_exact(&mut byte).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!(
                "cannot read /dev/urandom: {e}"
            )))
        })?;
        // 248 = 4 * 62: no bias toward the first letters
        if byte[0] < 248 {
            out.push(char::from(ALPHABET[usize::from(byte[0]) % ALPHABET.len()]));
        }
    }
    Ok(out)
}
