//! Settings layers: per module, one mesh-wide and one per node, each replaced whole when set,
//! each change keeping the layer it replaced.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::{Map, Value};

use super::{Inventory, InventoryError};

/// A layer's values: setting → value.
pub type Layer = Map<String, Value>;

/// One change of a layer, with the layer it replaced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEntry {
    pub at: String,
    /// `set` or `clear`.
    pub action: String,
    /// The layer before the change; `None` when there was none.
    pub replaced: Option<Layer>,
}

fn parse(text: &str) -> Result<Layer, InventoryError> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(InventoryError::Corrupt(format!(
            "a settings layer is not a JSON object: {text}"
        ))),
    }
}

impl Inventory {
    /// A module's layer: the mesh-wide one (`node` = `None`) or a node's.
    pub fn layer(&self, module: &str, node: Option<&str>) -> Result<Option<Layer>, InventoryError> {
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT body FROM layers WHERE module = ?1 AND node = ?2")?
            .query_row(params![module, node.unwrap_or("")], |r| r.get(0))
            .optional()?;
        text.map(|t| parse(&t)).transpose()
    }

    /// Replaces a layer whole, keeping the one it replaced in the history.
    pub fn set_layer(
        &mut self,
        module: &str,
        node: Option<&str>,
        layer: &Layer,
    ) -> Result<(), InventoryError> {
        let before = self.layer(module, node)?;
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO layer_history (module, node, replaced, action) VALUES (?1, ?2, ?3, 'set')",
            params![
                module,
                node.unwrap_or(""),
                before.map(|b| Value::Object(b).to_string())
            ],
        )?;
        tx.execute(
            "INSERT INTO layers (module, node, body) VALUES (?1, ?2, ?3)
             ON CONFLICT (module, node) DO UPDATE SET body = ?3,
                 set_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
            params![
                module,
                node.unwrap_or(""),
                Value::Object(layer.clone()).to_string()
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Removes a layer, keeping it in the history. Returns what was removed.
    pub fn clear_layer(
        &mut self,
        module: &str,
        node: Option<&str>,
    ) -> Result<Option<Layer>, InventoryError> {
        let before = self.layer(module, node)?;
        if before.is_none() {
            return Ok(None);
        }
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO layer_history (module, node, replaced, action) VALUES (?1, ?2, ?3, 'clear')",
            params![module, node.unwrap_or(""), before.clone().map(|b| Value::Object(b).to_string())],
        )?;
        tx.execute(
            "DELETE FROM layers WHERE module = ?1 AND node = ?2",
            params![module, node.unwrap_or("")],
        )?;
        tx.commit()?;
        Ok(before)
    }

    /// Every change of a layer, oldest first.
    pub fn layer_history(
        &self,
        module: &str,
        node: Option<&str>,
    ) -> Result<Vec<HistoryEntry>, InventoryError> {
        let mut stmt = self.conn.prepare(
            "SELECT at, action, replaced FROM layer_history WHERE module = ?1 AND node = ?2 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![module, node.unwrap_or("")], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (at, action, replaced) = row?;
            out.push(HistoryEntry {
                at,
                action,
                replaced: replaced.map(|t| parse(&t)).transpose()?,
            });
        }
        Ok(out)
    }
}
