//! Resolution: inventory + catalogue → one declaration per node, composed afresh every time.
//!
//! A node whose assignments cannot all be resolved is refused with every problem at once, so an
//! operator fixes them in one go rather than one per try.

pub mod allocation;
#[cfg(test)]
mod checked;
mod collisions;
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
mod sealed;
pub mod settings;

use collisions::collisions;
use render::resource;

use crate::catalogue::{Catalogue, Module, digest};
use crate::inventory::{Inventory, InventoryError, LayerOf, Node};
use crate::wire::{self, Declaration, Resource, Spec};
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
/// the node's tags, then the node layer of this instance.
pub fn assignment_settings(
    inventory: &Inventory,
    module: &Module,
    node: &str,
    instance: &str,
) -> Result<Vec<Effective>, InventoryError> {
    let mesh = inventory.layer(&module.name, LayerOf::Mesh)?;
    let tags = inventory.tag_layers(&module.name, &inventory.tags_of(node)?)?;
    let own = inventory.layer(instance, LayerOf::Node(node))?;
    Ok(effective(
        module,
        Layers {
            mesh: mesh.as_ref(),
            tags: &tags,
            node: own.as_ref(),
        },
    ))
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
    let mut answers = requirements::own(inventory, module, node, a, &mut problems)?;
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
    if !module
        .requires
        .iter()
        .any(|r| matches!(r.need, crate::catalogue::Need::Module { .. }))
    {
        return Ok(None);
    }
    let mut problems = Vec::new();
    let mut answers = requirements::own(inventory, module, node, a, &mut problems)?;
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

/// What a node should be, and the assignments held back from it (they keep what they have).
#[derive(Debug)]
pub struct Composed {
    pub declaration: Declaration,
    pub held: Vec<Held>,
    /// What the node confirmed of the held assignments: the declaration names them in `keep`,
    /// so the helper leaves them as the machine has them.
    pub kept: Vec<Resource>,
    /// Consumers whose provisions this declaration takes away from the machine.
    pub withdrawn: Vec<provisions::Withdrawn>,
}

/// Composes what `node` should be, reading the inventory only: a node whose values are not all
/// allocated is [`ResolveError::Unallocated`] (see [`allocation::compose`]).
pub fn compose(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
) -> Result<Composed, ResolveError> {
    let mut resources: Vec<Resource> = Vec::new();
    let mut problems = Vec::new();
    let mut holds = Vec::new();
    let mut kept = Vec::new();
    let mut withdrawn = Vec::new();
    let mut unallocated = Vec::new();
    let confirmed = inventory.confirmed(&node.name)?;
    for a in inventory.assignments(Some(&node.name))? {
        let module = match catalogue.module(&a.module) {
            Ok(m) => m,
            Err(e) => {
                problems.push(Problem::of(
                    &a,
                    format!("{} (module {}): {e}", a.instance, a.module),
                ));
                continue;
            }
        };
        let before = problems.len();
        let mut answers = requirements::own(inventory, module, node, &a, &mut problems)?;
        let mut unanswered = Vec::new();
        requirements::modules(
            inventory,
            catalogue,
            module,
            node,
            &a,
            &mut answers,
            &mut unanswered,
        )?;
        if !answers.unallocated.is_empty() {
            unallocated.append(&mut answers.unallocated);
            continue;
        }
        if problems.len() == before
            && !unanswered.is_empty()
            && held::provider_gone(inventory, module, &a, confirmed.as_ref())?
        {
            kept.extend(held::kept(confirmed.as_ref(), &a.instance));
            holds.push(Held::gone(&a, node, &unanswered));
            continue;
        }
        problems.append(&mut unanswered);
        if problems.len() > before {
            continue;
        }
        if let Some(fact) = answers.facts_unknown.take() {
            kept.extend(held::kept(confirmed.as_ref(), &a.instance));
            holds.push(Held::facts(&a, node, &fact));
            continue;
        }
        if let Some(provider) =
            provisions::waiting_for(inventory, catalogue, module, node, &a, &answers.providers)?
        {
            kept.extend(held::kept(confirmed.as_ref(), &a.instance));
            holds.push(Held::waiting(&a, provider));
            continue;
        }
        provisions::made(
            inventory,
            catalogue,
            module,
            node,
            &a,
            &mut answers,
            &mut withdrawn,
        )?;
        if !answers.unallocated.is_empty() {
            unallocated.append(&mut answers.unallocated);
            continue;
        }
        for (name, d) in answers.directories {
            let spec = Spec::Directory(d);
            if let Err(e) = spec.check() {
                problems.push(
                    Problem::of(
                        &a,
                        format!(
                            "{} ({} from {}): the directory it requires as {name} {e}; \
                     place it elsewhere with `mesh place {} {} {name}=PATH`",
                            a.instance,
                            module.name,
                            module.file(),
                            a.instance,
                            node.name
                        ),
                    )
                    .file(module.file())
                    .field(name.clone())
                    .fix(format!(
                        "mesh place {} {} {name}=PATH",
                        a.instance, node.name
                    )),
                );
                continue;
            }
            resources.push(Resource {
                id: format!("{}:directory:{}", a.instance, spec.target()),
                instance: a.instance.clone(),
                module: format!("{}@{}", module.name, module.version),
                confirm: false,
                spec,
            });
        }
        for (i, def) in module.resources.iter().enumerate() {
            match resource(&a.instance, module, def, &answers.values) {
                // every path is checked as rendered: a setting or a placement can make a path
                // leave its place that the definition kept
                Ok(mut r) => match with_access(&mut r, &answers.access).check() {
                    Ok(()) => resources.push(r),
                    Err(e) => problems.push(
                        Problem::of(
                            &a,
                            format!(
                                "{} ({} from {}): resources[{i}].{} reads as {:?}: {}; \
                         nothing is sent until the module or its settings change",
                                a.instance,
                                module.name,
                                module.file(),
                                e.field,
                                e.value,
                                e.reason
                            ),
                        )
                        .file(module.file())
                        .field(format!("resources[{i}].{}", e.field)),
                    ),
                },
                Err(problem) => {
                    problems.push(Problem::of(&a, format!("{}: {problem}", a.instance)))
                }
            }
        }
    }
    if !unallocated.is_empty() {
        return Err(ResolveError::Unallocated {
            node: node.name.clone(),
            wanted: unallocated,
        });
    }
    // what a held assignment keeps is still on the machine: nothing new may take its place
    if kept.is_empty() {
        problems.extend(collisions(&resources).into_iter().map(Problem::from));
    } else {
        problems.extend(
            collisions(&[resources.clone(), kept.clone()].concat())
                .into_iter()
                .map(Problem::from),
        );
    }
    problems.extend(
        collisions::operators_data(&resources, confirmed.as_ref())
            .into_iter()
            .map(Problem::from),
    );
    sealed::seal(inventory, node, &mut resources, &mut problems)?;
    if !problems.is_empty() {
        return Err(ResolveError::Unresolved {
            node: node.name.clone(),
            problems,
        });
    }
    // taking off what asked for confirmation is confirmed too: the node's confirmed state says
    // which those are, whatever the helper's record (an older one does not) keeps of them
    let confirm_removals = confirmed
        .iter()
        .flat_map(|c| &c.resources)
        .filter(|old| old.confirm && !resources.iter().chain(&kept).any(|r| r.id == old.id))
        .map(|old| old.id.clone())
        .collect();
    Ok(Composed {
        declaration: Declaration {
            version: wire::VERSION,
            node: node.name.clone(),
            resources,
            expects_record: false,
            confirm_within: None,
            confirm_removals,
            keep: kept.iter().map(|r| r.id.clone()).collect(),
            planned: None,
        },
        held: holds,
        kept,
        withdrawn,
    })
}

/// A process or container reaches every path of the operator's data its module requires
/// access to.
fn with_access<'r>(r: &'r mut Resource, access: &[wire::Access]) -> &'r Spec {
    match &mut r.spec {
        Spec::Process(p) => p.access = access.to_vec(),
        Spec::Container(c) => c.access = access.to_vec(),
        _ => {}
    }
    &r.spec
}

/// A digest of a whole declaration: two equal declarations have equal digests (a sealed file
/// counts by its digest: sealing it again changes nothing).
pub fn declaration_digest(declaration: &Declaration) -> String {
    let json = serde_json::to_vec(&declaration.without_ciphertext()).unwrap_or_default();
    digest(&[&json])
}

#[cfg(test)]
mod tests;
