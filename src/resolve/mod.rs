//! Resolution: inventory + catalogue → one declaration per node, composed afresh every time.
//!
//! A node whose assignments cannot all be resolved is refused with every problem at once, so an
//! operator fixes them in one go rather than one per try.

pub mod allocation;
#[cfg(test)]
mod checked;
mod collisions;
mod compose;
pub mod consumers;
#[cfg(test)]
mod contract_tests;
pub mod facts;
#[cfg(test)]
mod fleet_tests;
pub mod held;
pub mod identity;
mod module_requirements;
pub mod order;
pub mod problem;
mod provider;
pub mod provisions;
#[cfg(test)]
mod provisions_tests;
mod render;
pub mod requirements;
#[cfg(test)]
mod resolved_tests;
mod sealed;
pub mod settings;
pub mod supported;

use crate::catalogue::{Catalogue, Module, digest};
use crate::inventory::{Inventory, InventoryError, LayerOf, Node};
use crate::wire::Declaration;
pub use compose::{Composed, Resolved, compose};
pub use held::Held;
pub use problem::Problem;
pub use sealed::reseal;
pub use settings::{Effective, Layers, Source, effective};

/// Why a declaration could not be composed.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    /// Everything that stops a node, all at once.
    #[error("{node} cannot be planned:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Unresolved {
        node: String,
        problems: Vec<Problem>,
    },
    /// What the node's declaration reads that the inventory has not allocated yet (a port, a
    /// generated secret): resolution only reads, and [`allocation`] makes them.
    #[error("{node} cannot be composed until the inventory allocates {}: `mesh push` allocates them", wanted.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    Unallocated {
        node: String,
        wanted: Vec<crate::inventory::Unallocated>,
    },
    /// Nodes that provide to each other: none can go first.
    #[error("{} cannot be ordered: some of them provide to each other in a cycle, so none can be pushed first; nothing was sent:\n{}\nmove one of these assignments to another node, or pin it to a provider outside the cycle", nodes.join(", "), why.iter().map(|w| format!("  - {w}")).collect::<Vec<_>>().join("\n"))]
    Cycle {
        nodes: Vec<String>,
        why: Vec<String>,
    },
}

/// The effective settings of one assignment: the module's mesh-wide layer, then its layers for
/// the node's tags, then the node layer of this instance; then what another module assigned to
/// the node wants of them (`catalogue::wants`): a setting at its default follows the want, one a
/// layer set otherwise is marked to be refused.
pub fn assignment_settings(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    node: &str,
    instance: &str,
) -> Result<Vec<Effective>, InventoryError> {
    let mesh = inventory.layer(&module.name, LayerOf::Mesh)?;
    let tags = inventory.tag_layers(&module.name, &inventory.tags_of(node)?)?;
    let own = inventory.layer(instance, LayerOf::Node(node))?;
    let mut settings = effective(
        module,
        Layers {
            mesh: mesh.as_ref(),
            tags: &tags,
            node: own.as_ref(),
        },
    );
    facts::defaults(inventory, module, node, &mut settings)?;
    wanted(inventory, catalogue, module, node, &mut settings)?;
    Ok(settings)
}

/// What the other modules assigned to `node` want of `module`'s settings (`catalogue::wants`),
/// taken into `settings`: one at its default follows the want, one a layer set otherwise is
/// marked, for resolution to refuse.
pub fn wanted(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    node: &str,
    settings: &mut [Effective],
) -> Result<(), InventoryError> {
    for other in inventory.assignments(Some(node))? {
        // a module that does not load wants nothing: its own assignment is refused for it
        let Ok(wanting) = catalogue.module(&other.module) else {
            continue;
        };
        for want in wanting.wants.iter().filter(|w| w.module == module.name) {
            if let Some(e) = settings.iter_mut().find(|e| e.name == want.setting) {
                e.want(&wanting.name, want);
            }
        }
    }
    Ok(())
}

/// Everything an assignment's definition reads, answered, with what could not be (and what is
/// not allocated yet: see [`allocation::answers`]).
pub fn answers(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
    a: &crate::inventory::Assignment,
) -> Result<(requirements::Answers, Vec<Problem>), ResolveError> {
    let module = catalogue
        .module(&a.module)
        .map_err(|e| ResolveError::Unresolved {
            node: node.name.clone(),
            problems: vec![Problem::of(a, e.to_string())],
        })?;
    let mut problems = Vec::new();
    let mut answers = requirements::own(inventory, catalogue, module, node, a, &mut problems)?;
    // shown whole, as the module could read it, even where it reads none of it
    requirements::fleet(inventory, module, &mut answers.values, |_| true)?;
    requirements::modules(
        inventory,
        catalogue,
        module,
        node,
        a,
        &mut answers,
        &mut problems,
    )?;
    Ok((answers, problems))
}

/// The providers `a`'s module requirements resolve to (`requirement → instance@node`), for
/// ordering a push: `None` for a module that requires no other module, which is never resolved
/// here (a plan of the fleet orders every assignment, and most have nothing to order by).
pub fn providers_of(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
    a: &crate::inventory::Assignment,
) -> Result<Option<std::collections::BTreeMap<String, String>>, ResolveError> {
    let Ok(module) = catalogue.module(&a.module) else {
        return Ok(None);
    };
    if !requires_a_module(module) {
        return Ok(None);
    }
    let mut problems = Vec::new();
    let mut answers = requirements::own(inventory, catalogue, module, node, a, &mut problems)?;
    requirements::modules(
        inventory,
        catalogue,
        module,
        node,
        a,
        &mut answers,
        &mut problems,
    )?;
    Ok(Some(answers.providers))
}

/// Whether `module` requires another module: only then has an assignment of it providers to be
/// ordered after.
fn requires_a_module(module: &Module) -> bool {
    module
        .requires
        .iter()
        .any(|r| matches!(r.need, crate::catalogue::Need::Module { .. }))
}

/// A digest of a whole declaration: two equal declarations have equal digests (a sealed file
/// counts by its digest: sealing it again changes nothing).
pub fn declaration_digest(declaration: &Declaration) -> String {
    let json = serde_json::to_vec(&declaration.without_ciphertext()).unwrap_or_default();
    digest(&[&json])
}

#[cfg(test)]
mod tests;
