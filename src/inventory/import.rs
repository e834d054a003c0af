//! Reading an exported document back into an inventory: what it changes is said first, and
//! applied in one transaction, so an import is all done or not at all. Nothing the machines said
//! (pushes, what each helper confirmed) and no generated secret of a node that stays is touched.

use std::collections::BTreeMap;

use rusqlite::params;
use serde::Serialize;
use serde_json::Value;

use super::export::{self, Changes, Document, LayerEntry, NodeEntry};
use super::{Inventory, InventoryError, Node, nodes};

impl Inventory {
    /// What importing `doc` would add, change and remove here.
    pub fn import_changes(&self, doc: &Document) -> Result<Changes, InventoryError> {
        Ok(changes(&self.export()?, doc))
    }

    /// Makes this inventory what `doc` says, removals included (the caller asks first).
    pub fn import(&mut self, doc: &Document) -> Result<(), InventoryError> {
        let now = self.export()?;
        let tx = self.conn.transaction()?;
        for old in now
            .nodes
            .iter()
            .filter(|o| !doc.nodes.iter().any(|n| n.name == o.name))
        {
            tx.execute("DELETE FROM layers WHERE node = ?1", [&old.name])?;
            tx.execute("DELETE FROM nodes WHERE name = ?1", [&old.name])?;
        }
        for entry in &doc.nodes {
            put_node(&tx, entry)?;
        }
        for old in &now.assignments {
            if !doc
                .assignments
                .iter()
                .any(|a| a.node == old.node && a.instance == old.instance)
            {
                tx.execute(
                    "DELETE FROM assignments WHERE node = ?1 AND instance = ?2",
                    params![old.node, old.instance],
                )?;
            }
        }
        for a in &doc.assignments {
            let key = params![a.node, a.instance];
            tx.execute(
                "INSERT INTO assignments (node, instance, module) VALUES (?1, ?2, ?3)
                 ON CONFLICT (node, instance) DO UPDATE SET module = ?3",
                params![a.node, a.instance, a.module],
            )?;
            tx.execute("DELETE FROM pins WHERE node = ?1 AND instance = ?2", key)?;
            tx.execute(
                "DELETE FROM placements WHERE node = ?1 AND instance = ?2",
                key,
            )?;
            for (requirement, holder) in &a.pins {
                let (instance, node) = export::holder(holder).unwrap_or((holder, ""));
                tx.execute(
                    "INSERT INTO pins (node, instance, requirement, provider_instance, provider_node)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![a.node, a.instance, requirement, instance, node],
                )?;
            }
            for (name, path) in &a.placements {
                tx.execute(
                    "INSERT INTO placements (node, instance, name, path) VALUES (?1, ?2, ?3, ?4)",
                    params![a.node, a.instance, name, path],
                )?;
            }
        }
        // a layer's change keeps the layer it replaced, as `settings set` and `clear` do
        let find = |layers: &[LayerEntry], l: &LayerEntry| {
            layers
                .iter()
                .find(|o| o.module == l.module && o.node == l.node)
                .map(|o| body(&o.values))
        };
        for old in &now.layers {
            if find(&doc.layers, old).is_none() {
                let node = old.node.as_deref().unwrap_or("");
                tx.execute(
                    "INSERT INTO layer_history (module, node, replaced, action)
                     VALUES (?1, ?2, ?3, 'clear')",
                    params![old.module, node, body(&old.values)],
                )?;
                tx.execute(
                    "DELETE FROM layers WHERE module = ?1 AND node = ?2",
                    params![old.module, node],
                )?;
            }
        }
        for l in &doc.layers {
            let before = find(&now.layers, l);
            let new = body(&l.values);
            if before.as_ref() == Some(&new) {
                continue;
            }
            let node = l.node.as_deref().unwrap_or("");
            tx.execute(
                "INSERT INTO layer_history (module, node, replaced, action) VALUES (?1, ?2, ?3, 'set')",
                params![l.module, node, before],
            )?;
            tx.execute(
                "INSERT INTO layers (module, node, body) VALUES (?1, ?2, ?3)
                 ON CONFLICT (module, node) DO UPDATE SET body = ?3,
                     set_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
                params![l.module, node, new],
            )?;
        }
        tx.execute("DELETE FROM seats", [])?;
        for s in &doc.seats {
            tx.execute(
                "INSERT INTO seats (seat, instance, node) VALUES (?1, ?2, ?3)",
                params![s.seat, s.instance, s.node],
            )?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// What making `now` into `doc` adds, changes and removes.
pub fn changes(now: &Document, doc: &Document) -> Changes {
    let mut c = Changes::default();
    compare(&mut c, &now.nodes, &doc.nodes, |n| {
        format!("node {}", n.name)
    });
    for new in &doc.nodes {
        if let Some(old) = now.nodes.iter().find(|o| o.name == new.name) {
            for tag in old.tags.difference(&new.tags) {
                c.removed.push(format!("tag {tag} of node {}", new.name));
            }
        }
    }
    compare(&mut c, &now.assignments, &doc.assignments, |a| {
        format!("assignment {} on {}", a.instance, a.node)
    });
    compare(&mut c, &now.layers, &doc.layers, layer_name);
    for new in &doc.layers {
        if let Some(old) = now
            .layers
            .iter()
            .find(|o| o.module == new.module && o.node == new.node)
        {
            for key in old.values.keys().filter(|k| !new.values.contains_key(*k)) {
                c.removed.push(format!("{}: key {key}", layer_name(new)));
            }
        }
    }
    compare(&mut c, &now.seats, &doc.seats, |s| {
        format!("seat {}", s.seat)
    });
    c
}

/// Adds or updates a node (its assignments, secrets and confirmed state stay), with its tags and
/// ports as the document says.
fn put_node(tx: &rusqlite::Transaction<'_>, entry: &NodeEntry) -> Result<(), InventoryError> {
    let n = Node::from(entry);
    nodes::write_node(tx, &n)?;
    tx.execute("DELETE FROM tags WHERE node = ?1", [&n.name])?;
    for tag in &entry.tags {
        tx.execute(
            "INSERT INTO tags (node, tag) VALUES (?1, ?2)",
            params![n.name, tag],
        )?;
    }
    tx.execute("DELETE FROM ports WHERE node = ?1", [&n.name])?;
    for (key, port) in &entry.ports {
        let (instance, name) = export::port_key(key).unwrap_or((key, ""));
        tx.execute(
            "INSERT INTO ports (node, instance, name, port) VALUES (?1, ?2, ?3, ?4)",
            params![n.name, instance, name, port],
        )?;
    }
    Ok(())
}

/// A layer as the inventory stores it.
fn body(values: &BTreeMap<String, Value>) -> String {
    serde_json::to_string(values).unwrap_or_default()
}

fn layer_name(l: &LayerEntry) -> String {
    match &l.node {
        Some(node) => format!("settings {} on {node}", l.module),
        None => format!("settings {} (mesh-wide)", l.module),
    }
}

/// Entries only in `new` are added, only in `old` removed; entries in both that differ are
/// changed, naming each field that moves.
fn compare<T: PartialEq + Serialize>(
    c: &mut Changes,
    old: &[T],
    new: &[T],
    name: impl Fn(&T) -> String,
) {
    for n in new {
        match old.iter().find(|o| name(o) == name(n)) {
            None => c.added.push(name(n)),
            Some(o) if o != n => c.changed.push(format!("{}: {}", name(n), fields(o, n))),
            Some(_) => {}
        }
    }
    for o in old {
        if !new.iter().any(|n| name(n) == name(o)) {
            c.removed.push(name(o));
        }
    }
}

/// `field old → new, …` for each field that differs.
fn fields<T: Serialize>(old: &T, new: &T) -> String {
    let (Ok(Value::Object(old)), Ok(Value::Object(new))) =
        (serde_json::to_value(old), serde_json::to_value(new))
    else {
        return String::new();
    };
    // a field left out of the document (a port the ssh configuration gives) reads as unset
    let shown = |v: Option<&Value>| v.map_or_else(|| "unset".to_string(), Value::to_string);
    let keys: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    keys.into_iter()
        .filter(|k| old.get(*k) != new.get(*k))
        .map(|k| format!("{k} {} → {}", shown(old.get(k)), shown(new.get(k))))
        .collect::<Vec<_>>()
        .join(", ")
}
