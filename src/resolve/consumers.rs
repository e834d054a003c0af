//! Who a provider answers: the consumers pinned to it and those the rules resolve to it, so that
//! taking a provider away is never silent.

use serde::Serialize;

use crate::catalogue::{Catalogue, Need};
use crate::inventory::Inventory;

use super::ResolveError;

/// One consumer's requirement that a provider answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Consumer {
    pub node: String,
    pub instance: String,
    pub module: String,
    pub requirement: String,
    /// The provision it requires.
    pub provision: String,
    /// Pinned to the provider (`--pin`), rather than resolved to it by the rules.
    pub pinned: bool,
}

impl Consumer {
    /// `kv-client@node2 (module kv-client, requirement store, pinned)`.
    pub fn describe(&self) -> String {
        format!(
            "{}@{} (module {}, requirement {}{})",
            self.instance,
            self.node,
            self.module,
            self.requirement,
            if self.pinned { ", pinned" } else { "" }
        )
    }
}

/// Every consumer `instance` on `node` answers, by consumer node and instance.
pub fn consumers_of(
    inventory: &Inventory,
    catalogue: &Catalogue,
    instance: &str,
    node: &str,
) -> Result<Vec<Consumer>, ResolveError> {
    let provider = format!("{instance}@{node}");
    let mut out = Vec::new();
    for a in inventory.assignments(None)? {
        if a.node == node && a.instance == instance {
            continue;
        }
        let Ok(module) = catalogue.module(&a.module) else {
            continue;
        };
        let mut resolved = None;
        for r in &module.requires {
            let Need::Module { provision, .. } = &r.need else {
                continue;
            };
            let pin = inventory.pin(&a.node, &a.instance, &r.name)?;
            let pinned = pin.is_some_and(|(pi, pn)| pi == instance && pn == node);
            let answered = pinned || {
                if resolved.is_none() {
                    let n = inventory.node(&a.node)?;
                    resolved = Some(super::answers(inventory, catalogue, &n, &a)?.0.providers);
                }
                resolved
                    .as_ref()
                    .and_then(|p| p.get(&r.name))
                    .is_some_and(|p| *p == provider)
            };
            if answered {
                out.push(Consumer {
                    node: a.node.clone(),
                    instance: a.instance.clone(),
                    module: module.name.clone(),
                    requirement: r.name.clone(),
                    provision: provision.clone(),
                    pinned,
                });
            }
        }
    }
    Ok(out)
}
