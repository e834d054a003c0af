//! The allocation step: resolution only reads, and names what a node's values need that the
//! inventory has not allocated yet (a host port, a generated secret); this allocates exactly that
//! ([`crate::inventory::Inventory::allocate`]) and resolves again.
//!
//! The step writes; whoever calls it chooses whether that is kept. `mesh assign`, `mesh push` and
//! `mesh node adopt` run it in `Inventory::batch`, kept; `mesh plan`, `check` and `config` in
//! `Inventory::trial`, always rolled back, so they show the ports a push will allocate and leave
//! the inventory as it was. The same inventory and the same nodes in the same order allocate the
//! same ports (each the lowest free on its node, in the order resolution asks), so what a plan
//! shows is what the next push of those nodes does. A generated secret is random: the plan's is
//! thrown away, and only its digest was ever shown (a secret file is planned by its digest, new
//! or changed either way).

use crate::catalogue::Catalogue;
use crate::inventory::{Assignment, Inventory, Node};

use super::requirements::Answers;
use super::{Composed, Problem, ResolveError};

/// Resolving again after allocating can name more (a per-consumer secret is asked for only once
/// its provider's own values are allocated): this many rounds is far more than any node needs.
const ROUNDS: usize = 8;

/// Composes `node`, allocating first whatever its values need that is not allocated yet.
pub fn compose(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
) -> Result<Composed, ResolveError> {
    for _ in 0..ROUNDS {
        match super::compose(inventory, catalogue, node) {
            Err(ResolveError::Unallocated { wanted, .. }) => inventory.allocate(&wanted)?,
            composed => return composed,
        }
    }
    super::compose(inventory, catalogue, node)
}

/// Everything `a`'s definition reads (as [`super::answers`]), allocating first whatever is not
/// allocated yet.
pub fn answers(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
    a: &Assignment,
) -> Result<(Answers, Vec<Problem>), ResolveError> {
    for _ in 0..ROUNDS {
        let (answers, problems) = super::answers(inventory, catalogue, node, a)?;
        if answers.unallocated.is_empty() {
            return Ok((answers, problems));
        }
        inventory.allocate(&answers.unallocated)?;
    }
    super::answers(inventory, catalogue, node, a)
}

/// Allocates what each of `nodes` needs, in order: `mesh assign` makes a new assignment's ports
/// and secrets at once, so a plan of it only reads. A node that cannot be composed (a setting
/// unset, a provider missing) is still given what its resolution asked for.
pub fn nodes(
    inventory: &Inventory,
    catalogue: &Catalogue,
    nodes: &[Node],
) -> Result<(), ResolveError> {
    for node in nodes {
        // refused or composed, it has what it asked for; only a failure of the inventory
        // itself stops the step
        if let Err(e @ ResolveError::Inventory(_)) = compose(inventory, catalogue, node) {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::compose;
    use crate::inventory::Unallocated;
    use crate::resolve::ResolveError;
    use crate::wire::{Resource, Spec};

    /// The resources of a declaration as JSON, a secret file left out (its sealed digest is of
    /// a random value).
    fn open(resources: &[Resource]) -> Vec<serde_json::Value> {
        resources
            .iter()
            .filter(|r| !matches!(&r.spec, Spec::File(f) if f.secret))
            .map(|r| serde_json::to_value(r).unwrap())
            .collect()
    }

    #[test]
    fn composing_only_reads_and_a_trial_allocation_shows_what_the_kept_one_makes() {
        // kv on n1 (a port, a password made for each consumer), a kv-client on n2 and on n3
        let m = crate::resolve::provisions_tests::mesh();
        let file = m.inv.path().to_path_buf();
        let before = std::fs::read(&file).unwrap();
        let n1 = m.inv.node("n1").unwrap();
        match crate::resolve::compose(&m.inv, &m.cat, &n1) {
            Err(ResolveError::Unallocated { wanted, .. }) => {
                assert_eq!(wanted, [Unallocated::port("n1", "kv", "listen")]);
            }
            other => panic!("composed without its port: {other:?}"),
        }
        // n2's consumer reads n1's port and a password made for it alone
        let n2 = m.inv.node("n2").unwrap();
        let Err(ResolveError::Unallocated { wanted, .. }) =
            crate::resolve::compose(&m.inv, &m.cat, &n2)
        else {
            panic!("composed without its provider's port")
        };
        assert!(wanted.contains(&Unallocated::port("n1", "kv", "listen")));
        let mine = Unallocated::secret("n1", "kv", "kv/kv-client_n2", "password");
        assert!(wanted.contains(&mine), "{wanted:?}");
        assert_eq!(std::fs::read(&file).unwrap(), before, "resolving wrote");

        let shown = m.inv.trial(|inv| compose(inv, &m.cat, &n1)).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), before, "a trial is kept");
        let made = m.inv.batch(|inv| compose(inv, &m.cat, &n1)).unwrap();
        assert_ne!(std::fs::read(&file).unwrap(), before);
        let (shown, made) = (shown.declaration, made.declaration);
        assert_eq!(open(&shown.resources), open(&made.resources));
        let ids = |d: &crate::wire::Declaration| -> Vec<String> {
            d.resources.iter().map(|r| r.id.clone()).collect()
        };
        assert_eq!(ids(&shown), ids(&made));
        let redis = serde_json::to_string(&open(&made.resources)).unwrap();
        assert!(redis.contains("port 20000"), "{redis}");
        // allocated: composing reads it, and both consumers' passwords were made with it
        let again = crate::resolve::compose(&m.inv, &m.cat, &n1).unwrap();
        assert_eq!(open(&again.declaration.resources), open(&made.resources));
        let n3 = m.inv.node("n3").unwrap();
        crate::resolve::compose(&m.inv, &m.cat, &n3).unwrap();
    }
}
