//! Answering the machine's facts for a `"fact"` requirement: `${host.os.codename}`
//! reads what the node's helper last said of its machine. A definition that reads a fact the
//! machine has never said holds its assignment back until a check or push asks it, never
//! rendered empty.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::Module;
use crate::inventory::{Inventory, InventoryError, Node};
use crate::wire::{FIELDS, FactValue};

/// Puts each fact of the machine that `module` reads through requirement `requirement` into
/// `values`. Where the machine never said its facts, the first one read (`host.os.id`) is
/// returned, not an error: the assignment is then held (see [`super::Held::facts`]), never
/// rendered empty.
pub(super) fn answer(
    inventory: &Inventory,
    module: &Module,
    node: &Node,
    requirement: &str,
    values: &mut BTreeMap<String, Value>,
) -> Result<Option<String>, InventoryError> {
    let key = |field: &str| format!("{requirement}.{field}");
    let read: Vec<_> = FIELDS
        .iter()
        .filter(|f| module.reads.contains(&key(f.name)))
        .collect();
    let Some(first) = read.first() else {
        return Ok(None);
    };
    // facts stored before they were checked on arrival are checked again: one that breaks its
    // shape is no fact, and holds the assignment as a fact never said does
    let known = inventory.facts(&node.name)?;
    let Some(known) = known.filter(|k| k.facts.check().is_ok()) else {
        return Ok(Some(key(first.name)));
    };
    for f in read {
        values.insert(key(f.name), json(f.value(&known.facts)));
    }
    Ok(None)
}

/// A fact as a template reads it.
fn json(value: FactValue) -> Value {
    match value {
        FactValue::Text(s) => Value::String(s),
        FactValue::Number(n) => Value::from(n),
        FactValue::List(l) => Value::Array(l.into_iter().map(Value::String).collect()),
    }
}

/// The settings of `module` no layer sets whose default is a fact of the machine
/// (`default-fact`), answered from what `node`'s machine last said; left unset, the fact named,
/// where it said nothing yet (the assignment is then held, as for a fact requirement).
pub(super) fn defaults(
    inventory: &Inventory,
    module: &Module,
    node: &str,
    settings: &mut [super::Effective],
) -> Result<(), InventoryError> {
    let mut known = None;
    for e in settings
        .iter_mut()
        .filter(|e| e.source == super::Source::Unset)
    {
        let Some(fact) = module
            .setting(&e.name)
            .and_then(|s| s.default_fact.as_deref())
        else {
            continue;
        };
        let Some(field) = FIELDS.iter().find(|f| f.name == fact) else {
            continue;
        };
        if known.is_none() {
            known = Some(inventory.facts(node)?.filter(|k| k.facts.check().is_ok()));
        }
        e.fact = Some(format!("host.{fact}"));
        if let Some(Some(k)) = &known {
            e.value = Some(json(field.value(&k.facts)));
            e.source = super::Source::Fact;
        }
    }
    Ok(())
}

/// A fact of the machine that moved since the last push, and the assignments that read it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FactMove {
    pub fact: &'static str,
    /// Its value when the last push was planned, and now, in words.
    pub was: String,
    pub now: String,
    /// The instances on the node whose definition reads it.
    pub read_by: Vec<String>,
}

/// The facts of `node`'s machine that some assignment of it reads and that moved since its last
/// push (a check, or that push's answer, said them since): what a plan shows beside the changes
/// they make. A module the catalogue lacks reads nothing here (its node is refused anyway).
pub fn moved(
    inventory: &Inventory,
    catalogue: &crate::catalogue::Catalogue,
    node: &str,
) -> Result<Vec<FactMove>, InventoryError> {
    let Some(known) = inventory.facts(node)? else {
        return Ok(Vec::new());
    };
    let Some(pushed) = &known.pushed else {
        return Ok(Vec::new());
    };
    let changed = pushed.changed(&known.facts);
    if changed.is_empty() {
        return Ok(Vec::new());
    }
    let mut readers: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for a in inventory.assignments(Some(node))? {
        let Ok(module) = catalogue.module(&a.module) else {
            continue;
        };
        let facts = module
            .requires
            .iter()
            .filter(|r| matches!(r.need, crate::catalogue::Need::Fact));
        for r in facts {
            for (fact, _, _) in &changed {
                if module.reads.contains(&format!("{}.{fact}", r.name)) {
                    readers.entry(fact).or_default().push(a.instance.clone());
                }
            }
        }
    }
    Ok(changed
        .into_iter()
        .filter_map(|(fact, was, now)| {
            let read_by = readers.remove(fact)?;
            Some(FactMove {
                fact,
                was,
                now,
                read_by,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::wire::{FIELDS, FactKind};

    /// The guide's table of facts comes from [`FIELDS`]: a fact added there and not to the
    /// guide (or one the guide names that is gone) fails here.
    #[test]
    fn the_guide_lists_every_fact_as_the_helper_answers_it() {
        let guide = include_str!("../../catalogue/README.md");
        let rows: Vec<&str> = guide
            .lines()
            .filter(|l| l.starts_with("| `${host."))
            .collect();
        assert_eq!(rows.len(), FIELDS.len(), "{rows:#?}");
        for f in FIELDS {
            let kind = match f.kind {
                FactKind::Text => "string",
                FactKind::Number => "integer",
                FactKind::List => "list",
            };
            let row = format!("| `${{host.{}}}` | {} | {kind} |", f.name, f.meaning);
            assert!(rows.contains(&row.as_str()), "the guide lacks {row}");
        }
    }
}
