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

/// The node layers of the node last asked for in a transaction, by instance (`None` before any,
/// or once a write of layers forgot them): a plan resolves one node's assignments one after
/// another, and reads all of that node's layers in one query rather than one per assignment.
/// Each body is kept as stored and parsed when asked for, as a layer read alone is.
#[derive(Debug, Default)]
pub(super) struct NodeLayers(Option<(String, std::collections::HashMap<String, String>)>);

/// Every node layer of one node, by instance: found through `layers_by_node`.
pub(super) const NODE_LAYERS: &str = "SELECT module, body FROM layers WHERE node = ?1";

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
        if let LayerOf::Node(node) = scope {
            return self.node_layer(module, node);
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

    /// The node layer of `instance` on `node`: inside a transaction, from all of that node's
    /// layers read at once (and kept until another node is asked for); outside, as stored.
    fn node_layer(&self, instance: &str, node: &str) -> Result<Option<Layer>, InventoryError> {
        if let Some(NodeLayers(Some((n, layers)))) = &*self.last_layers.borrow()
            && n == node
        {
            return layers.get(instance).map(|t| parse(t)).transpose();
        }
        if self.last_layers.borrow().is_none() {
            return self.read_layer(instance, LayerOf::Node(node));
        }
        let mut layers = std::collections::HashMap::new();
        let mut stmt = self.conn.prepare_cached(NODE_LAYERS)?;
        let rows = stmt.query_map([node], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))?;
        for row in rows {
            let (module, body): (String, String) = row?;
            layers.insert(module, body);
        }
        let found = layers.get(instance).map(|t| parse(t)).transpose()?;
        if let Some(last) = self.last_layers.borrow_mut().as_mut() {
            last.0 = Some((node.to_string(), layers));
        }
        Ok(found)
    }

    /// Forgets the node layers kept ([`NodeLayers`]): every write of a node's layers calls it.
    pub(super) fn forget_node_layers(&self) {
        if let Some(last) = self.last_layers.borrow_mut().as_mut() {
            last.0 = None;
        }
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
        self.forget_node_layers();
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
        self.forget_node_layers();
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

#[cfg(test)]
mod tests {
    use super::LayerOf;
    use crate::{Inventory, Node};

    /// The node layers read in a transaction are the file's, node by node, each instance its
    /// own; removing the node forgets them, and outside a transaction each is read alone.
    #[test]
    fn a_nodes_layers_read_at_once_in_a_transaction_are_each_instances_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&Node::new("n1", "192.0.2.1")).unwrap();
        inv.add_node(&Node::new("n2", "192.0.2.2")).unwrap();
        let layer = |v: &str| {
            let mut l = super::Layer::new();
            l.insert("k".into(), v.into());
            l
        };
        inv.set_layer("a", LayerOf::Node("n1"), &layer("1a"))
            .unwrap();
        inv.set_layer("b", LayerOf::Node("n1"), &layer("1b"))
            .unwrap();
        inv.set_layer("a", LayerOf::Node("n2"), &layer("2a"))
            .unwrap();
        inv.set_layer("a", LayerOf::Mesh, &layer("mesh")).unwrap();
        inv.trial(|inv| {
            assert_eq!(inv.layer("a", LayerOf::Node("n1"))?, Some(layer("1a")));
            assert_eq!(inv.layer("b", LayerOf::Node("n1"))?, Some(layer("1b")));
            assert_eq!(inv.layer("c", LayerOf::Node("n1"))?, None);
            assert_eq!(inv.layer("a", LayerOf::Node("n2"))?, Some(layer("2a")));
            assert_eq!(inv.layer("b", LayerOf::Node("n2"))?, None);
            assert_eq!(inv.layer("a", LayerOf::Mesh)?, Some(layer("mesh")));
            inv.remove_node("n2")?;
            assert_eq!(inv.layer("a", LayerOf::Node("n2"))?, None);
            Ok::<_, crate::InventoryError>(())
        })
        .unwrap();
        // rolled back: the file's layers again, read alone
        assert_eq!(
            inv.layer("a", LayerOf::Node("n2")).unwrap(),
            Some(layer("2a"))
        );
        inv.clear_layer("a", LayerOf::Node("n1")).unwrap();
        assert_eq!(inv.layer("a", LayerOf::Node("n1")).unwrap(), None);
    }
}
