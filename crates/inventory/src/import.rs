//! Reading an exported document back into an inventory: what it changes is said first, and
//! applied in one transaction, so an import is all done or not at all. Nothing the machines said
//! (pushes, what each helper confirmed) and no generated secret of a node that stays is touched.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rusqlite::params;
use serde::Serialize;
use serde_json::Value;

use super::export::{self, AssignmentEntry, Changes, Document, HeldEntry, LayerEntry, NodeEntry};
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
        put_nodes(&tx, &now, doc)?;
        put_assignments(&tx, &now, doc)?;
        put_layers(&tx, &now, doc)?;
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

// every lookup below is through a set, never a scan of the document: an import is linear in its
// size

/// Removes the nodes `doc` does not have (with their layers), and puts each it has.
fn put_nodes(
    tx: &rusqlite::Transaction<'_>,
    now: &Document,
    doc: &Document,
) -> Result<(), InventoryError> {
    let names: HashSet<&str> = doc.nodes.iter().map(|n| n.name.as_str()).collect();
    for old in now
        .nodes
        .iter()
        .filter(|o| !names.contains(o.name.as_str()))
    {
        tx.execute("DELETE FROM layers WHERE node = ?1", [&old.name])?;
        tx.execute("DELETE FROM nodes WHERE name = ?1", [&old.name])?;
    }
    for entry in &doc.nodes {
        put_node(tx, entry)?;
    }
    Ok(())
}

