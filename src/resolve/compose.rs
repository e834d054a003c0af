//! What a node should be: each of its assignments answered and rendered into resources, or held
//! back (its provider gone, a fact not known, a provider not ready), then checked as a whole
//! (collisions, the operator's data) and sealed. Every problem is gathered, none stops the rest.

use crate::catalogue::{Catalogue, Module};
use crate::inventory::{Assignment, Inventory, Node};
use crate::wire::{self, Declaration, Resource, Spec};

use super::collisions::{self, collisions};
use super::render::resource;
use super::requirements::{self, Answers};
use super::{Held, Problem, ResolveError, held, provisions, sealed};

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
    /// What the node's helper had confirmed when this was composed (`Inventory::confirmed`):
    /// a plan compares with it, and reading it again cost a plan of the fleet a twentieth.
    pub confirmed: Option<Declaration>,
    /// What composing read and resolved that a push's cost and order ask again: `None` where
    /// the declaration was not composed here (a generation sent back).
    pub resolved: Option<Resolved>,
}

/// What composing a node read and resolved that costing and ordering its push need: read once
/// per plan rather than again for each (a node's assignments were read five times, and its
/// module requirements resolved twice: a fifth of a plan of the fleet).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    /// The node's assignments, as [`Inventory::assignments`] reads them.
    pub assignments: Vec<Assignment>,
    /// The providers of each assignment whose module requires another module, in the
    /// assignments' order, as [`super::providers_of`] answers them.
    pub providers: super::order::Providers,
}

/// What composing a node gathers, assignment by assignment.
#[derive(Default)]
struct Gathered {
    resources: Vec<Resource>,
    problems: Vec<Problem>,
    holds: Vec<Held>,
    kept: Vec<Resource>,
    withdrawn: Vec<provisions::Withdrawn>,
    /// What the assignments read that the inventory has not allocated yet.
    unallocated: Vec<crate::inventory::Unallocated>,
    /// Each assignment's providers, as [`Resolved::providers`].
    providers: super::order::Providers,
}

/// Composes what `node` should be, reading the inventory only: a node whose values are not all
/// allocated is [`ResolveError::Unallocated`] (see [`super::allocation::compose`]).
pub fn compose(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
) -> Result<Composed, ResolveError> {
    let confirmed = inventory.confirmed(&node.name)?;
    let mut g = Gathered::default();
    let assignments = inventory.assignments(Some(&node.name))?;
    for a in &assignments {
        assignment(inventory, catalogue, node, a, confirmed.as_ref(), &mut g)?;
    }
    if !g.unallocated.is_empty() {
        return Err(ResolveError::Unallocated {
            node: node.name.clone(),
            wanted: g.unallocated,
        });
    }
    // what a held assignment keeps is still on the machine: nothing new may take its place
    if g.kept.is_empty() {
        g.problems
            .extend(collisions(&g.resources).into_iter().map(Problem::from));
    } else {
        g.problems.extend(
            collisions(&[g.resources.clone(), g.kept.clone()].concat())
                .into_iter()
                .map(Problem::from),
        );
    }
    g.problems.extend(
        collisions::operators_data(&g.resources, confirmed.as_ref())
            .into_iter()
            .map(Problem::from),
    );
    sealed::seal(inventory, node, &mut g.resources, &mut g.problems)?;
    if !g.problems.is_empty() {
        return Err(ResolveError::Unresolved {
            node: node.name.clone(),
            problems: g.problems,
        });
    }
    Ok(declared(node, g, confirmed, assignments))
}

/// The declaration of what was gathered, with what it keeps and what taking off needs
/// confirmed.
fn declared(
    node: &Node,
    g: Gathered,
    confirmed: Option<Declaration>,
    assignments: Vec<Assignment>,
) -> Composed {
    let Gathered {
        resources,
        holds,
        kept,
        withdrawn,
        providers,
        ..
    } = g;
    // taking off what asked for confirmation is confirmed too: the node's confirmed state says
    // which those are, whatever the helper's record (an older one does not) keeps of them
    let confirm_removals = confirmed
        .iter()
        .flat_map(|c| &c.resources)
        .filter(|old| old.confirm && !resources.iter().chain(&kept).any(|r| r.id == old.id))
        .map(|old| old.id.clone())
        .collect();
    Composed {
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
        confirmed,
        resolved: Some(Resolved {
            assignments,
            providers,
        }),
    }
}

