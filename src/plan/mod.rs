//! Plans: what a push would change, from comparing the declaration composed now with what the
//! node's helper confirmed it has, resource by resource. That copy is only ever read to compare:
//! what a node *should* be is composed afresh every time.

mod content;
pub mod diff;
pub mod hold;
pub mod machine;
pub mod removal;
mod visible;

pub use crate::wire::wanted_state;
pub use content::content;
pub use hold::{Move, moves};
pub use visible::visible;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::wire::{
    Cost, Declaration, ProcessSpec, Report, Resource, SettingUse, Spec, Undo, change_cost,
};

/// What a push would do to one node.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub node: String,
    /// Nothing was ever sent to this node.
    pub first_send: bool,
    /// The node's last push was interrupted before its result was recorded: what it has may be
    /// ahead of what this plan compares with, until the next push or check asks the machine.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unconfirmed: bool,
    /// The node's last push is in flight in another command running now (it holds the
    /// inventory's push lock): not interrupted; that command records what it makes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub running: bool,
    /// The node's pinned host key is not one its machine had when its helper last answered:
    /// another machine may be at its address (rebuilt), until the next check or push asks it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rekeyed: bool,
    /// `mesh check` found the machine new (no record, no signs of the mesh): nothing it had
    /// confirmed is there, so everything is to add.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub new_machine: bool,
    /// The change that interrupted push left awaiting confirmation on the machine, by id: the
    /// machine keeps it only if it is confirmed in time, else puts back what this plan compares
    /// with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_confirmation: Option<String>,
    /// Assignments held back from the push (their provider gone or not ready): they keep what
    /// the node has of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<crate::resolve::Held>,
    /// Facts of the machine its assignments read that moved since its last push.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub facts_moved: Vec<crate::resolve::facts::FactMove>,
    pub changes: Vec<Change>,
    /// Units that would reload or restart, with the resources that cause it.
    pub units: Vec<UnitChange>,
    /// The resources whose change must be confirmed over a new connection, else the machine
    /// reverts it by itself.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs_confirmation: Vec<String>,
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
    /// For `removed`: what undoing it will do, as the machine's helper last said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undo: Option<Undo>,
    /// For `changed`: the settings whose values moved in it (what causes the change).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// The machine, asked, has it otherwise than it confirmed (changed by hand since): the
    /// push puts it back ([`machine::against_machine`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub drift: bool,
    /// Its files as the machine has them and as the push writes them, when the machine was
    /// asked: a diff is then from the machine's bytes.
    #[serde(skip)]
    pub found: Vec<crate::wire::Seen>,
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
    /// A service resource stops it: it stops instead.
    pub stops: bool,
    /// What happens to it, in a word: `reload`, `restart`, `start` or `stop`.
    pub verb: &'static str,
}

