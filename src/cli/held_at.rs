//! Nodes held at a generation by `mesh rollback`: `plan` and `push` leave them alone and say so,
//! `plan` with how the inventory's declaration differs from what the node is held at. Not the
//! one-push holds of a container's moving data or of a stopped rollout: this one lasts until
//! `mesh rollback NODE --release`.

use anyhow::Result;
use serde::Serialize;

use crate::inventory::{Hold, Inventory, Node};
use crate::plan;
use crate::wire::Declaration;

/// The nodes not held, and the holds of those that are.
pub(crate) fn leave_held(inv: &Inventory, nodes: Vec<Node>) -> Result<(Vec<Node>, Vec<Hold>)> {
    let mut free = Vec::new();
    let mut held = Vec::new();
    for node in nodes {
        match inv.held_at(&node.name)? {
            Some(hold) => held.push(hold),
            None => free.push(node),
        }
    }
    Ok((free, held))
}

/// What a held node's line says, with the way to release it.
pub(crate) fn line(h: &Hold) -> String {
    format!(
        "{}: held at generation {} by rollback (mesh rollback {} --release to release)",
        h.node, h.generation, h.node
    )
}

/// What the inventory's `declaration` of a node would change from what generation
/// `h.generation` sent it: each resource's id and whether it is added, changed or removed;
/// `None`: the inventory keeps that generation no longer.
pub(crate) fn differs(
    inv: &Inventory,
    h: &Hold,
    declaration: &Declaration,
) -> Result<Option<Vec<Differs>>> {
    let Some(kept) = inv.kept_generation(&h.node, h.generation)? else {
        return Ok(None);
    };
    let p = plan::plan(declaration, Some(&kept.declaration), None);
    Ok(Some(
        p.changes
            .into_iter()
            .map(|c| Differs {
                id: c.id,
                action: c.action,
            })
            .collect(),
    ))
}

/// One resource the inventory's declaration has otherwise than the generation held at.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Differs {
    pub(crate) id: String,
    pub(crate) action: plan::Action,
}

/// `plan`'s text for a held node: its line, and how the inventory differs from what it is held at.
pub(crate) fn plan_text(h: &Hold, differs: Option<&[Differs]>) -> String {
    let mut out = format!("{}\n", line(h));
    match differs {
        None => out.push_str(&format!(
            "  this inventory does not keep generation {} (a hold imported from another \
             inventory's export, or a generation it no longer keeps)\n",
            h.generation
        )),
        Some([]) => out.push_str("  the inventory's declaration is what it is held at\n"),
        Some(list) => {
            out.push_str(&format!(
                "  the inventory's declaration differs from generation {} in {} resource{}:\n",
                h.generation,
                list.len(),
                if list.len() == 1 { "" } else { "s" }
            ));
            for d in list {
                let id = plan::visible(&d.id);
                out.push_str(&format!("  {} {id}\n", d.action.sign()));
            }
        }
    }
    out
}
