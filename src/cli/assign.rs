//! `mesh assign` and `mesh unassign`.

use anyhow::Result;
use clap::Args;

use super::{Context, exit};

#[derive(Args, Debug)]
pub(crate) struct AssignArgs {
    /// The module.
    module: String,
    /// The nodes to put it on.
    #[arg(required = true)]
    nodes: Vec<String>,
    /// The instance name it runs under [default: the module's name].
    #[arg(long = "as", value_name = "INSTANCE")]
    instance: Option<String>,
}

#[derive(Args, Debug)]
pub(crate) struct UnassignArgs {
    /// The instance (the module's name, unless it was assigned --as another).
    instance: String,
    /// The nodes to take it off.
    #[arg(required = true)]
    nodes: Vec<String>,
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
    for node in &a.nodes {
        inv.assign(node, &module.name, &instance)?;
        println!(
            "assigned {} to {node}{}; `mesh plan {node}` shows what a push would do",
            module.name,
            if instance == module.name {
                String::new()
            } else {
                format!(" as {instance}")
            }
        );
    }
    Ok(exit::OK)
}

pub(crate) fn unassign(a: UnassignArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    for node in &a.nodes {
        let gone = inv.unassign(node, &a.instance)?;
        println!(
            "unassigned {} from {node}; the next push to {node} undoes what it made there",
            gone.instance
        );
    }
    Ok(exit::OK)
}