impl Plan {
    /// Whether the push would change nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// Compares `next` with what the node's helper confirmed it has (`last`). `report` is the
/// helper's last answer from the node: it says what undoing each resource will do (which units
/// stop, which files go or come back).
pub fn plan(next: &Declaration, last: Option<&Declaration>, report: Option<&Report>) -> Plan {
    let before: BTreeMap<&str, &Resource> = last
        .map(|d| d.resources.iter().map(|r| (r.id.as_str(), r)).collect())
        .unwrap_or_default();
    let mut changes = Vec::new();
    let mut units: BTreeMap<String, (Cost, Vec<String>)> = BTreeMap::new();
    // Units a service resource stops: they stop rather than pay for their files.
    let mut stops: Vec<String> = Vec::new();
    // Units a service declared running starts, if they are not running.
    let mut starts: Vec<String> = Vec::new();
    // Units the mesh creates: a new process.
    let mut created: Vec<String> = Vec::new();
    for r in &next.resources {
        match before.get(r.id.as_str()) {
            None => {
                changes.push(Change {
                    id: r.id.clone(),
                    action: Action::Added,
                    fields: vec![],
                    old: None,
                    new: Some(r.clone()),
                    undo: None,
                    settings: vec![],
                    drift: false,
                    found: Vec::new(),
                });
                if let Some(c) = r.spec.costing() {
                    for u in &c.units {
                        owe(&mut units, u, change_cost(None, c, false), &r.id);
                    }
                }
                match &r.spec {
                    Spec::Service(sv) if sv.running == Some(false) => {
                        owe(&mut units, &sv.unit, Cost::Restart, &r.id);
                        stops.push(sv.unit.clone());
                    }
                    // started only if it is not running: what its files owe is paid either way
                    Spec::Service(sv) if sv.running == Some(true) => {
                        owe(&mut units, &sv.unit, Cost::None, &r.id);
                        units
                            .entry(sv.unit.clone())
                            .or_insert((Cost::None, Vec::new()))
                            .1
                            .push(r.id.clone());
                        starts.push(sv.unit.clone());
                    }
                    Spec::Process(p) => {
                        owe(&mut units, &p.unit, Cost::Restart, &r.id);
                        created.push(p.unit.clone());
                    }
                    _ => {}
                }
            }
            // a check found the machine has it otherwise, and could not say how: sent again, at
            // what sending it anew costs
            Some(old) if old.module.ends_with(crate::inventory::DIFFERS) => {
                if let Some(c) = r.spec.costing() {
                    for u in &c.units {
                        owe(&mut units, u, change_cost(None, c, false), &r.id);
                    }
                }
                changes.push(Change {
                    id: r.id.clone(),
                    action: Action::Changed,
                    fields: vec!["differs on the machine".into()],
                    old: Some((*old).clone()),
                    new: Some(r.clone()),
                    undo: None,
                    settings: vec![],
                    drift: true,
                    found: Vec::new(),
                });
            }
            Some(old) => {
                let fields = differing_fields(old, r);
                if fields.is_empty() {
                    continue;
                }
                let moved = match (&old.spec, &r.spec) {
                    (Spec::Process(was), Spec::Process(now)) => moved_in_bundle(was, now),
                    _ => match (old.spec.costing(), r.spec.costing()) {
                        (Some(was), Some(now)) => moved_settings(&was.settings, &now.settings),
                        _ => Vec::new(),
                    },
                };
                // compared as sent, not as shown: a secret file's shown content never differs,
                // and a sealed one is compared by its digest
                if let (Some(was), Some(now)) = (old.spec.costing(), r.spec.costing())
                    && match (&old.spec, &r.spec) {
                        (Spec::File(a), Spec::File(b)) => {
                            a.content != b.content || a.sealed != b.sealed
                        }
                        (a, b) => content(a) != content(b),
                    }
                {
                    let cost = change_cost(Some((was.source.as_str(), &was.settings)), now, false);
                    let because = if moved.is_empty() {
                        r.id.clone()
                    } else {
                        format!("{}: {}", r.id, moved.join(", "))
                    };
                    for u in &now.units {
                        owe(&mut units, u, cost, &because);
                    }
                }
                match (&old.spec, &r.spec) {
                    (Spec::Service(was), Spec::Service(now))
                        if now.running == Some(false) && was.running != Some(false) =>
                    {
                        owe(&mut units, &now.unit, Cost::Restart, &r.id);
                        stops.push(now.unit.clone());
                    }
                    // its unit or bundle changed: the process pays what moved (a bundle file that
                    // only a `none` setting moved leaves it running; a new module version alone
                    // changes neither, and the helper restarts nothing for it)
                    (Spec::Process(was), Spec::Process(now))
                        if fields.iter().any(|f| f != "source") =>
                    {
                        let because = if moved.is_empty() {
                            r.id.clone()
                        } else {
                            format!("{}: {}", r.id, moved.join(", "))
                        };
                        owe(&mut units, &now.unit, now.change_cost(was), &because);
                    }
                    _ => {}
                }
                changes.push(Change {
                    id: r.id.clone(),
                    action: Action::Changed,
                    fields,
                    old: Some((*old).clone()),
                    new: Some(r.clone()),
                    undo: None,
                    settings: moved,
                    drift: false,
                    found: Vec::new(),
                });
            }
        }
    }
    // what the push keeps (an assignment held back) stays as the machine has it
    let now: Vec<&str> = next
        .resources
        .iter()
        .map(|r| r.id.as_str())
        .chain(next.keep.iter().map(String::as_str))
        .collect();
    for (id, old) in &before {
        if !now.contains(id) {
            let undo = report.and_then(|r| {
                r.resources
                    .iter()
                    .find(|o| o.id == *id)
                    .map(|o| o.undo.clone().unwrap_or_default())
            });
            if let Some(u) = &undo {
                for unit in &u.stops {
                    owe(&mut units, unit, Cost::Restart, id);
                    stops.push(unit.clone());
                }
                // what it gives back is a change its readers pay, as the helper will
                for unit in &u.reloads {
                    owe(&mut units, unit, Cost::Reload, id);
                }
                for unit in &u.restarts {
                    owe(&mut units, unit, Cost::Restart, id);
                }
            }
            // with no word from the helper yet, a file or keys given back is a change its readers
            // pay its declared cost for; once the helper has answered, its `undo` says exactly
            // what they pay (nothing, when the original was lost)
            if let Some(c) = old.spec.costing()
                && undo.is_none()
            {
                for unit in &c.units {
                    owe(&mut units, unit, c.cost, &format!("{id} (given back)"));
                }
            }
            changes.push(Change {
                id: id.to_string(),
                action: Action::Removed,
                fields: vec![],
                old: Some((*old).clone()),
                new: None,
                undo,
                settings: vec![],
                drift: false,
                found: Vec::new(),
            });
        }
    }
    let needs_confirmation = changes
        .iter()
        .filter(|c| c.new.as_ref().or(c.old.as_ref()).is_some_and(|r| r.confirm))
        .map(|c| c.id.clone())
        .collect();
    Plan {
        node: next.node.clone(),
        first_send: last.is_none(),
        running: false,
        unconfirmed: false,
        rekeyed: false,
        new_machine: false,
        pending_confirmation: None,
        held: Vec::new(),
        facts_moved: Vec::new(),
        needs_confirmation,
        changes,
        units: units
            .into_iter()
            .filter(|(unit, (c, _))| *c > Cost::None || starts.contains(unit))
            .map(|(unit, (action, because))| {
                let verb = if stops.contains(&unit) {
                    "stop"
                } else if created.contains(&unit) {
                    "start"
                } else if action == Cost::None {
                    "start, if it is not running,"
                } else if starts.contains(&unit) && action == Cost::Restart {
                    "start (or restart, if it runs)"
                } else {
                    action.as_str()
                };
                UnitChange {
                    stops: stops.contains(&unit),
                    verb,
                    unit,
                    action,
                    because,
                }
            })
            .collect(),
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
    match (&old.spec, &new.spec) {
        (Spec::File(a), Spec::File(b)) => {
            if a.content != b.content || a.sealed != b.sealed {
                out.push("content".to_string());
            }
            if a.owner != b.owner || a.group != b.group {
                out.push("owner".to_string());
            }
            if a.mode != b.mode {
                out.push("mode".to_string());
            }
            if a.validate != b.validate {
                out.push("validate".to_string());
            }
        }
        (Spec::Keys(a), Spec::Keys(b)) => {
            let before: BTreeMap<String, &serde_json::Value> =
                a.keys.iter().map(|k| (k.dotted(), &k.value)).collect();
            let after: BTreeMap<String, &serde_json::Value> =
                b.keys.iter().map(|k| (k.dotted(), &k.value)).collect();
            for (k, v) in &after {
                if before.get(k) != Some(v) {
                    out.push(k.clone());
                }
            }
            for k in before.keys() {
                if !after.contains_key(k) {
                    out.push(format!("{k} (given back)"));
                }
            }
        }
        (Spec::Service(a), Spec::Service(b)) => {
            if a.running != b.running {
                out.push("state".to_string());
            }
            if a.enabled != b.enabled {
                out.push("enabled".to_string());
            }
        }
        (Spec::Directory(a), Spec::Directory(b)) => {
            if a.owner != b.owner || a.group != b.group {
                out.push("owner".to_string());
            }
            if a.mode != b.mode {
                out.push("mode".to_string());
            }
        }
        (Spec::Process(a), Spec::Process(b)) => {
            for (field, differs) in [
                ("command", a.command != b.command),
                ("user", a.user != b.user),
                (
                    "environment",
                    a.environment != b.environment || a.sealed_environment != b.sealed_environment,
                ),
                (
                    "working directory",
                    a.working_directory != b.working_directory,
                ),
                ("restart", a.restart != b.restart),
                ("access", a.access != b.access),
                (
                    "bundle",
                    !a.bundle
                        .iter()
                        .map(|f| (&f.path, &f.content, f.mode))
                        .eq(b.bundle.iter().map(|f| (&f.path, &f.content, f.mode))),
                ),
                ("description", a.description != b.description),
            ] {
                if differs {
                    out.push(field.to_string());
                }
            }
        }
        // the move itself, as the plan line shows it: `(1.2 -> 1.3)`, `(present -> absent)`
        (Spec::Package(a), Spec::Package(b)) => {
            if a.wanted() != b.wanted() {
                out.push(format!("{} -> {}", a.wanted(), b.wanted()));
            }
        }
        (Spec::Timer(a), Spec::Timer(b)) => {
            for (field, differs) in [
                ("command", a.command != b.command),
                ("user", a.user != b.user),
                ("schedule", a.schedule != b.schedule),
                ("description", a.description != b.description),
            ] {
                if differs {
                    out.push(field.to_string());
                }
            }
        }
        (Spec::User(a), Spec::User(b)) => {
            for (field, differs) in [
                ("shell", a.shell != b.shell),
                ("groups", a.groups != b.groups),
                ("home", a.home != b.home),
                ("authorized-keys", a.authorized_keys != b.authorized_keys),
                ("remove-home", a.remove_home != b.remove_home),
                ("uid", a.uid != b.uid),
            ] {
                if differs {
                    out.push(field.to_string());
                }
            }
        }
        (Spec::Group(a), Spec::Group(b)) => {
            for (field, differs) in [("system", a.system != b.system), ("gid", a.gid != b.gid)] {
                if differs {
                    out.push(field.to_string());
                }
            }
        }
        (Spec::AptRepository(a), Spec::AptRepository(b)) => {
            for (field, differs) in [
                ("uri", a.uri != b.uri),
                ("suite", a.suite != b.suite),
                ("components", a.components != b.components),
                ("key", a.key.trim() != b.key.trim()),
            ] {
                if differs {
                    out.push(field.to_string());
                }
            }
        }
        (Spec::Sysctl(a), Spec::Sysctl(b)) => {
            if a.value != b.value {
                out.push("value".to_string());
            }
        }
        (Spec::Symlink(a), Spec::Symlink(b)) => {
            if a.target != b.target {
                out.push("target".to_string());
            }
        }
        (Spec::Container(a), Spec::Container(b)) => {
            out.extend(b.differing(a).into_iter().map(String::from));
        }
        _ => out.push("kind".to_string()),
    }
    if let (Some(a), Some(b)) = (old.spec.costing(), new.spec.costing())
        && (a.units != b.units || a.cost != b.cost)
    {
        out.push("units".to_string());
    }
    if out.is_empty() && (old.spec.costing() != new.spec.costing() || old.module != new.module) {
        // nothing on the machine moves, but what it is made from does: it is sent again
        out.push("source".to_string());
    }
    out
}

#[cfg(test)]
mod found_tests;
#[cfg(test)]
mod tests;
