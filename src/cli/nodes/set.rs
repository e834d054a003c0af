//! `mesh node set`: a node edited in place, never removed and added again, so everything the
//! inventory holds about it (assignments, layers, placements, pins, tags, history) stays.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use super::{check, fingerprint_of, identity, normal_root};
use crate::cli::answers::nodes::NodeEdited;
use crate::cli::{Context, print_json};
use crate::inventory::{Inventory, Node};

#[derive(Args, Debug)]
pub(crate) struct SetArgs {
    /// The node's name in the inventory.
    name: String,
    /// Host name or IP address to connect to (unpins the host key).
    #[arg(long)]
    address: Option<String>,
    /// SSH port (unpins the host key).
    #[arg(long)]
    port: Option<u16>,
    /// The user to log in as; not root needs --sudo.
    #[arg(long)]
    user: Option<String>,
    /// The private key to log in with.
    #[arg(long, value_name = "FILE")]
    identity: Option<PathBuf>,
    /// Run the helper through `sudo -n` from now on.
    #[arg(long, conflicts_with = "no_sudo")]
    sudo: bool,
    /// Log in as root directly from now on (with --user root).
    #[arg(long)]
    no_sudo: bool,
    /// Where instances' directories go on this machine unless placed (`mesh plan` shows what
    /// a push would then change).
    #[arg(long, value_name = "DIR")]
    root: Option<String>,
    /// Reach it through these jump hosts from now on: `[USER@]HOST[:PORT][,HOST2…]`; `none`
    /// connects directly, ignoring the ssh configuration's ProxyJump (as `ssh -J none`).
    #[arg(long, value_name = "HOSTS", conflicts_with = "no_jump")]
    jump: Option<String>,
    /// Forget the node's own --jump (or `none`): the ssh configuration's ProxyJump applies.
    #[arg(long)]
    no_jump: bool,
}

pub(super) fn set(inv: &Inventory, a: SetArgs, ctx: &Context) -> Result<()> {
    let before = inv.node(&a.name)?;
    let mut node = before.clone();
    if let Some(address) = a.address {
        node.address = address;
    }
    if let Some(port) = a.port {
        node.port = port;
        node.port_given = true;
    }
    if let Some(user) = a.user {
        node.user = user;
        node.user_given = true;
    }
    if a.jump.is_some() || a.no_jump {
        node.jump = a.jump;
    }
    if a.identity.is_some() {
        node.identity = identity(a.identity)?;
    }
    if a.sudo || a.no_sudo {
        node.sudo = a.sudo;
    }
    if let Some(root) = a.root {
        node.root = normal_root(&root);
    }
    check(&node)?;
    let moved = (&node.address, node.port) != (&before.address, before.port);
    // the key pinned was the old place's: another machine may answer at the new one
    if moved {
        node.host_key = None;
    }
    let changes = changes(&before, &node);
    if changes.is_empty() {
        bail!(
            "{}: nothing to change; say what: --address, --port, --user, --identity, --sudo/--no-sudo, --root or --jump/--no-jump",
            node.name
        );
    }
    inv.edit_node_in(
        &node,
        &crate::push::route::BySsh(&crate::ssh::config::SshConfig::load()?),
    )?;
    if ctx.json {
        print_json(&NodeEdited {
            node: &node,
            changed: &changes,
        })?;
        return Ok(());
    }
    out!("{}: {}", node.name, changes.join("; "));
    if moved && before.host_key.is_some() {
        out!(
            "{0}: its host key is no longer pinned: a push, check or adopt refuses {0} until you pin \
             the key it offers now with `mesh node trust {0}` (or your known_hosts lists it)",
            node.name
        );
    }
    Ok(())
}

/// What differs between the two, as an operator reads it.
fn changes(before: &Node, after: &Node) -> Vec<String> {
    let show = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or("ssh-agent, then ~/.ssh/id_*".into(), |p| {
                p.display().to_string()
            })
    };
    let mut out = Vec::new();
    let mut change = |what: &str, old: String, new: String| {
        if old != new {
            out.push(format!("{what} {old} -> {new}"));
        }
    };
    change("address", before.address.clone(), after.address.clone());
    change("port", before.port.to_string(), after.port.to_string());
    change("user", before.user.clone(), after.user.clone());
    change("identity", show(&before.identity), show(&after.identity));
    change("sudo", before.sudo.to_string(), after.sudo.to_string());
    change("root", before.root.clone(), after.root.clone());
    let jump = |j: &Option<String>| match j {
        None => "(the ssh configuration's)".to_string(),
        Some(j) if crate::push::route::is_direct(j) => "none (direct)".into(),
        Some(j) => j.clone(),
    };
    change("jump", jump(&before.jump), jump(&after.jump));
    if let (Some(old), None) = (&before.host_key, &after.host_key) {
        change("host key", fingerprint_of(old), "not pinned".into());
    }
    out
}