/// One assignment of the node: its resources, its problems, or its hold.
fn assignment(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
    a: &Assignment,
    confirmed: Option<&Declaration>,
    g: &mut Gathered,
) -> Result<(), ResolveError> {
    let module = match catalogue.module(&a.module) {
        Ok(m) => m,
        Err(e) => {
            g.problems.push(Problem::of(
                a,
                format!("{} (module {}): {e}", a.instance, a.module),
            ));
            return Ok(());
        }
    };
    if let Some(refused) = super::supported::refusal(inventory, module, node, a)? {
        g.problems.push(refused);
        return Ok(());
    }
    let before = g.problems.len();
    let mut answers = requirements::own(inventory, catalogue, module, node, a, &mut g.problems)?;
    let mut unanswered = Vec::new();
    requirements::modules(
        inventory,
        catalogue,
        module,
        node,
        a,
        &mut answers,
        &mut unanswered,
    )?;
    // what `providers_of` would resolve again to order a push: the same reads, the same answer
    if super::requires_a_module(module) {
        g.providers
            .push((a.instance.clone(), answers.providers.clone()));
    }
    if !answers.unallocated.is_empty() {
        g.unallocated.append(&mut answers.unallocated);
        return Ok(());
    }
    let hold = if g.problems.len() == before
        && !unanswered.is_empty()
        && held::provider_gone(inventory, module, a, confirmed)?
    {
        Some(Held::gone(a, node, &unanswered))
    } else {
        g.problems.append(&mut unanswered);
        if g.problems.len() > before {
            return Ok(());
        }
        held_back(inventory, catalogue, module, node, a, &mut answers)?
    };
    if let Some(hold) = hold {
        g.kept.extend(held::kept(confirmed, &a.instance));
        g.holds.push(hold);
        return Ok(());
    }
    provisions::made(
        inventory,
        catalogue,
        module,
        node,
        a,
        &mut answers,
        &mut g.withdrawn,
    )?;
    if !answers.unallocated.is_empty() {
        g.unallocated.append(&mut answers.unallocated);
        return Ok(());
    }
    directories(module, node, a, &mut answers, g);
    rendered(module, a, &answers, g);
    Ok(())
}

/// Why an assignment answered in full is held back all the same: a fact of the machine its
/// templates read is not known yet, or a provider it requires is not ready.
fn held_back(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    node: &Node,
    a: &Assignment,
    answers: &mut Answers,
) -> Result<Option<Held>, ResolveError> {
    if let Some(fact) = answers.facts_unknown.take() {
        return Ok(Some(Held::facts(a, node, &fact)));
    }
    let waiting =
        provisions::waiting_for(inventory, catalogue, module, node, a, &answers.providers)?;
    Ok(waiting.map(|provider| Held::waiting(a, provider)))
}

/// The directories the assignment requires, each checked as placed.
fn directories(
    module: &Module,
    node: &Node,
    a: &Assignment,
    answers: &mut Answers,
    g: &mut Gathered,
) {
    for (name, d) in std::mem::take(&mut answers.directories) {
        let spec = Spec::from(d);
        if let Err(e) = spec.check() {
            g.problems.push(
                Problem::of(
                    a,
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
        g.resources.push(Resource {
            id: format!("{}:directory:{}", a.instance, spec.target()),
            instance: a.instance.clone(),
            module: format!("{}@{}", module.name, module.version),
            confirm: false,
            spec,
        });
    }
}

/// The module's resources as the assignment's answers render them, each path checked.
fn rendered(module: &Module, a: &Assignment, answers: &Answers, g: &mut Gathered) {
    for (i, def) in module.resources.iter().enumerate() {
        match resource(&a.instance, module, def, &answers.values) {
            // every path is checked as rendered: a setting or a placement can make a path
            // leave its place that the definition kept
            Ok(mut r) => match with_access(&mut r, &answers.access).check() {
                Ok(()) => g.resources.push(r),
                Err(e) => g.problems.push(
                    Problem::of(
                        a,
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
            Err(problem) => g
                .problems
                .push(Problem::of(a, format!("{}: {problem}", a.instance))),
        }
    }
}

/// A process or container reaches every path of the operator's data its module requires
/// access to.
fn with_access<'r>(r: &'r mut Resource, access: &[wire::Access]) -> &'r Spec {
    if let Some(reached) = r.spec.access_mut() {
        *reached = access.to_vec();
    }
    &r.spec
}
