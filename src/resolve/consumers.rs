//! Who a provider answers: the consumers pinned to it and those the rules resolve to it, so that
//! taking a provider away is never silent.

use serde::Serialize;

use crate::catalogue::{Catalogue, Module, Need, Requirement};
use crate::inventory::{Assignment, Inventory, Node};

use super::ResolveError;
use super::provider::{Asked, choose};
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
    let provider = Provider {
        module,
        instance,
        node,
    };
    answered(inventory, catalogue, &provider, Found::Resolved)
}

/// Every consumer `instance` (of `module`) on `node` answers, for a provider whose own answers
/// resolve without a problem (composing it got that far: [`super::provisions::made`]). Then a
/// consumer resolves to it exactly when the choice of its provider names it, so only the
/// choice is read ([`super::provider::choose`]), not every consumer's answers in full with
/// their secrets opened (a sixth of a plan of the fleet); [`consumers_of`] finds the same.
pub(super) fn consumers_answered_by(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    instance: &str,
    node: &str,
) -> Result<Vec<Consumer>, ResolveError> {
    let provider = Provider {
        module,
        instance,
        node,
    };
    answered(inventory, catalogue, &provider, Found::Chosen)
}

/// A provider whose consumers are looked for.
struct Provider<'a> {
    module: &'a Module,
    instance: &'a str,
    node: &'a str,
}

/// How a consumer's provider is found.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Its module requirements resolved in full: a provider that cannot answer (a value of its
    /// own unset) answers no one.
    Resolved,
    /// By the choice alone: only for a provider known to answer.
    Chosen,
}

/// The consumers `p` answers, each consumer's provider found as `how` says.
fn answered(
    inventory: &Inventory,
    catalogue: &Catalogue,
    p: &Provider<'_>,
    how: Found,
) -> Result<Vec<Consumer>, ResolveError> {
    let provider = format!("{}@{}", p.instance, p.node);
    let mut out = Vec::new();
    for (a, n) in candidates(inventory, catalogue, p)? {
        let Ok(module) = catalogue.module(&a.module) else {
            continue;
        };
        let mut resolved = None;
        for r in &module.requires {
            let Need::Module { provision, .. } = &r.need else {
                continue;
            };
            let pin = inventory.pin(&a.node, &a.instance, &r.name)?;
            let pinned = pin
                .as_ref()
                .is_some_and(|(pi, pn)| pi == p.instance && pn == p.node);
            let answered = pinned
                || match how {
                    // pinned elsewhere, the choice is the pin: never this provider
                    Found::Chosen => {
                        pin.is_none()
                            && chosen(inventory, catalogue, &a, &n, module, r, provision)?
                                .is_some_and(|c| c == provider)
                    }
                    Found::Resolved => {
                        if resolved.is_none() {
                            resolved = Some(providers(inventory, catalogue, module, &n, &a)?);
                        }
                        resolved
                            .as_ref()
                            .and_then(|p| p.get(&r.name))
                            .is_some_and(|p| *p == provider)
                    }
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

/// The providers `a`'s module requirements resolve to, in full: what the consumer's own values
/// would be is not asked.
fn providers(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    n: &Node,
    a: &Assignment,
) -> Result<std::collections::BTreeMap<String, String>, ResolveError> {
    let mut chosen = Answers::default();
    modules(
        inventory,
        catalogue,
        module,
        n,
        a,
        &mut chosen,
        &mut Vec::new(),
    )?;
    Ok(chosen.providers)
}

/// The provider (`instance@node`) chosen for `a`'s requirement `r`, if one is.
fn chosen(
    inventory: &Inventory,
    catalogue: &Catalogue,
    a: &Assignment,
    n: &Node,
    module: &Module,
    r: &Requirement,
    provision: &str,
) -> Result<Option<String>, ResolveError> {
    let asked = Asked {
        module,
        node: n,
        a,
        requirement: &r.name,
        provision,
        // only a refusal says it, and a refusal answers no one here
        what: "",
    };
    Ok(choose(inventory, catalogue, &asked)?
        .ok()
        .map(|c| c.named()))
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
    p: &Provider<'_>,
) -> Result<Vec<(Assignment, Node)>, ResolveError> {
    let (module, instance, node) = (p.module, p.instance, p.node);
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
