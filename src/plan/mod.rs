//! Plans: what a push would change, from comparing the declaration composed now with what the
//! node's helper confirmed it has, resource by resource. That copy is only ever read to compare:
//! what a node *should* be is composed afresh every time.

mod changes;
mod content;
pub mod diff;
mod fields;
pub mod hold;
pub mod machine;
mod owed;
pub mod removal;
mod visible;

pub use crate::wire::wanted_state;
pub use content::content;
pub use hold::{Move, moves};
pub use visible::visible;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::wire::{Cost, Declaration, Report, Resource, Undo};

use owed::Owed;

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
    let mut owed = Owed::default();
    let mut changes = Vec::new();
    for r in &next.resources {
        let change = match before.get(r.id.as_str()) {
            None => Some(changes::added(r, &mut owed)),
            Some(old) if old.module.ends_with(crate::inventory::DIFFERS) => {
                Some(changes::differs_on_machine(old, r, &mut owed))
            }
            Some(old) => changes::changed(old, r, &mut owed),
        };
        changes.extend(change);
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
            changes.push(changes::removed(id, old, report, &mut owed));
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
        units: owed.into_units(),
    }
}

#[cfg(test)]
mod found_tests;
#[cfg(test)]
mod tests;