/// Removes the assignments `doc` does not have, and puts each it has with its pins and
/// placements as the document says.
fn put_assignments(
    tx: &rusqlite::Transaction<'_>,
    now: &Document,
    doc: &Document,
) -> Result<(), InventoryError> {
    let assigned: HashSet<(&str, &str)> = doc
        .assignments
        .iter()
        .map(|a| (a.node.as_str(), a.instance.as_str()))
        .collect();
    for old in &now.assignments {
        if !assigned.contains(&(old.node.as_str(), old.instance.as_str())) {
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
    Ok(())
}

/// Clears the layers `doc` does not have and sets each it changes; a layer's change keeps the
/// layer it replaced, as `settings set` and `clear` do.
fn put_layers(
    tx: &rusqlite::Transaction<'_>,
    now: &Document,
    doc: &Document,
) -> Result<(), InventoryError> {
    let by_key = |layers: &'_ [LayerEntry]| -> HashMap<(String, String), String> {
        layers
            .iter()
            .map(|l| ((l.module.clone(), column(l)), body(&l.values)))
            .collect()
    };
    let (was, will) = (by_key(&now.layers), by_key(&doc.layers));
    let key = |l: &LayerEntry| (l.module.clone(), column(l));
    for old in &now.layers {
        if !will.contains_key(&key(old)) {
            let node = column(old);
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
        let before = was.get(&key(l)).cloned();
        let new = body(&l.values);
        if before.as_ref() == Some(&new) {
            continue;
        }
        let node = column(l);
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
    Ok(())
}

/// What making `now` into `doc` adds, changes and removes. Whatever goes from a value to
/// nothing is a removal (`-`), as a node or an assignment is: a pinned host key, a tag, a port the
/// host gave out, a pin, a placement, a setting; so is a pinned host key the file replaces with
/// another (the file would re-pin the machine). The CLI refuses every removal without
/// `--replace`, so the inventory is always exactly the file or left as it was.
pub fn changes(now: &Document, doc: &Document) -> Changes {
    let mut c = Changes::default();
    node_changes(&mut c, now, doc);
    assignment_changes(&mut c, now, doc);
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

/// The nodes' changes: each node's own fields whole, then what it holds one by one (tags,
/// ports, its pinned host key, a rollback's hold).
fn node_changes(c: &mut Changes, now: &Document, doc: &Document) {
    let bare = |nodes: &[NodeEntry]| -> Vec<NodeEntry> {
        nodes
            .iter()
            .map(|n| NodeEntry {
                tags: BTreeSet::new(),
                ports: BTreeMap::new(),
                host_key: None,
                // what the machines said is not the operator's to review
                generation: None,
                held_at: None,
                ..n.clone()
            })
            .collect()
    };
    compare(c, &bare(&now.nodes), &bare(&doc.nodes), |n| {
        format!("node {}", n.name)
    });
    let old_nodes: HashMap<&str, &NodeEntry> =
        now.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    for new in &doc.nodes {
        let Some(old) = old_nodes.get(new.name.as_str()) else {
            // a node new here comes with its hold: an operator's decision, listed as any
            hold(c, &new.name, None, new.held_at.as_ref());
            continue;
        };
        let of = format!("of node {}", new.name);
        let tags = |n: &NodeEntry| n.tags.iter().map(|t| (t.clone(), String::new())).collect();
        held(c, &tags(old), &tags(new), &|t| format!("tag {t} {of}"));
        let ports = |n: &NodeEntry| {
            n.ports
                .iter()
                .map(|(k, p)| (k.clone(), p.to_string()))
                .collect()
        };
        held(c, &ports(old), &ports(new), &|k| format!("port {k} {of}"));
        host_key(
            c,
            &new.name,
            old.host_key.as_deref(),
            new.host_key.as_deref(),
        );
        hold(c, &new.name, old.held_at.as_ref(), new.held_at.as_ref());
    }
}

/// The assignments' changes: another module under an instance's name first, then each
/// assignment whole, then its pins and placements one by one.
fn assignment_changes(c: &mut Changes, now: &Document, doc: &Document) {
    let old_assignments: HashMap<(&str, &str), &AssignmentEntry> = now
        .assignments
        .iter()
        .map(|a| ((a.node.as_str(), a.instance.as_str()), a))
        .collect();
    // another module under an instance's name is that instance taken off and another put on, as
    // `mesh unassign` and `mesh assign` would: a removal (its provisions, what it made go too)
    let mut remodule = HashSet::new();
    for (i, new) in doc.assignments.iter().enumerate() {
        if let Some(old) = old_assignments.get(&(new.node.as_str(), new.instance.as_str()))
            && old.module != new.module
        {
            remodule.insert((new.node.as_str(), new.instance.as_str()));
            c.removed.push(format!(
                "assignment {} on {} of module {} (assignments[{i}].module is {} in the file)",
                new.instance, new.node, old.module, new.module
            ));
            c.added.push(format!(
                "assignment {} on {} of module {}",
                new.instance, new.node, new.module
            ));
        }
    }
    let bare = |list: &[AssignmentEntry]| -> Vec<AssignmentEntry> {
        list.iter()
            .filter(|a| !remodule.contains(&(a.node.as_str(), a.instance.as_str())))
            .map(|a| AssignmentEntry {
                pins: BTreeMap::new(),
                placements: BTreeMap::new(),
                ..a.clone()
            })
            .collect()
    };
    compare(c, &bare(&now.assignments), &bare(&doc.assignments), |a| {
        format!("assignment {} on {}", a.instance, a.node)
    });
    for new in &doc.assignments {
        let Some(old) = old_assignments.get(&(new.node.as_str(), new.instance.as_str())) else {
            continue;
        };
        if old.module != new.module {
            continue;
        }
        let of = format!("of assignment {} on {}", new.instance, new.node);
        held(c, &old.pins, &new.pins, &|r| format!("pin {r} {of}"));
        held(c, &old.placements, &new.placements, &|d| {
            format!("placement {d} {of}")
        });
    }
}

/// What a node or assignment holds, one entry at a time: new ones added, changed ones changed,
/// gone ones removed; `name` names an entry by its key, its value is said after it.
fn held(
    c: &mut Changes,
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
    name: &dyn Fn(&str) -> String,
) {
    let said = |k: &str, v: &str| {
        if v.is_empty() {
            name(k)
        } else {
            format!("{} ({v})", name(k))
        }
    };
    for (k, v) in new {
        match old.get(k) {
            None => c.added.push(said(k, v)),
            Some(o) if o != v => c.changed.push(format!("{}: {o} → {v}", name(k))),
            Some(_) => {}
        }
    }
    for (k, v) in old.iter().filter(|(k, _)| !new.contains_key(*k)) {
        c.removed.push(said(k, v));
    }
}

/// A pinned host key: pinning one is a change; unpinning it, or pinning another key in its
/// place, is a removal of the pin there is (the machine would be trusted on the file's word).
fn host_key(c: &mut Changes, node: &str, old: Option<&str>, new: Option<&str>) {
    let shown = |key: &str| {
        mesh_ssh::parse_public_key(key)
            .map(|k| mesh_ssh::fingerprint(&k))
            .unwrap_or_else(|_| key.to_string())
    };
    match (old.map(shown), new.map(shown)) {
        (None, Some(new)) => c
            .changed
            .push(format!("node {node}: host key pinned as {new}")),
        (Some(old), None) => c
            .removed
            .push(format!("the pinned host key {old} of node {node}")),
        (Some(old), Some(new)) if old != new => c.removed.push(format!(
            "the pinned host key {old} of node {node}, for another key {new}"
        )),
        _ => {}
    }
}

/// A rollback's hold, an operator's decision: holding is a change; letting go (the file says
/// the node is not held) is a removal of the hold, as `mesh rollback --release` would be.
fn hold(c: &mut Changes, node: &str, old: Option<&HeldEntry>, new: Option<&HeldEntry>) {
    match (old.map(|h| h.generation), new.map(|h| h.generation)) {
        (None, Some(g)) => c
            .changed
            .push(format!("node {node}: held at generation {g} by rollback")),
        (Some(g), None) => c.removed.push(format!(
            "the rollback hold of node {node} at generation {g}"
        )),
        (Some(was), Some(g)) if was != g => c.changed.push(format!(
            "node {node}: held at generation {was} → {g} by rollback"
        )),
        _ => {}
    }
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
    if let Some(generation) = &entry.generation {
        super::generations::imported(tx, &n.name, generation)?;
    }
    super::rollback_holds::imported(tx, &n.name, entry.held_at.as_ref())?;
    Ok(())
}

/// A layer as the inventory stores it.
fn body(values: &BTreeMap<String, Value>) -> String {
    serde_json::to_string(values).unwrap_or_default()
}

/// The `node` column a layer is stored under.
fn column(l: &LayerEntry) -> String {
    super::LayerOf::column_of(l.node.as_deref(), l.tag.as_deref())
}

fn layer_name(l: &LayerEntry) -> String {
    match (&l.node, &l.tag) {
        (Some(node), _) => format!("settings {} on {node}", l.module),
        (None, Some(tag)) => format!("settings {} for tag {tag}", l.module),
        (None, None) => format!("settings {} (mesh-wide)", l.module),
    }
}

/// Entries only in `new` are added, only in `old` removed; entries in both that differ are
/// changed, naming each field that moves. Found by name through a map: linear in the entries.
fn compare<T: PartialEq + Serialize>(
    c: &mut Changes,
    old: &[T],
    new: &[T],
    name: impl Fn(&T) -> String,
) {
    let olds: HashMap<String, &T> = old.iter().map(|o| (name(o), o)).collect();
    let news: HashSet<String> = new.iter().map(&name).collect();
    for n in new {
        let key = name(n);
        match olds.get(&key) {
            None => c.added.push(key),
            Some(o) if *o != n => c.changed.push(format!("{key}: {}", fields(*o, n))),
            Some(_) => {}
        }
    }
    for o in old {
        let key = name(o);
        if !news.contains(&key) {
            c.removed.push(key);
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
