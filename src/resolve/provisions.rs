//! Per-consumer provisions, resolved: what a provider makes for each consumer, how each consumer
//! is answered, and whether the provider's machine has made it yet.
//!
//! The provider's declaration is composed with its consumers known: `${NAME.consumers}` holds
//! what its per-consumer template says for each consumer that resolves to it. A consumer is
//! answered with the fields made for it alone. A consumer on another node waits until that
//! node's helper has confirmed what was made for it ([`waiting_for`]). A consumer taken away is
//! [`Withdrawn`]: its secrets are forgotten once the provider's machine confirmed the push that
//! took its provision away.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::per_consumer::{CONSUMER, CONSUMERS};
use crate::catalogue::{Catalogue, Module, Need, Provision};
use crate::inventory::{Assignment, Inventory, InventoryError, Node, Unallocated, consumer_key};
use crate::wire::{FileSpec, Spec};

use super::ResolveError;
use super::consumers::consumers_answered_by;
use super::requirements::{self, Answers, field_value, login};

/// Who a per-consumer provision is made for: its mesh identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConsumerId {
    pub login: String,
    pub instance: String,
    pub node: String,
}

impl ConsumerId {
    pub fn of(instance: &str, node: &str) -> ConsumerId {
        ConsumerId {
            login: login(instance, node),
            instance: instance.to_string(),
            node: node.to_string(),
        }
    }
}

/// What a provider made for a consumer it no longer answers: the declaration composed without
/// it takes it away from the machine, and once the machine confirmed that, its secrets go from
/// the inventory too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withdrawn {
    pub instance: String,
    pub provision: String,
    pub login: String,
}

impl Withdrawn {
    /// Forgets its secrets: call only once the provider's machine confirmed the push.
    pub fn forget(&self, inventory: &Inventory, node: &str) -> Result<(), InventoryError> {
        inventory.forget_consumer(node, &self.instance, &self.provision, &self.login)
    }
}

/// The provider's values with `provision`'s fields as answered for `consumer` (and the
/// consumer's identity), each generated secret generated for that consumer alone (one not made
/// yet is named in `unallocated`).
pub(super) fn answer_for(
    inventory: &Inventory,
    provider: (&str, &str),
    provision: &Provision,
    values: &BTreeMap<String, Value>,
    consumer: &ConsumerId,
    unallocated: &mut Vec<Unallocated>,
) -> Result<BTreeMap<String, Value>, InventoryError> {
    let (instance, node) = provider;
    let mut v = values.clone();
    for (field, value) in [
        ("instance", &consumer.instance),
        ("node", &consumer.node),
        ("login", &consumer.login),
    ] {
        v.insert(format!("{CONSUMER}.{field}"), Value::String(value.clone()));
    }
    // a consumer's secrets are kept under the provision and its login: never another's
    let key = consumer_key(&provision.name, &consumer.login);
    for f in &provision.fields {
        if let Some(value) = field_value(inventory, (node, instance, &key), f, &v, unallocated)? {
            v.insert(format!("{}.{}", provision.name, f.field.name), value);
        }
    }
    Ok(v)
}

/// What the provider's per-consumer template says for `consumer`.
fn section(
    inventory: &Inventory,
    provider: (&str, &str),
    provision: &Provision,
    values: &BTreeMap<String, Value>,
    consumer: &ConsumerId,
    unallocated: &mut Vec<Unallocated>,
) -> Result<String, InventoryError> {
    let Some(pc) = &provision.per_consumer else {
        return Ok(String::new());
    };
    let v = answer_for(
        inventory,
        provider,
        provision,
        values,
        consumer,
        unallocated,
    )?;
    Ok(pc.template.fill(&v))
}

