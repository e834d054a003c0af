//! Choosing the provider of a module requirement (design 27), by, in order: a pin on the
//! assignment, the holder of the seat that delivers the provision, the provider on the consumer's
//! own node, the only provider in the mesh; otherwise the requirement is refused, naming the
//! candidates or the unheld seat. The choice reads who is assigned where, never a provider's
//! values: what it answers is [`super::requirements::modules`]'s.

use crate::catalogue::{Catalogue, Module};
use crate::inventory::{Assignment, Inventory, InventoryError, Node};

/// One assignment somewhere in the mesh that provides a provision.
pub(super) struct Candidate {
    pub(super) assignment: Assignment,
    pub(super) node: Node,
}

impl Candidate {
    pub(super) fn named(&self) -> String {
        format!("{}@{}", self.assignment.instance, self.node.name)
    }
}

/// Why no provider is chosen for a requirement (`what` names it), with the candidates it could
/// be; its text is the problem's sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum NoProvider {
    #[error("{what} is pinned to {pinned}, which does not provide it (providers: {providers})")]
    PinnedElsewhere {
        what: String,
        pinned: String,
        providers: String,
    },
    #[error(
        "{what}: the seat {provision} is held by {holder}, which does not provide it (providers: {providers})"
    )]
    SeatElsewhere {
        what: String,
        provision: String,
        holder: String,
        providers: String,
    },
    #[error(
        "{what}: the seat {provision} that delivers it is unheld; it could be held by: {providers} \
         (`mesh seat set {provision} INSTANCE@NODE`; {could})"
    )]
    SeatUnheld {
        what: String,
        provision: String,
        providers: String,
        could: String,
    },
    #[error("{what}: {} provide it on {node}; {pin}", here.join(" and "))]
    SeveralHere {
        what: String,
        here: Vec<String>,
        node: String,
        pin: PinHint,
    },
    #[error("{what}: no provider in the mesh; {could}")]
    NoneInTheMesh { what: String, could: String },
    #[error("{what}: several providers ({providers}) and none on {node}; {pin}")]
    NoneHere {
        what: String,
        providers: String,
        node: String,
        pin: PinHint,
    },
}

/// How to pin the requirement where the rule cannot choose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "pin one with `mesh assign {module} {node} --as {instance} --pin {requirement}=INSTANCE@NODE`"
)]
pub(super) struct PinHint {
    module: String,
    node: String,
    instance: String,
    requirement: String,
}

/// One module requirement of an assignment, as the choice reads it.
pub(super) struct Asked<'a> {
    pub(super) module: &'a Module,
    pub(super) node: &'a Node,
    pub(super) a: &'a Assignment,
    pub(super) requirement: &'a str,
    pub(super) provision: &'a str,
    /// How a refusal names the requirement.
    pub(super) what: &'a str,
}

/// The modules that provide one provision, and where they are assigned.
struct Providers<'a> {
    inventory: &'a Inventory,
    modules: Vec<&'a str>,
}

impl Providers<'_> {
    /// The assignments of the providers: on `node` only when one is named, at most `limit`.
    fn assigned(
        &self,
        node: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<Candidate>, InventoryError> {
        Ok(self
            .inventory
            .assignments_of(&self.modules, node, limit)?
            .into_iter()
            .map(|(assignment, node)| Candidate { assignment, node })
            .collect())
    }

    /// `instance` on `node`, where it is one of the providers.
    fn on(&self, instance: &str, node: &str) -> Result<Option<Candidate>, InventoryError> {
        Ok(self
            .assigned(Some(node), None)?
            .into_iter()
            .find(|c| c.assignment.instance == instance))
    }

    /// Every provider in the mesh, named for a refusal. Read only to refuse: a fleet of
    /// consumers each answered on its own node never reads the fleet once per consumer.
    fn names(&self) -> Result<String, InventoryError> {
        let n: Vec<String> = self
            .assigned(None, None)?
            .iter()
            .map(Candidate::named)
            .collect();
        Ok(if n.is_empty() {
            "none is assigned".to_string()
        } else {
            n.join(", ")
        })
    }

    /// The modules that could provide it, for a refusal.
    fn could(&self) -> String {
        if self.modules.is_empty() {
            "no module in the catalogue provides it".to_string()
        } else {
            format!("modules that provide it: {}", self.modules.join(", "))
        }
    }
}

/// The provider chosen for `asked`, or why none is (the sentence a problem says).
pub(super) fn choose(
    inventory: &Inventory,
    catalogue: &Catalogue,
    asked: &Asked<'_>,
) -> Result<Result<Candidate, NoProvider>, InventoryError> {
    let providers = Providers {
        inventory,
        modules: catalogue
            .modules()
            .filter(|m| m.provides.iter().any(|p| p.name == asked.provision))
            .map(|m| m.name.as_str())
            .collect(),
    };
    let seat_delivered = catalogue.modules().any(|m| {
        m.provides
            .iter()
            .any(|p| p.name == asked.provision && p.seat)
    });
    if let Some((pi, pn)) = inventory.pin(&asked.node.name, &asked.a.instance, asked.requirement)? {
        return Ok(match providers.on(&pi, &pn)? {
            Some(c) => Ok(c),
            None => Err(NoProvider::PinnedElsewhere {
                what: asked.what.to_string(),
                pinned: format!("{pi}@{pn}"),
                providers: providers.names()?,
            }),
        });
    }
    if seat_delivered {
        return seated(inventory, &providers, asked);
    }
    by_rule(&providers, asked)
}

/// The holder of the seat that delivers the provision.
fn seated(
    inventory: &Inventory,
    providers: &Providers<'_>,
    asked: &Asked<'_>,
) -> Result<Result<Candidate, NoProvider>, InventoryError> {
    let (what, provision) = (asked.what.to_string(), asked.provision.to_string());
    Ok(match inventory.seat(&provision)? {
        Some(s) => match providers.on(&s.instance, &s.node)? {
            Some(c) => Ok(c),
            None => Err(NoProvider::SeatElsewhere {
                what,
                provision,
                holder: format!("{}@{}", s.instance, s.node),
                providers: providers.names()?,
            }),
        },
        None => Err(NoProvider::SeatUnheld {
            what,
            provision,
            providers: providers.names()?,
            could: providers.could(),
        }),
    })
}

/// The provider on the consumer's own node, else the only one in the mesh.
fn by_rule(
    providers: &Providers<'_>,
    asked: &Asked<'_>,
) -> Result<Result<Candidate, NoProvider>, InventoryError> {
    let (what, node) = (asked.what.to_string(), &asked.node.name);
    let pin = || PinHint {
        module: asked.module.name.clone(),
        node: node.clone(),
        instance: asked.a.instance.clone(),
        requirement: asked.requirement.to_string(),
    };
    let mut here = providers.assigned(Some(node), None)?;
    // two anywhere are enough to know there is no only one
    let mut anywhere = if here.is_empty() {
        providers.assigned(None, Some(2))?
    } else {
        Vec::new()
    };
    Ok(match (here.len(), anywhere.len()) {
        (1, _) => Ok(here.remove(0)),
        (2.., _) => Err(NoProvider::SeveralHere {
            what,
            here: here.iter().map(Candidate::named).collect(),
            node: node.clone(),
            pin: pin(),
        }),
        (_, 1) => Ok(anywhere.remove(0)),
        (_, 0) => Err(NoProvider::NoneInTheMesh {
            what,
            could: providers.could(),
        }),
        _ => Err(NoProvider::NoneHere {
            what,
            providers: providers.names()?,
            node: node.clone(),
            pin: pin(),
        }),
    })
}
