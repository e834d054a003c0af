//! `mesh assign`, `mesh unassign`, `mesh place` and `mesh seat`: what runs where, and what
//! answers its requirements when the default rule would not.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};

use super::answers::commands::{AssignDone, SeatHeld};
use super::{Context, exit, print_json};
use crate::inventory::{Inventory, Node, Scope, catalogued};

#[derive(Args, Debug)]
pub(crate) struct AssignArgs {
    /// The module.
    module: String,
    /// The nodes to put it on: names, globs (`web*`) or `@TAG`. A tag is read now: a node
    /// tagged later does not receive the module until it is assigned there too.
    #[arg(required_unless_present = "all", value_name = "SELECTOR")]
    nodes: Vec<String>,
    /// Every node in the inventory (as it is now: a node added later is not).
    #[arg(long, conflicts_with = "nodes")]
    all: bool,
    /// Leave out the nodes this selects. Repeatable.
    #[arg(long, value_name = "SELECTOR")]
    exclude: Vec<String>,
    /// The instance name it runs under [default: the module's name].
    #[arg(long = "as", value_name = "INSTANCE")]
    instance: Option<String>,
    /// Answer a module requirement with this provider, whatever the default rule would choose.
    /// Repeatable.
    #[arg(long = "pin", value_name = "REQ=INSTANCE@NODE")]
    pins: Vec<String>,
}

#[derive(Args, Debug)]
pub(crate) struct PlaceArgs {
    /// The instance.
    instance: String,
    /// The node it runs on (a host directory is always on the module's own node).
    node: String,
    /// The directory requirement and where it goes on that node.
    #[arg(value_name = "NAME=PATH")]
    placement: String,
}

#[derive(Subcommand, Debug)]
pub(crate) enum SeatCommand {
    /// Give a seat (the mesh's one answer for a provision) to an instance.
    Set {
        /// The seat: a provision a module delivers by seat.
        seat: String,
        /// The instance that holds it, and its node.
        #[arg(value_name = "INSTANCE@NODE")]
        holder: String,
    },
    /// Every held seat.
    List,
}

/// Every node (`--all`), or what the selectors match.
fn scope(all: bool, nodes: &[String]) -> Scope<'_> {
    if all { Scope::All } else { Scope::Only(nodes) }
}

/// Splits `INSTANCE@NODE`.
fn at(text: &str) -> Result<(&str, &str)> {
    crate::inventory::export::holder(text)
        .ok_or_else(|| anyhow::anyhow!("{text:?} is not INSTANCE@NODE"))
}

