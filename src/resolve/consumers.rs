//! Who a provider answers: the consumers pinned to it and those the rules resolve to it, so that
//! taking a provider away is never silent.

use serde::Serialize;

use crate::catalogue::{Catalogue, Need};
use crate::inventory::{Assignment, Inventory, Node};

use super::ResolveError;
use super::requirements::{Answers, modules};

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
    for (a, n) in candidates(inventory, catalogue, instance, node)? {
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
                    // the providers only: what the consumer's own values would be is not asked
                    let mut chosen = Answers::default();
                    modules(
                        inventory,
                        catalogue,
                        module,
                        &n,
                        &a,
                        &mut chosen,
                        &mut Vec::new(),
                    )?;
                    resolved = Some(chosen.providers);
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

/// The consumers left without their provider when the assignments `taken` (node, instance) go,
/// each with the provider (`instance@node`) that answered it: every consumer they answer, but
/// those taken away too and those `answered_otherwise` says another provider answers then. One
/// rule for `mesh unassign` and for an import that drops a provider or changes its module.
pub fn orphaned(
    inventory: &Inventory,
    catalogue: &Catalogue,
    taken: &[(String, String)],
    answered_otherwise: &dyn Fn(&Consumer) -> bool,
) -> Result<Vec<(String, Consumer)>, ResolveError> {
    let mut out = Vec::new();
    for (node, instance) in taken {
        for c in consumers_of(inventory, catalogue, instance, node)? {
            let gone_too = taken.iter().any(|(n, i)| *n == c.node && *i == c.instance);
            if !gone_too && !answered_otherwise(&c) {
                out.push((format!("{instance}@{node}"), c));
            }
        }
    }
    Ok(out)
}

/// The assignments that could resolve a requirement to `instance` on `node`, by node and
/// instance: those pinned to it and those on its node, and every consumer of its provisions
/// when it holds one's seat or is its only provider. Resolving only these, rather than every
/// assignment in the mesh for every provider, keeps a fleet of providers each with a consumer
/// beside it linear.
fn candidates(
    inventory: &Inventory,
    catalogue: &Catalogue,
    instance: &str,
    node: &str,
) -> Result<Vec<(Assignment, Node)>, ResolveError> {
    let Some(me) = inventory
        .assignments(Some(node))?
        .into_iter()
        .find(|a| a.instance == instance)
    else {
        return Ok(Vec::new());
    };
    let Ok(module) = catalogue.module(&me.module) else {
        return Ok(Vec::new());
    };
    let provided: Vec<&str> = module.provides.iter().map(|p| p.name.as_str()).collect();
    let consumer_modules: Vec<&str> = catalogue
        .modules()
        .filter(|m| {
            m.requires.iter().any(
                |r| matches!(&r.need, Need::Module { provision, .. } if provided.contains(&provision.as_str())),
            )
        })
        .map(|m| m.name.as_str())
        .collect();
    if consumer_modules.is_empty() {
        return Ok(Vec::new());
    }
    let mut wide = false;
    for p in &provided {
        let seat_delivered = catalogue
            .modules()
            .any(|m| m.provides.iter().any(|q| q.name == *p && q.seat));
        let providers: Vec<&str> = catalogue
            .modules()
            .filter(|m| m.provides.iter().any(|q| q.name == *p))
            .map(|m| m.name.as_str())
            .collect();
        wide |= if seat_delivered {
            inventory
                .seat(p)?
                .is_some_and(|s| s.instance == instance && s.node == node)
        } else {
            inventory.count_assigned(&providers, 2)? < 2
        };
    }
    let mut found = inventory.assignments_of(&consumer_modules, (!wide).then_some(node), None)?;
    if !wide {
        for (pn, pi) in inventory.pinned_to(instance, node)? {
            if found.iter().any(|(a, _)| a.node == pn && a.instance == pi) {
                continue;
            }
            let pinned = inventory
                .assignments_of(&consumer_modules, Some(&pn), None)?
                .into_iter()
                .filter(|(a, _)| a.instance == pi);
            found.extend(pinned);
        }
        found.sort_by(|(a, _), (b, _)| (&a.node, &a.instance).cmp(&(&b.node, &b.instance)));
    }
    found.retain(|(a, _)| !(a.node == node && a.instance == instance));
    Ok(found)
}