/// Fills `${NAME.consumers}` of each per-consumer provision `a` (on `node`) makes into its
/// `answers`: every consumer's section, ordered by login. Adds to `withdrawn` each consumer it
/// kept a secret for and no longer answers.
pub(super) fn made(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    node: &Node,
    a: &Assignment,
    answers: &mut Answers,
    withdrawn: &mut Vec<Withdrawn>,
) -> Result<(), ResolveError> {
    let per_consumer: Vec<&Provision> = module
        .provides
        .iter()
        .filter(|p| p.per_consumer.is_some())
        .collect();
    if per_consumer.is_empty() {
        return Ok(());
    }
    // composing got here, so this provider's own answers have no problem: the choice of each
    // consumer's provider is enough to know whether it answers it
    let consumers = consumers_answered_by(inventory, catalogue, module, &a.instance, &node.name)?;
    for p in per_consumer {
        let mut ids: Vec<ConsumerId> = consumers
            .iter()
            .filter(|c| c.provision == p.name)
            .map(|c| ConsumerId::of(&c.instance, &c.node))
            .collect();
        // a consumer whose module is missing or broken cannot say which provider it resolves
        // to: what was made for it is kept, not withdrawn, until it can
        let kept = inventory.consumers_kept(&node.name, &a.instance, &p.name)?;
        if kept
            .iter()
            .any(|login| !ids.iter().any(|id| id.login == *login))
        {
            ids.extend(unresolvable(inventory, catalogue, &kept)?);
        }
        ids.sort();
        ids.dedup();
        let mut text = String::new();
        for id in &ids {
            text.push_str(&section(
                inventory,
                (&a.instance, &node.name),
                p,
                &answers.values,
                id,
                &mut answers.unallocated,
            )?);
        }
        answers
            .values
            .insert(format!("{}.{CONSUMERS}", p.name), Value::String(text));
        for login in kept {
            if !ids.iter().any(|id| id.login == login) {
                withdrawn.push(Withdrawn {
                    instance: a.instance.clone(),
                    provision: p.name.clone(),
                    login,
                });
            }
        }
    }
    Ok(())
}

/// The assignments of the mesh with one of `logins` whose module cannot be loaded (missing from
/// the catalogue, or broken): read only when a kept login is no longer answered, which is rare.
fn unresolvable(
    inventory: &Inventory,
    catalogue: &Catalogue,
    logins: &[String],
) -> Result<Vec<ConsumerId>, InventoryError> {
    Ok(inventory
        .assignments(None)?
        .into_iter()
        .filter(|x| catalogue.module(&x.module).is_err())
        .map(|x| ConsumerId::of(&x.instance, &x.node))
        .filter(|id| logins.contains(&id.login))
        .collect())
}

/// The provider (`INSTANCE@NODE`) `a` on `node` still waits for: one on another node whose
/// helper has not confirmed what its per-consumer provision makes for `a`. A shared provision
/// is answered from the inventory alone (an address, a port, a password kept there), so nothing
/// waits for it. `providers` is what resolution chose, requirement → provider.
pub(super) fn waiting_for(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    node: &Node,
    a: &Assignment,
    providers: &BTreeMap<String, String>,
) -> Result<Option<String>, ResolveError> {
    for r in &module.requires {
        let Need::Module { provision, .. } = &r.need else {
            continue;
        };
        let Some(named) = providers.get(&r.name) else {
            continue;
        };
        let Some((pi, pn)) = named.split_once('@') else {
            continue;
        };
        // one push makes both: the helper applies a provider and its consumer together
        if pn == node.name {
            continue;
        }
        let Some(pa) = inventory
            .assignments(Some(pn))?
            .into_iter()
            .find(|x| x.instance == pi)
        else {
            continue;
        };
        let Ok(pm) = catalogue.module(&pa.module) else {
            continue;
        };
        let Some(provided) = pm
            .provides
            .iter()
            .find(|p| &p.name == provision && p.per_consumer.is_some())
        else {
            continue;
        };
        let theirs: Vec<Spec> = inventory
            .confirmed(pn)?
            .map(|d| {
                d.resources
                    .into_iter()
                    .filter(|x| x.instance == pi)
                    .map(|x| x.spec)
                    .collect()
            })
            .unwrap_or_default();
        let provider_node = inventory.node(pn)?;
        let mut problems = Vec::new();
        let own = requirements::own(inventory, catalogue, pm, &provider_node, &pa, &mut problems)?;
        // the consumer's own resolution asked for the same secret: nothing new is named here
        let mine = section(
            inventory,
            (pi, pn),
            provided,
            &own.values,
            &ConsumerId::of(&a.instance, &node.name),
            &mut Vec::new(),
        )?;
        // a secret file is confirmed sealed: its lines are asked for by their keyed digests
        let mine_lines = super::sealed::line_digests(inventory, &mine)?;
        let ready = theirs.iter().any(|s| match s.get::<FileSpec>() {
            Some(f) => match &f.sealed {
                Some(sealed) => {
                    !mine_lines.is_empty() && mine_lines.iter().all(|d| sealed.lines.contains(d))
                }
                None => f.content.contains(&mine),
            },
            None => false,
        });
        if !ready {
            return Ok(Some(named.clone()));
        }
    }
    Ok(None)
}
