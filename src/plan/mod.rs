//! Plans: what a push would change, from comparing the declaration composed now with what the
//! node was last sent. The copy of what was sent is only ever read to compare: what a node
//! *should* be is composed afresh every time.

pub mod diff;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::wire::{Cost, Declaration, Resource, Spec, change_cost};

/// What a push would do to one node.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub node: String,
    /// Nothing was ever sent to this node.
    pub first_send: bool,
    pub changes: Vec<Change>,
    /// Units that would reload or restart, with the resources that cause it.
    pub units: Vec<UnitChange>,
}

/// One resource that differs.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub id: String,
    pub action: Action,
    /// The fields that differ (for `changed`).
    pub fields: Vec<String>,
    /// What it was (for `changed` and `removed`).
    #[serde(skip)]
    pub old: Option<Resource>,
    /// What it will be (for `added` and `changed`).
    #[serde(skip)]
    pub new: Option<Resource>,
}

/// What happens to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Added,
    Changed,
    Removed,
}

impl Action {
    pub fn sign(self) -> char {
        match self {
            Action::Added => '+',
            Action::Changed => '~',
            Action::Removed => '-',
        }
    }
}

/// A unit that pays for changes.
#[derive(Debug, Clone, Serialize)]
pub struct UnitChange {
    pub unit: String,
    pub action: Cost,
    pub because: Vec<String>,
}

impl Plan {
    /// Whether the push would change nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// Compares `next` with what was last sent.
pub fn plan(next: &Declaration, last: Option<&Declaration>) -> Plan {
    let before: BTreeMap<&str, &Resource> = last
        .map(|d| d.resources.iter().map(|r| (r.id.as_str(), r)).collect())
        .unwrap_or_default();
    let mut changes = Vec::new();
    let mut units: BTreeMap<String, (Cost, Vec<String>)> = BTreeMap::new();
    for r in &next.resources {
        match before.get(r.id.as_str()) {
            None => {
                changes.push(Change {
                    id: r.id.clone(),
                    action: Action::Added,
                    fields: vec![],
                    old: None,
                    new: Some(r.clone()),
                });
                let Spec::File(f) = &r.spec;
                for u in &f.units {
                    owe(&mut units, u, change_cost(None, f, false), &r.id);
                }
            }
            Some(old) => {
                let fields = differing_fields(old, r);
                if fields.is_empty() {
                    continue;
                }
                let (Spec::File(was), Spec::File(now)) = (&old.spec, &r.spec);
                if was.content != now.content {
                    let cost = change_cost(Some((was.source.as_str(), &was.settings)), now, false);
                    for u in &now.units {
                        owe(&mut units, u, cost, &r.id);
                    }
                }
                changes.push(Change {
                    id: r.id.clone(),
                    action: Action::Changed,
                    fields,
                    old: Some((*old).clone()),
                    new: Some(r.clone()),
                });
            }
        }
    }
    let now: Vec<&str> = next.resources.iter().map(|r| r.id.as_str()).collect();
    for (id, old) in &before {
        if !now.contains(id) {
            changes.push(Change {
                id: id.to_string(),
                action: Action::Removed,
                fields: vec![],
                old: Some((*old).clone()),
                new: None,
            });
        }
    }
    Plan {
        node: next.node.clone(),
        first_send: last.is_none(),
        changes,
        units: units
            .into_iter()
            .filter(|(_, (c, _))| *c > Cost::None)
            .map(|(unit, (action, because))| UnitChange {
                unit,
                action,
                because,
            })
            .collect(),
    }
}

fn owe(units: &mut BTreeMap<String, (Cost, Vec<String>)>, unit: &str, cost: Cost, id: &str) {
    let slot = units
        .entry(unit.to_string())
        .or_insert((Cost::None, Vec::new()));
    slot.0 = slot.0.max(cost);
    if cost > Cost::None {
        slot.1.push(id.to_string());
    }
}

fn differing_fields(old: &Resource, new: &Resource) -> Vec<String> {
    let mut out = Vec::new();
    let (Spec::File(a), Spec::File(b)) = (&old.spec, &new.spec);
    if a.content != b.content {
        out.push("content".to_string());
    }
    if a.owner != b.owner || a.group != b.group {
        out.push("owner".to_string());
    }
    if a.mode != b.mode {
        out.push("mode".to_string());
    }
    if a.units != b.units || a.cost != b.cost {
        out.push("units".to_string());
    }
    if out.is_empty()
        && (a.source != b.source || a.settings != b.settings || old.module != new.module)
    {
        // nothing on the machine moves, but what it is made from does: it is sent again
        out.push("source".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{FileSpec, SettingUse, VERSION};

    fn file(path: &str, content: &str, digest: &str, units: &[&str]) -> Resource {
        let mut settings = BTreeMap::new();
        settings.insert(
            "k".to_string(),
            SettingUse {
                digest: digest.into(),
                cost: Cost::Reload,
            },
        );
        Resource {
            id: format!("m:file:{path}"),
            instance: "m".into(),
            module: "m@1".into(),
            spec: Spec::File(FileSpec {
                path: path.into(),
                owner: "root".into(),
                group: "root".into(),
                mode: 0o644,
                content: content.into(),
                source: "s".into(),
                settings,
                cost: Cost::Restart,
                units: units.iter().map(|u| u.to_string()).collect(),
            }),
        }
    }

    fn decl(resources: Vec<Resource>) -> Declaration {
        Declaration {
            version: VERSION,
            node: "n".into(),
            resources,
        }
    }

    #[test]
    fn an_unchanged_node_plans_nothing() {
        let d = decl(vec![file("/a", "x", "1", &[])]);
        let p = plan(&d, Some(&d));
        assert!(p.changes.is_empty() && p.units.is_empty());
    }

    #[test]
    fn added_changed_and_removed_are_named_by_id() {
        let old = decl(vec![file("/a", "x", "1", &[]), file("/b", "x", "1", &[])]);
        let new = decl(vec![
            file("/a", "y", "2", &["u.service"]),
            file("/c", "x", "1", &[]),
        ]);
        let p = plan(&new, Some(&old));
        let got: Vec<(char, &str)> = p
            .changes
            .iter()
            .map(|c| (c.action.sign(), c.id.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![('~', "m:file:/a"), ('+', "m:file:/c"), ('-', "m:file:/b")]
        );
        assert_eq!(p.changes[0].fields, vec!["content", "units"]);
    }

    #[test]
    fn a_setting_that_moved_costs_its_own_cost() {
        let old = decl(vec![file("/a", "x", "1", &["u.service"])]);
        let new = decl(vec![file("/a", "y", "2", &["u.service"])]);
        let p = plan(&new, Some(&old));
        assert_eq!(p.units.len(), 1);
        assert_eq!(p.units[0].action, Cost::Reload);
    }
}
