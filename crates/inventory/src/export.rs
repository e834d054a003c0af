//! The inventory as a text document a team reviews in git and shares: `mesh inventory export`
//! writes it, `mesh inventory import` reads it back.
//!
//! What the operator decided is in it: nodes (with pinned keys, tags, the ports the host gave
//! out, so they stay stable, and the generation a rollback holds a node at), assignments (with
//! pins and placements), settings layers and seats.
//! What the machines said (pushes, what each helper confirmed) is not, but for the generation
//! each machine was last seen at (so that an inventory made from the document is refused, as
//! stale, a push over a newer one), and neither are generated
//! secrets: an import keeps the secrets the inventory has, and one it lacks is generated afresh
//! the next time a plan or push needs it. Every list and map is sorted, so the same inventory is
//! always the same text and a diff shows only what changed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use rusqlite::params;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Inventory, InventoryError, Node};

/// The version of the document this mesh writes and reads.
pub const FORMAT: u32 = 1;

/// Said in every document, where the secrets would be.
const SECRETS: &str = "generated secrets are never exported; an import keeps the inventory's own, \
                       and one it lacks is generated afresh when a plan or push needs it";

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Document {
    /// The document's version: [`FORMAT`].
    pub mesh_inventory: u32,
    pub secrets: String,
    pub nodes: Vec<NodeEntry>,
    pub assignments: Vec<AssignmentEntry>,
    pub layers: Vec<LayerEntry>,
    pub seats: Vec<SeatEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NodeEntry {
    pub name: String,
    pub address: String,
    /// Absent: the ssh configuration's Port, else 22.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Absent: the ssh configuration's User, else root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Jump hosts, as `--jump` takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jump: Option<String>,
    pub identity: Option<PathBuf>,
    pub sudo: bool,
    pub root: String,
    pub lab: bool,
    pub host_key: Option<String>,
    /// A node on this machine (`node add --local DIR`): its root directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<PathBuf>,
    #[serde(default)]
    pub tags: BTreeSet<String>,
    /// `INSTANCE.NAME` → the port the host gave that requirement.
    #[serde(default)]
    pub ports: BTreeMap<String, u16>,
    /// The generation the node's machine was last seen at: an inventory imported from this
    /// document plans against it, so a push it makes after a newer one is refused as stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<mesh_wire::Generation>,
    /// The generation a rollback holds the node at, until `mesh rollback NODE --release`: an
    /// inventory imported from this document leaves the node there too. Absent (as in every
    /// document written before holds were exported): not held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_at: Option<HeldEntry>,
}

/// A rollback's hold of a node, as a document carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HeldEntry {
    pub generation: u64,
    /// When the rollback held it (UTC).
    pub since: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AssignmentEntry {
    pub node: String,
    pub instance: String,
    pub module: String,
    /// Requirement → `INSTANCE@NODE`.
    #[serde(default)]
    pub pins: BTreeMap<String, String>,
    /// Directory requirement → path on the node.
    #[serde(default)]
    pub placements: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LayerEntry {
    /// The module (mesh-wide layer) or the instance (a node's layer).
    pub module: String,
    /// `None`: the mesh-wide layer (or a tag's).
    pub node: Option<String>,
    /// The tag whose nodes the layer is for; `None`: the mesh-wide layer (or a node's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    pub values: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SeatEntry {
    pub seat: String,
    pub instance: String,
    pub node: String,
}

/// What an import changes, each thing named (`node web1`, `settings nginx on web1: key workers`).
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Changes {
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// Why a document cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("{file}: not a mesh inventory export: {reason}")]
    Malformed { file: String, reason: String },
    #[error(
        "{file} was written by a newer mesh (mesh-inventory {found}; this mesh reads {FORMAT}): import it with that mesh"
    )]
    TooNew { file: String, found: u64 },
    #[error("{file}: {what}: {reason}; nothing was imported")]
    Invalid {
        file: String,
        what: String,
        reason: String,
    },
}

impl Document {
    /// The document of an empty inventory.
    pub fn empty() -> Document {
        Document {
            mesh_inventory: FORMAT,
            secrets: SECRETS.to_string(),
            nodes: Vec::new(),
            assignments: Vec::new(),
            layers: Vec::new(),
            seats: Vec::new(),
        }
    }

    /// Reads a document, refusing one that is malformed or newer, naming the field.
    /// `config` says where each node is really reached (its HostName and Port), so two nodes on
    /// one machine are found however they name it.
    pub fn parse(
        file: &str,
        text: &str,
        config: &dyn super::Machines,
    ) -> Result<Document, DocumentError> {
        let malformed = |reason: String| DocumentError::Malformed {
            file: file.to_string(),
            reason,
        };
        let value: Value = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        match value.get("mesh-inventory").map(Value::as_u64) {
            None => return Err(malformed("it has no `mesh-inventory` field".into())),
            Some(None) => {
                return Err(malformed("`mesh-inventory` is not a version number".into()));
            }
            Some(Some(0)) => {
                return Err(malformed(format!(
                    "`mesh-inventory` 0 is no version a mesh wrote (this mesh reads {FORMAT})"
                )));
            }
            Some(Some(found)) if found > u64::from(FORMAT) => {
                return Err(DocumentError::TooNew {
                    file: file.to_string(),
                    found,
                });
            }
            Some(Some(_)) => {}
        }
        let doc: Document = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        doc.check(file, config)?;
        Ok(doc)
    }

    /// The document as text: pretty JSON, every list and map sorted, one newline at the end.
    pub fn to_text(&self) -> String {
        let mut doc = self.clone();
        doc.sort();
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        text
    }

