//! Each resource's change in a plan, and what it owes the units that read it: one added, one a
//! check found differing on the machine, one changed since it was confirmed, one removed.

use std::collections::BTreeMap;

use crate::wire::Cost;
use crate::wire::{FileSpec, ProcessSpec, Report, Resource, ServiceSpec, SettingUse, change_cost};

use super::fields::differing_fields;
use super::owed::Owed;
use super::{Action, Change, content};

impl Change {
    /// A change of `id` with nothing more said of it yet.
    fn of(id: &str, action: Action, old: Option<&Resource>, new: Option<&Resource>) -> Change {
        Change {
            id: id.to_string(),
            action,
            fields: vec![],
            old: old.cloned(),
            new: new.cloned(),
            undo: None,
            settings: vec![],
            drift: false,
            found: Vec::new(),
        }
    }
}

/// `r`, new on the node: its units pay what sending it anew costs; a service it stops stops, one
/// it runs starts, a process it makes starts.
pub(super) fn added(r: &Resource, owed: &mut Owed) -> Change {
    let change = Change::of(&r.id, Action::Added, None, Some(r));
    if let Some(c) = r.spec.costing() {
        for u in &c.units {
            owed.owe(u, change_cost(None, c, false), &r.id);
        }
    }
    if let Some(sv) = r.spec.get::<ServiceSpec>() {
        match sv.running {
            Some(false) => owed.stop(&sv.unit, &r.id),
            Some(true) => owed.start(&sv.unit, &r.id),
            None => {}
        }
    }
    if let Some(p) = r.spec.get::<ProcessSpec>() {
        owed.create(&p.unit, &r.id);
    }
    change
}

/// `r`, which a check found the machine has otherwise and could not say how: sent again, at
/// what sending it anew costs.
pub(super) fn differs_on_machine(old: &Resource, r: &Resource, owed: &mut Owed) -> Change {
    if let Some(c) = r.spec.costing() {
        for u in &c.units {
            owed.owe(u, change_cost(None, c, false), &r.id);
        }
    }
    Change {
        fields: vec!["differs on the machine".into()],
        drift: true,
        ..Change::of(&r.id, Action::Changed, Some(old), Some(r))
    }
}

/// `r` against what was confirmed of it (`old`): `None` when nothing differs. Its units pay
/// what its content's change costs; a service now stopped stops; a process whose unit or bundle
/// moved pays what moved.
pub(super) fn changed(old: &Resource, r: &Resource, owed: &mut Owed) -> Option<Change> {
    let fields = differing_fields(old, r);
    if fields.is_empty() {
        return None;
    }
    let moved = moved_by(old, r);
    let because = if moved.is_empty() {
        r.id.clone()
    } else {
        format!("{}: {}", r.id, moved.join(", "))
    };
    // compared as sent, not as shown: a secret file's shown content never differs, and a sealed
    // one is compared by its digest
    if let (Some(was), Some(now)) = (old.spec.costing(), r.spec.costing())
        && match old.spec.both::<FileSpec>(&r.spec) {
            Some((a, b)) => a.content != b.content || a.sealed != b.sealed,
            None => content(&old.spec) != content(&r.spec),
        }
    {
        let cost = change_cost(Some((was.source.as_str(), &was.settings)), now, false);
        for u in &now.units {
            owed.owe(u, cost, &because);
        }
    }
    if let Some((was, now)) = old.spec.both::<ServiceSpec>(&r.spec)
        && now.running == Some(false)
        && was.running != Some(false)
    {
        owed.stop(&now.unit, &r.id);
    }
    // its unit or bundle changed: the process pays what moved (a bundle file that only a
    // `none` setting moved leaves it running; a new module version alone changes neither,
    // and the helper restarts nothing for it)
    if let Some((was, now)) = old.spec.both::<ProcessSpec>(&r.spec)
        && fields.iter().any(|f| f != "source")
    {
        owed.owe(&now.unit, now.change_cost(was), &because);
    }
    Some(Change {
        fields,
        settings: moved,
        ..Change::of(&r.id, Action::Changed, Some(old), Some(r))
    })
}

/// `old`, confirmed but no longer declared. `report` (the helper's last answer) says what
/// undoing it does: the units it stops stop, and those reading what it gives back pay for it.
pub(super) fn removed(
    id: &str,
    old: &Resource,
    report: Option<&Report>,
    owed: &mut Owed,
) -> Change {
    let undo = report.and_then(|r| {
        r.resources
            .iter()
            .find(|o| o.id == id)
            .map(|o| o.undo.clone().unwrap_or_default())
    });
    if let Some(u) = &undo {
        for unit in &u.stops {
            owed.stop(unit, id);
        }
        // what it gives back is a change its readers pay, as the helper will
        for unit in &u.reloads {
            owed.owe(unit, Cost::Reload, id);
        }
        for unit in &u.restarts {
            owed.owe(unit, Cost::Restart, id);
        }
    }
    // with no word from the helper yet, a file or keys given back is a change its readers pay
    // its declared cost for; once the helper has answered, its `undo` says exactly what they
    // pay (nothing, when the original was lost)
    if let Some(c) = old.spec.costing()
        && undo.is_none()
    {
        for unit in &c.units {
            owed.owe(unit, c.cost, &format!("{id} (given back)"));
        }
    }
    Change {
        undo,
        ..Change::of(id, Action::Removed, Some(old), None)
    }
}

/// The settings whose values moved between `old` and `r`: in a process, those of its bundle.
fn moved_by(old: &Resource, r: &Resource) -> Vec<String> {
    match old.spec.both::<ProcessSpec>(&r.spec) {
        Some((was, now)) => moved_in_bundle(was, now),
        None => match (old.spec.costing(), r.spec.costing()) {
            (Some(was), Some(now)) => moved_settings(&was.settings, &now.settings),
            _ => Vec::new(),
        },
    }
}

/// The settings a resource reads whose values differ between two sends (by digest: a plan names
/// a setting, never shows its value here).
fn moved_settings(
    was: &BTreeMap<String, SettingUse>,
    now: &BTreeMap<String, SettingUse>,
) -> Vec<String> {
    now.iter()
        .filter(|(name, use_now)| was.get(*name).map(|u| &u.digest) != Some(&use_now.digest))
        .map(|(name, _)| name.clone())
        .chain(was.keys().filter(|name| !now.contains_key(*name)).cloned())
        .collect()
}

/// The settings that moved in a process's bundle files, each once.
fn moved_in_bundle(was: &ProcessSpec, now: &ProcessSpec) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &now.bundle {
        let empty = BTreeMap::new();
        let before = was
            .bundle
            .iter()
            .find(|w| w.path == f.path)
            .map_or(&empty, |w| &w.settings);
        for name in moved_settings(before, &f.settings) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}
