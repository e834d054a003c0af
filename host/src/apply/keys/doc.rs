//! The JSON of a keys file: read (only an object is anyone's to write into), written as
//! people write it, and one key at a time put, looked up and given back, with the parent
//! objects the mesh made for it.

use serde_json::{Map, Value};

use super::super::Failure;
use crate::record::OwnedKey;
use mesh_wire::Key;

/// Reads a JSON object; an empty file is an empty object. Anything else is refused rather than
/// overwritten: it is someone else's file.
pub(super) fn parse(bytes: &[u8]) -> Result<Map<String, Value>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("holds JSON that is not an object; the mesh writes keys into an object only, and leaves the file alone".into()),
        Err(e) => Err(format!(
            "is not valid JSON ({e}); the mesh leaves it alone until it is fixed"
        )),
    }
}

/// Pretty JSON with a final newline, as people write these files.
pub(super) fn render(doc: &Map<String, Value>) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(doc).unwrap_or_default();
    out.push(b'\n');
    out
}

pub(super) fn get<'a>(doc: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut at = doc;
    for p in parents {
        at = at.get(p)?.as_object()?;
    }
    at.get(last)
}

/// How many of the key's parent objects are not there yet.
pub(super) fn missing_parents(doc: &Map<String, Value>, path: &[String]) -> usize {
    let parents = path.len().saturating_sub(1);
    let mut at = doc;
    for (depth, p) in path.iter().take(parents).enumerate() {
        match at.get(p).and_then(Value::as_object) {
            Some(next) => at = next,
            None => return parents - depth,
        }
    }
    0
}

pub(super) fn put(doc: &mut Map<String, Value>, key: &Key) -> Result<(), Failure> {
    let Some((last, parents)) = key.path.split_last() else {
        return Err("an empty key".into());
    };
    let mut at = doc;
    for (depth, p) in parents.iter().enumerate() {
        let slot = at
            .entry(p.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        at = slot.as_object_mut().ok_or_else(|| {
            format!(
                "{} holds a value that is not an object, so the key cannot go inside it",
                key.path[..=depth].join(".")
            )
        })?;
    }
    at.insert(last.clone(), key.value.clone());
    Ok(())
}

/// Puts back what a key replaced, or removes it if it was absent, then removes the parents the
/// mesh made if they are empty now.
pub(super) fn give_back(doc: &mut Map<String, Value>, owned: &OwnedKey) {
    let Some((last, parents)) = owned.path.split_last() else {
        return;
    };
    let mut at = &mut *doc;
    for p in parents {
        match at.get_mut(p).and_then(Value::as_object_mut) {
            Some(next) => at = next,
            // its parent is gone or replaced: nothing of ours is left to give back
            None => return,
        }
    }
    match &owned.original {
        Some(v) => {
            at.insert(last.clone(), v.clone());
        }
        None => {
            at.shift_remove(last);
        }
    }
    let first_made = parents.len() - owned.parents_made.min(parents.len());
    prune(doc, parents, first_made, 0);
}

/// Removes, deepest first, the empty objects along `parents` from depth `first_made` down: the
/// ones the mesh made.
fn prune(at: &mut Map<String, Value>, parents: &[String], first_made: usize, depth: usize) {
    let Some(name) = parents.get(depth) else {
        return;
    };
    let Some(child) = at.get_mut(name).and_then(Value::as_object_mut) else {
        return;
    };
    prune(child, parents, first_made, depth + 1);
    let empty = child.is_empty();
    if depth >= first_made && empty {
        at.shift_remove(name);
    }
}
