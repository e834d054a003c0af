//! Settings layers: per module, one mesh-wide and one per tag, and one per node (of an instance),
//! each replaced whole when set, each change keeping the layer it replaced.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::{Map, Value};

use super::{Inventory, InventoryError};

/// A layer's values: setting → value.
pub type Layer = Map<String, Value>;

/// Layers that are no node's own (mesh-wide and tag layers) as read in one transaction, by
/// module and column.
pub(super) type Shared = std::collections::HashMap<(String, String), Option<Layer>>;

/// Whose layer: a module's mesh-wide one, a module's for every node carrying a tag, or an
/// instance's on one node. Later ones win: mesh, then tags, then the node's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerOf<'a> {
    Mesh,
    Tag(&'a str),
    Node(&'a str),
}

/// A tag's layer is stored under `@TAG` where a node's is stored under its name: no node name
/// starts with `@`, and `@TAG` is how a selection names the same nodes.
const TAG: char = '@';

impl<'a> LayerOf<'a> {
    /// The mesh-wide layer, or a node's.
    pub fn of(node: Option<&'a str>) -> LayerOf<'a> {
        node.map_or(LayerOf::Mesh, LayerOf::Node)
    }

    /// The `node` column of the layers tables.
    fn column(self) -> String {
        match self {
            LayerOf::Mesh => String::new(),
            LayerOf::Tag(t) => format!("{TAG}{t}"),
            LayerOf::Node(n) => n.to_string(),
        }
    }

    /// The node or the tag a stored `node` column names (neither: the mesh-wide layer).
    pub fn from_column(column: &str) -> (Option<String>, Option<String>) {
        match column.strip_prefix(TAG) {
            Some(tag) => (None, Some(tag.to_string())),
            None => (Some(column.to_string()).filter(|n| !n.is_empty()), None),
        }
    }

    /// The column a layer of `node` or `tag` (at most one) is stored under.
    pub fn column_of(node: Option<&str>, tag: Option<&str>) -> String {
        match (node, tag) {
            (_, Some(t)) => LayerOf::Tag(t).column(),
            (n, None) => LayerOf::of(n).column(),
        }
    }
}

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
        _ => Err(InventoryError::Storage(crate::StorageError::Corrupt(
            format!("a settings layer is not a JSON object: {text}"),
        ))),
    }
}

impl Inventory {
    /// A layer: a module's mesh-wide or tag layer, or an instance's node layer.
    pub fn layer(&self, module: &str, scope: LayerOf) -> Result<Option<Layer>, InventoryError> {
        if matches!(scope, LayerOf::Node(_)) {
            return self.read_layer(module, scope);
        }
        let key = (module.to_string(), scope.column());
        if let Some(read) = self
            .shared_layers
            .borrow()
            .as_ref()
            .and_then(|s| s.get(&key))
        {
            return Ok(read.clone());
        }
        let layer = self.read_layer(module, scope)?;
        if let Some(shared) = self.shared_layers.borrow_mut().as_mut() {
            shared.insert(key, layer.clone());
        }
        Ok(layer)
    }

    /// A layer as the file has it.
    fn read_layer(&self, module: &str, scope: LayerOf) -> Result<Option<Layer>, InventoryError> {
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT body FROM layers WHERE module = ?1 AND node = ?2")?
            .query_row(params![module, scope.column()], |r| r.get(0))
            .optional()?;
        text.map(|t| parse(&t)).transpose()
    }

    /// The tag layers of `module` among `tags`, in the tags' order, each with its tag.
    pub fn tag_layers(
        &self,
        module: &str,
        tags: &[String],
    ) -> Result<Vec<(String, Layer)>, InventoryError> {
        let mut out = Vec::new();
        for tag in tags {
            if let Some(layer) = self.layer(module, LayerOf::Tag(tag))? {
                out.push((tag.clone(), layer));
            }
        }
        Ok(out)
    }

    /// Replaces a layer whole, keeping the one it replaced in the history.
    pub fn set_layer(
        &mut self,
        module: &str,
        scope: LayerOf,
        layer: &Layer,
    ) -> Result<(), InventoryError> {
        let node = scope.column();
        let before = self.layer(module, scope)?;
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO layer_history (module, node, replaced, action) VALUES (?1, ?2, ?3, 'set')",
            params![module, node, before.map(|b| Value::Object(b).to_string())],
        )?;
        tx.execute(
            "INSERT INTO layers (module, node, body) VALUES (?1, ?2, ?3)
             ON CONFLICT (module, node) DO UPDATE SET body = ?3,
                 set_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
            params![module, node, Value::Object(layer.clone()).to_string()],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Removes a layer, keeping it in the history. Returns what was removed.
    pub fn clear_layer(
        &mut self,
        module: &str,
        scope: LayerOf,
    ) -> Result<Option<Layer>, InventoryError> {
        let node = scope.column();
        let before = self.layer(module, scope)?;
        if before.is_none() {
            return Ok(None);
        }
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO layer_history (module, node, replaced, action) VALUES (?1, ?2, ?3, 'clear')",
            params![module, node, before.clone().map(|b| Value::Object(b).to_string())],
        )?;
        tx.execute(
            "DELETE FROM layers WHERE module = ?1 AND node = ?2",
            params![module, node],
        )?;
        tx.commit()?;
        Ok(before)
    }

    /// Every change of a layer, oldest first.
    pub fn layer_history(
        &self,
        module: &str,
        scope: LayerOf,
    ) -> Result<Vec<HistoryEntry>, InventoryError> {
        let mut stmt = self.conn.prepare(
            "SELECT at, action, replaced FROM layer_history WHERE module = ?1 AND node = ?2 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![module, scope.column()], |r| {
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