/// The module of `instance` on `node`, or a refusal naming what runs there.
pub(super) fn module_of(inv: &Inventory, instance: &str, node: &str) -> Result<String> {
    let here = inv.assignments(Some(node))?;
    match here.iter().find(|a| a.instance == instance) {
        Some(a) => Ok(a.module.clone()),
        None => bail!(
            "nothing runs on {node} as {instance:?} (there: {}); a requirement is answered by an assignment",
            if here.is_empty() {
                "nothing".to_string()
            } else {
                here.iter()
                    .map(|a| a.instance.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
    }
}

#[derive(Args, Debug)]
pub(crate) struct UnassignArgs {
    /// The instance (the module's name, unless it was assigned --as another).
    instance: String,
    /// The nodes to take it off: names, globs or `@TAG`.
    #[arg(required_unless_present = "all", value_name = "SELECTOR")]
    nodes: Vec<String>,
    /// Every node it runs on.
    #[arg(long, conflicts_with = "nodes")]
    all: bool,
    /// Leave out the nodes this selects. Repeatable.
    #[arg(long, value_name = "SELECTOR")]
    exclude: Vec<String>,
    /// Take away a provider even though consumers depend on it: they are held, keeping what they
    /// have, until they are unassigned or pinned to another provider.
    #[arg(long)]
    force: bool,
}

pub(crate) fn assign(a: AssignArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    let module = ctx.catalogue()?.module(&a.module)?.clone();
    let instance = a.instance.unwrap_or_else(|| module.name.clone());
    if !crate::catalogue::setting::valid_name(&instance) {
        anyhow::bail!(
            "{instance:?} cannot name an instance: use lower case letters, digits and '-'"
        );
    }
    // every pin is checked before anything is stored
    let pins = checked_pins(&a.pins, &module, &inv, ctx)?;
    let nodes = inv.select(scope(a.all, &a.nodes), &a.exclude)?;
    for node in nodes.iter().map(|n| &n.name) {
        // pins given to an assignment that exists already re-pin it; nothing else changes
        let exists = inv
            .assignments(Some(node))?
            .iter()
            .any(|x| x.instance == instance && x.module == module.name);
        if exists && !pins.is_empty() {
            for (req, pi, pn) in &pins {
                inv.set_pin(node, &instance, req, (pi, pn))?;
                ctx.answer(
                    AssignDone::Pinned {
                        node,
                        instance: &instance,
                        requirement: req,
                        provider: format!("{pi}@{pn}"),
                    },
                    format_args!(
                        "{instance} on {node}: {req} is answered by {pi}@{pn} from the next push"
                    ),
                );
            }
            continue;
        }
        // a group assigned again reaches the nodes that joined it; the others keep theirs
        if exists && nodes.len() > 1 {
            out!("{instance} is already on {node}; left as it is");
            continue;
        }
        inv.assign(node, &module.name, &instance)?;
        for (req, pi, pn) in &pins {
            inv.set_pin(node, &instance, req, (pi, pn))?;
        }
        ctx.answer(
            AssignDone::Assigned {
                node,
                module: &module.name,
                instance: &instance,
            },
            format_args!(
                "assigned {} to {node}{}; `mesh plan {node}` shows what a push would do",
                module.name,
                if instance == module.name {
                    String::new()
                } else {
                    format!(" as {instance}")
                }
            ),
        );
    }
    // what the nodes' assignments need (ports, generated secrets) is allocated now, in one
    // transaction, so that a plan of them only reads it
    let cat = ctx.catalogue()?;
    inv.batch(|inv| {
        inv.seal_kept_in_clear()?;
        crate::resolve::allocation::nodes(inv, &cat, &nodes)
    })?;
    Ok(exit::OK)
}

/// Each `REQ=INSTANCE@NODE` as (requirement, instance, node), once its requirement is one of
/// `module`'s and its provider provides what it needs; else a refusal, before anything is stored.
fn checked_pins(
    given: &[String],
    module: &crate::catalogue::Module,
    inv: &Inventory,
    ctx: &Context,
) -> Result<Vec<(String, String, String)>> {
    let mut pins = Vec::new();
    for pin in given {
        let Some((req, provider)) = pin.split_once('=') else {
            bail!("{pin:?} is not REQ=INSTANCE@NODE; nothing was assigned");
        };
        let provision = catalogued::pinned_provision(module, req)
            .map_err(|e| anyhow::anyhow!("{e}; nothing was assigned"))?;
        let (pi, pn) = at(provider)?;
        let provider_module = module_of(inv, pi, pn)?;
        catalogued::check_provides(
            provider,
            ctx.catalogue()?.module(&provider_module)?,
            provision,
        )
        .map_err(|e| anyhow::anyhow!("{e}; nothing was assigned"))?;
        pins.push((req.to_string(), pi.to_string(), pn.to_string()));
    }
    Ok(pins)
}

/// Of `nodes`, those `instance` is assigned to (`unassign --all`: the others have nothing to take
/// off); refused when that is none.
fn holding(inv: &Inventory, nodes: Vec<Node>, instance: &str) -> Result<Vec<Node>> {
    let mut out = Vec::with_capacity(nodes.len());
    for n in nodes {
        if inv
            .assignments(Some(&n.name))?
            .iter()
            .any(|x| x.instance == instance)
        {
            out.push(n);
        }
    }
    if out.is_empty() {
        bail!("{instance} is assigned to no node; nothing was unassigned");
    }
    Ok(out)
}

pub(crate) fn unassign(a: UnassignArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    let mut nodes = inv.select(scope(a.all, &a.nodes), &a.exclude)?;
    if a.all {
        nodes = holding(&inv, nodes, &a.instance)?;
    }
    // every node is checked first, so a group is taken off all of its nodes or none
    let missing: Vec<&str> = nodes
        .iter()
        .filter(|n| {
            !inv.assignments(Some(&n.name))
                .is_ok_and(|here| here.iter().any(|x| x.instance == a.instance))
        })
        .map(|n| n.name.as_str())
        .collect();
    if !missing.is_empty() && nodes.len() > 1 {
        bail!(
            "{} is not assigned to {}; nothing was unassigned (leave them out with --exclude)",
            a.instance,
            missing.join(", ")
        );
    }
    // a provider is never taken away silently: the consumers it answers are named first
    let cat = ctx.catalogue()?;
    let taken: Vec<(String, String)> = nodes
        .iter()
        .map(|n| (n.name.clone(), a.instance.clone()))
        .collect();
    // asked without keeping what resolving them allocates: a refusal stores nothing
    let orphans =
        inv.trial(|inv| crate::resolve::consumers::orphaned(inv, &cat, &taken, &|_| false))?;
    if !orphans.is_empty() {
        let list: Vec<String> = orphans
            .iter()
            .map(|(provider, c)| format!("  - {provider} answers {}", c.describe()))
            .collect();
        if !a.force {
            bail!(
                "{} answers consumers; nothing was unassigned:\n{}\nunassign them first \
                 (`mesh unassign INSTANCE NODE`), pin them to another provider (`mesh assign \
                 MODULE NODE --as INSTANCE --pin REQ=INSTANCE@NODE`), or say --force to leave \
                 them held, keeping what they have, until one of those is done",
                a.instance,
                list.join("\n")
            );
        }
        err!(
            "{} answered consumers; they are held, keeping what they have, until they are \
             unassigned or pinned to another provider:\n{}",
            a.instance,
            list.join("\n")
        );
    }
    for node in nodes.iter().map(|n| &n.name) {
        let gone = inv.unassign(node, &a.instance)?;
        ctx.answer(
            AssignDone::Unassigned {
                node,
                instance: &gone.instance,
            },
            format_args!(
                "unassigned {} from {node}; the next push to {node} undoes what it made there",
                gone.instance
            ),
        );
    }
    Ok(exit::OK)
}

pub(crate) fn place(a: PlaceArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    let Some((name, path)) = a.placement.split_once('=') else {
        bail!("{:?} is not NAME=PATH", a.placement);
    };
    // a host requirement is answered on the module's own node, nowhere else
    let module_name = module_of(&inv, &a.instance, &a.node)?;
    let module = ctx.catalogue()?.module(&module_name)?.clone();
    let path = path
        .strip_suffix('/')
        .filter(|p| !p.is_empty())
        .unwrap_or(path);
    // a directory the host makes there, or the operator's data it is given access to
    if let Err(e) = catalogued::check_placement(&module, name, path) {
        bail!("{} on {}: {e}; nothing was placed", a.instance, a.node);
    }
    inv.place(&a.node, &a.instance, name, path)?;
    ctx.answer(
        AssignDone::Placed {
            node: &a.node,
            instance: &a.instance,
            directory: name,
            path,
        },
        format_args!(
            "{} on {}: {name} is {path} from the next push (`mesh plan {}` shows it)",
            a.instance, a.node, a.node
        ),
    );
    Ok(exit::OK)
}

pub(crate) fn seat(c: SeatCommand, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    match c {
        SeatCommand::Set { seat, holder } => {
            let (instance, node) = at(&holder)?;
            let module_name = module_of(&inv, instance, node)?;
            let module = ctx.catalogue()?.module(&module_name)?.clone();
            catalogued::check_seat(&seat, &holder, &module).map_err(|e| anyhow::anyhow!(e))?;
            let before = inv.set_seat(&seat, instance, node)?;
            let holder = SeatHeld {
                seat: &seat,
                instance,
                node,
            };
            match before {
                Some(b) if (b.instance.as_str(), b.node.as_str()) != (instance, node) => ctx.answer(
                    holder,
                    format_args!(
                        "the seat {seat} moves from {}@{} to {instance}@{node}; every consumer follows at its next push",
                        b.instance, b.node
                    ),
                ),
                _ => ctx.answer(
                    holder,
                    format_args!("{instance}@{node} holds the seat {seat}"),
                ),
            }
        }
        SeatCommand::List => {
            let seats = inv.seats()?;
            if ctx.json {
                print_json(&seats)?;
            } else if seats.is_empty() {
                out!("no seat is held");
            } else {
                for s in seats {
                    out!(
                        "{:<20} {}@{} (since {})",
                        crate::plan::visible(&s.seat),
                        crate::plan::visible(&s.instance),
                        crate::plan::visible(&s.node),
                        s.set_at
                    );
                }
            }
        }
    }
    Ok(exit::OK)
}