    fn sort(&mut self) {
        self.nodes.sort_by(|a, b| a.name.cmp(&b.name));
        self.assignments
            .sort_by(|a, b| (&a.node, &a.instance).cmp(&(&b.node, &b.instance)));
        self.layers
            .sort_by(|a, b| (&a.module, &a.node).cmp(&(&b.module, &b.node)));
        self.seats.sort_by(|a, b| a.seat.cmp(&b.seat));
        for l in &mut self.layers {
            let values = std::mem::take(&mut l.values);
            l.values = values.into_iter().map(|(k, v)| (k, sorted(v))).collect();
        }
    }
}

/// `INSTANCE@NODE` split in two, both named.
pub fn holder(text: &str) -> Option<(&str, &str)> {
    text.split_once('@')
        .filter(|(i, n)| !i.is_empty() && !n.is_empty())
}

/// A port's key `INSTANCE.NAME` split in two (an instance may hold a dot, a requirement not).
pub(super) fn port_key(key: &str) -> Option<(&str, &str)> {
    key.rsplit_once('.')
        .filter(|(i, n)| !i.is_empty() && !n.is_empty())
}

/// `value` with every object's keys in order (a setting's object value is stored as it was set).
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let ordered: BTreeMap<String, Value> =
                map.into_iter().map(|(k, v)| (k, sorted(v))).collect();
            Value::Object(ordered.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

impl From<&NodeEntry> for Node {
    fn from(n: &NodeEntry) -> Node {
        let default = Node::new(&n.name, &n.address);
        Node {
            name: n.name.clone(),
            address: n.address.clone(),
            port: n.port.unwrap_or(default.port),
            user: n.user.clone().unwrap_or(default.user),
            port_given: n.port.is_some(),
            user_given: n.user.is_some(),
            jump: n.jump.clone(),
            identity: n.identity.clone(),
            sudo: n.sudo,
            host_key: n.host_key.clone(),
            lab: n.lab,
            root: n.root.clone(),
            local: n.local.clone(),
        }
    }
}

impl Inventory {
    /// The inventory as a document.
    pub fn export(&self) -> Result<Document, InventoryError> {
        let nodes = self.node_entries()?;
        let assignments = self.assignment_entries()?;
        let layers = self.layer_entries()?;
        let seats = self
            .seats()?
            .into_iter()
            .map(|s| SeatEntry {
                seat: s.seat,
                instance: s.instance,
                node: s.node,
            })
            .collect();
        let mut doc = Document {
            nodes,
            assignments,
            layers,
            seats,
            ..Document::empty()
        };
        doc.sort();
        Ok(doc)
    }

    /// Each node as the document says it, with its tags, ports, generation and hold.
    fn node_entries(&self) -> Result<Vec<NodeEntry>, InventoryError> {
        let tags = self.tags()?;
        let mut ports: BTreeMap<String, BTreeMap<String, u16>> = BTreeMap::new();
        let rows: Vec<(String, String, String, u16)> = self
            .rows("SELECT node, instance, name, port FROM ports", |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
        for (node, instance, name, port) in rows {
            ports
                .entry(node)
                .or_default()
                .insert(format!("{instance}.{name}"), port);
        }
        let mut generations = self.generations()?;
        let mut holds = self.holds()?;
        Ok(self
            .nodes()?
            .into_iter()
            .map(|n| NodeEntry {
                generation: generations.remove(&n.name),
                held_at: holds.remove(&n.name).map(|h| HeldEntry {
                    generation: h.generation,
                    since: h.since,
                }),
                tags: tags.get(&n.name).into_iter().flatten().cloned().collect(),
                ports: ports.remove(&n.name).unwrap_or_default(),
                name: n.name,
                address: n.address,
                port: n.port_given.then_some(n.port),
                user: n.user_given.then_some(n.user),
                jump: n.jump,
                identity: n.identity,
                sudo: n.sudo,
                root: n.root,
                lab: n.lab,
                host_key: n.host_key,
                local: n.local,
            })
            .collect())
    }

    /// Each assignment with its pins and placements.
    fn assignment_entries(&self) -> Result<Vec<AssignmentEntry>, InventoryError> {
        let mut assignments = Vec::new();
        for a in self.assignments(None)? {
            let key = params![a.node, a.instance];
            let pins = self.rows_with(
                "SELECT requirement, provider_instance || '@' || provider_node FROM pins
                 WHERE node = ?1 AND instance = ?2",
                key,
            )?;
            let placements = self.rows_with(
                "SELECT name, path FROM placements WHERE node = ?1 AND instance = ?2",
                params![a.node, a.instance],
            )?;
            assignments.push(AssignmentEntry {
                node: a.node,
                instance: a.instance,
                module: a.module,
                pins,
                placements,
            });
        }
        Ok(assignments)
    }

    /// Each settings layer, a node's, a tag's or mesh-wide.
    fn layer_entries(&self) -> Result<Vec<LayerEntry>, InventoryError> {
        let mut layers = Vec::new();
        for (module, node, body) in self.rows("SELECT module, node, body FROM layers", |r| {
            Ok((r.get(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })? {
            let values = serde_json::from_str(&body).map_err(|e| {
                InventoryError::Storage(crate::StorageError::Corrupt(format!(
                    "the settings layer of {module}: {e}"
                )))
            })?;
            let (node, tag) = super::LayerOf::from_column(&node);
            layers.push(LayerEntry {
                module,
                node,
                tag,
                values,
            });
        }
        Ok(layers)
    }

    fn rows<T>(
        &self,
        sql: &str,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, InventoryError> {
        let mut stmt = self.conn.prepare(sql)?;
        let rows = stmt.query_map([], row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A two-column query as a map.
    fn rows_with(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
    ) -> Result<BTreeMap<String, String>, InventoryError> {
        let mut stmt = self.conn.prepare(sql)?;
        let rows = stmt.query_map(args, |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
