//! What a rollback does to secrets beyond its own nodes. A generation is its node's alone, so a
//! provider rolled back takes its secrets (a password rotated since, a token set since) back to
//! what that generation had, while its consumers on nodes the rollback does not reach keep
//! reading today's, and are refused until they go back too (found by an attacker). The plan says
//! so before anything is sent, naming the consumers and the way to take them back together.

use crate::catalogue::Catalogue;
use crate::resolve::consumers::{Consumer, consumers_of};
use crate::wire::Declaration;

use super::DeployError;
use super::rollback_plan::Target;

/// A resource whose secret content a rollback takes back to what its generation had.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SecretBack {
    pub node: String,
    pub resource: String,
    pub generation: u64,
    /// Consumers of the resource's instance on nodes this rollback does not reach: they keep
    /// reading today's secret.
    pub consumers: Vec<Consumer>,
}

impl SecretBack {
    /// What the plan says of it.
    pub fn line(&self) -> String {
        let back = format!(
            "{}: {} goes back to the secret generation {} had (one set or rotated since comes \
             back)",
            self.node, self.resource, self.generation
        );
        if self.consumers.is_empty() {
            return back;
        }
        let who: Vec<String> = self.consumers.iter().map(Consumer::describe).collect();
        format!(
            "{back}; {} still read today's, which this rollback does not change: roll back the \
             push that moved it (`mesh rollback --push ID`, `mesh history` names it) so they go \
             back together, or they may be refused",
            who.join(", ")
        )
    }
}

/// Every secret the rollback of `targets` takes back, with the consumers it leaves behind.
pub fn secrets_back(
    inv: &crate::inventory::Inventory,
    catalogue: &Catalogue,
    targets: &[&Target],
) -> Result<Vec<SecretBack>, DeployError> {
    let reached: Vec<&str> = targets.iter().map(|t| t.node.name.as_str()).collect();
    let mut out = Vec::new();
    for t in targets {
        let Some(has) = inv.confirmed(&t.node.name)? else {
            continue;
        };
        for (resource, instance) in moved(&t.kept.declaration, &has) {
            let consumers = consumers_of(inv, catalogue, &instance, &t.node.name)?
                .into_iter()
                .filter(|c| !reached.contains(&c.node.as_str()))
                .collect();
            out.push(SecretBack {
                node: t.node.name.clone(),
                resource,
                generation: t.kept.generation,
                consumers,
            });
        }
    }
    Ok(out)
}

/// The resources (id, instance) whose sealed content differs between what is sent and what the
/// machine has, by keyed digest.
fn moved(sent: &Declaration, has: &Declaration) -> Vec<(String, String)> {
    sent.resources
        .iter()
        .filter_map(|r| {
            let now = has.resources.iter().find(|h| h.id == r.id)?;
            let digests = |d: &crate::wire::Resource| -> Vec<String> {
                d.sealed().iter().map(|s| s.digest.clone()).collect()
            };
            let (then, today) = (digests(r), digests(now));
            (!then.is_empty() && then != today).then(|| (r.id.clone(), r.instance.clone()))
        })
        .collect()
}
