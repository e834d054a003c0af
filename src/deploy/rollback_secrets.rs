//! What a rollback does to secrets beyond its own nodes. A generation is its node's alone, so a
//! provider rolled back takes its secrets (a password rotated since, a token set since) back to
//! what that generation had, while its consumers on nodes the rollback does not reach keep
//! reading today's, and are refused until they go back too (found by an attacker). The plan says
//! so before anything is sent, naming the consumers and the way to take them back together.

use crate::catalogue::Catalogue;
use crate::inventory::InventoryError;
use crate::resolve::ResolveError;
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
    /// Why the consumers could not be found, when they could not: the warning says so, and the
    /// rollback goes on (a warning never stops it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumers_unknown: Option<String>,
}

impl SecretBack {
    /// What the plan says of it.
    pub fn line(&self) -> String {
        let back = format!(
            "{}: {} goes back to the secret generation {} had (one set or rotated since comes \
             back)",
            self.node, self.resource, self.generation
        );
        if let Some(why) = &self.consumers_unknown {
            return format!(
                "{back}; who reads it is not known ({why}): a consumer on another node may keep \
                 reading today's and be refused until it goes back too"
            );
        }
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
    secrets_back_by(
        targets,
        |node| inv.confirmed(node),
        |instance, node| consumers_of(inv, catalogue, instance, node),
    )
}

/// [`secrets_back`] with what each node has (`has`) and who consumes an instance
/// (`consumers`) asked of the caller. The consumers only shape the warning: when they cannot be
/// found, the warning says why and the rollback goes on.
fn secrets_back_by(
    targets: &[&Target],
    has: impl Fn(&str) -> Result<Option<Declaration>, InventoryError>,
    consumers: impl Fn(&str, &str) -> Result<Vec<Consumer>, ResolveError>,
) -> Result<Vec<SecretBack>, DeployError> {
    let reached: Vec<&str> = targets.iter().map(|t| t.node.name.as_str()).collect();
    let mut out = Vec::new();
    for t in targets {
        let Some(has) = has(&t.node.name)? else {
            continue;
        };
        for (resource, instance) in moved(&t.kept.declaration, &has) {
            let (left, unknown) = match consumers(&instance, &t.node.name) {
                Ok(found) => {
                    let left = found
                        .into_iter()
                        .filter(|c| !reached.contains(&c.node.as_str()))
                        .collect();
                    (left, None)
                }
                Err(e) => (Vec::new(), Some(one_line(&e.to_string()))),
            };
            out.push(SecretBack {
                node: t.node.name.clone(),
                resource,
                generation: t.kept.generation,
                consumers: left,
                consumers_unknown: unknown,
            });
        }
    }
    Ok(out)
}

/// `text` on one line: an error that lists its problems joins them.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{Kept, Node};

    fn declaration(digest: &str) -> Declaration {
        serde_json::from_value(serde_json::json!({
            "version": 1, "node": "node1", "resources": [{"id": "kv:file:/srv/kv/auth.conf",
            "instance": "kv", "module": "kv@1", "kind": "file", "path": "/srv/kv/auth.conf",
            "owner": "root", "group": "root", "mode": 384,
            "content": "", "secret": true, "source": "", "settings": {}, "cost": "none",
            "units": [], "sealed": {"digest": digest, "age": "x"}}]
        }))
        .unwrap()
    }

    #[test]
    fn consumers_that_cannot_be_found_are_said_unknown_and_the_rollback_goes_on() {
        let target = Target {
            node: Node::new("node1", "192.0.2.1"),
            kept: Kept {
                node: "node1".into(),
                generation: 3,
                push: 1,
                inventory: "a".into(),
                pushed_at: 1,
                declaration: declaration("then"),
            },
        };
        assert_eq!(
            moved(&target.kept.declaration, &declaration("now")).len(),
            1
        );
        let back = secrets_back_by(
            &[&target],
            |_| Ok(Some(declaration("now"))),
            |_, _| {
                Err(ResolveError::Inventory(InventoryError::Storage(
                    crate::inventory::StorageError::Corrupt("the pins cannot be read".into()),
                )))
            },
        )
        .unwrap();
        assert_eq!(back.len(), 1, "{back:?}");
        let line = back[0].line();
        assert!(
            line.contains("goes back to the secret generation 3 had")
                && line.contains("who reads it is not known (")
                && line.contains("the pins cannot be read"),
            "{line}"
        );
        assert!(!line.contains('\n'), "{line}");
    }
}
