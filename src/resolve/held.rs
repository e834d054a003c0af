//! Assignments held back while the rest of their node goes ahead: a consumer whose provider is
//! gone, one waiting for its provider to make what it needs, or one reading facts its machine
//! has not said yet.
//!
//! A held assignment keeps exactly what its node confirmed of it: nothing of it is delivered,
//! changed or undone until its provider answers, and the other assignments of its node, and the
//! other nodes, are pushed as usual. Its resources are not sent again (a secret file is confirmed
//! only as a digest, so it could not be): the declaration names them in `keep`, and the helper
//! leaves them as the machine has them. Its own removal (`mesh unassign`) always goes through: a
//! removed assignment is not composed at all, so what it made is undone.

use serde::Serialize;

use crate::catalogue::{Module, Need};
use crate::inventory::{Assignment, Inventory, InventoryError, Node};
use crate::wire::{Declaration, Resource};

/// An assignment held back from this push, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    pub instance: String,
    pub module: String,
    /// `INSTANCE@NODE` of the provider it waits for; `None` when its provider is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    pub reason: String,
}

impl Held {
    /// `a` on `node`, whose provider is gone: `unanswered` says how.
    pub(super) fn gone(a: &Assignment, node: &Node, unanswered: &[super::Problem]) -> Held {
        Held {
            instance: a.instance.clone(),
            module: a.module.clone(),
            waiting_for: None,
            reason: format!(
                "{}; unassign it (`mesh unassign {} {}`) or pin it to another provider \
                 (`mesh assign {} {} --as {} --pin REQ=INSTANCE@NODE`)",
                super::problem::joined(unanswered, "; "),
                a.instance,
                node.name,
                a.module,
                node.name,
                a.instance
            ),
        }
    }

    /// `a`, waiting for `provider` (`INSTANCE@NODE`) to make what it needs.
    pub(super) fn waiting(a: &Assignment, provider: String) -> Held {
        Held {
            instance: a.instance.clone(),
            module: a.module.clone(),
            reason: format!("{provider} has not yet made what {} needs", a.instance),
            waiting_for: Some(provider),
        }
    }

    /// `a`, which reads `fact` (`host.os.id`) of a machine that has not said its facts yet.
    pub(super) fn facts(a: &Assignment, node: &Node, fact: &str) -> Held {
        Held {
            instance: a.instance.clone(),
            module: a.module.clone(),
            waiting_for: None,
            reason: format!(
                "it reads ${{{fact}}}, a fact of the machine, and the machine has not said its \
                 facts yet: `mesh check {}` (or any push) asks it, and the next push delivers {}",
                node.name, a.instance
            ),
        }
    }

    /// One line for an operator.
    pub fn line(&self, node: &str) -> String {
        match &self.waiting_for {
            Some(p) => format!(
                "{node}: {} is waiting for {p}: {}; it keeps what it has, and nothing of it is \
                 delivered until {p} has confirmed it",
                self.instance, self.reason
            ),
            None => format!(
                "{node}: {} is HELD, keeping what it has: {}",
                self.instance, self.reason
            ),
        }
    }
}

/// What `node` confirmed of `instance`, kept as it is while the instance is held.
pub fn kept(confirmed: Option<&Declaration>, instance: &str) -> Vec<Resource> {
    confirmed
        .map(|d| {
            d.resources
                .iter()
                .filter(|r| r.instance == instance)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `a`'s unanswered module requirements mean its provider is gone (held, the rest goes
/// ahead) rather than never there (refused, as any unresolved requirement): it was delivered
/// before, or it is pinned to an assignment that no longer exists.
pub(super) fn provider_gone(
    inventory: &Inventory,
    module: &Module,
    a: &Assignment,
    confirmed: Option<&Declaration>,
) -> Result<bool, InventoryError> {
    if !kept(confirmed, &a.instance).is_empty() {
        return Ok(true);
    }
    for r in &module.requires {
        if !matches!(r.need, Need::Module { .. }) {
            continue;
        }
        if let Some((pi, pn)) = inventory.pin(&a.node, &a.instance, &r.name)? {
            let there = inventory
                .assignments(Some(&pn))?
                .iter()
                .any(|x| x.instance == pi);
            if !there {
                return Ok(true);
            }
        }
    }
    Ok(false)
}
