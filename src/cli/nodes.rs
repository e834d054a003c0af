//! `mesh node …`: machines in the inventory, and their pinned host keys.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};

use super::answers::nodes::{Generation, NodeAdded, NodeListed, NodeRemoved, Pinned, Retagged};
use super::{Context, exit, print_json};
use crate::inventory::{Inventory, Node};
use crate::plan::visible;
use crate::ssh;

mod import;
mod set;
mod show;

#[derive(Subcommand, Debug)]
pub(crate) enum NodeCommand {
    /// Add a machine (one node per address and port: a second name for it is refused).
    Add(AddArgs),
    /// Change how a machine is reached, in place: its assignments, settings, placements, pins,
    /// tags and history are kept. A new address or port unpins its host key.
    Set(set::SetArgs),
    /// Give a machine tags (groups), selected as `@TAG` wherever nodes are taken.
    Tag {
        /// The node.
        name: String,
        /// The tags (letters, digits, '-', '_' and '.', starting with a letter).
        #[arg(required = true)]
        tags: Vec<String>,
    },
    /// Take tags off a machine.
    Untag {
        /// The node.
        name: String,
        /// The tags to take off.
        #[arg(required = true)]
        tags: Vec<String>,
    },
    /// List the machines.
    List,
    /// Everything the inventory says of one machine.
    Show {
        /// The node.
        name: String,
    },
    /// Pin the host key a machine offers (asks first, unless --fingerprint says which).
    Trust(TrustArgs),
    /// Remove a machine, its assignments and its node layers (the machine itself is not touched).
    Remove {
        /// The node.
        name: String,
    },
    /// Take machines whose helper records were lost as they are now (push refuses them until
    /// then), and hear what can no longer be given back; a new machine keeps what it has.
    Adopt(super::adopt::AdoptArgs),
    /// Nodes from another tool's inventory (an Ansible INI file), its groups as tags.
    Import(import::ImportArgs),
}

#[derive(Args, Debug)]
pub(crate) struct AddArgs {
    /// The node's name in the inventory.
    name: String,
    /// Host name or IP address to connect to, or a Host alias of ~/.ssh/config.
    #[arg(long, required_unless_present = "local")]
    address: Option<String>,
    /// A node on this machine, not reached over SSH: its helper runs as a child process of
    /// mesh, as your user, with DIR (an absolute path to a directory) standing for the
    /// machine's `/`.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["address", "port", "user", "identity", "sudo", "jump"])]
    local: Option<PathBuf>,
    /// SSH port [default: the ssh configuration's Port, else 22].
    #[arg(long)]
    port: Option<u16>,
    /// The user to log in as; not root needs --sudo [default: the ssh configuration's User,
    /// else root].
    #[arg(long)]
    user: Option<String>,
    /// The private key to log in with [default: ssh-agent, then ~/.ssh/id_*].
    #[arg(long, value_name = "FILE")]
    identity: Option<PathBuf>,
    /// Run the helper through `sudo -n` (the user needs passwordless sudo).
    #[arg(long)]
    sudo: bool,
    /// Where instances' directories go on this machine unless placed: `<root>/<instance>/<name>`.
    #[arg(long, default_value = crate::inventory::DEFAULT_ROOT, value_name = "DIR")]
    root: String,
    /// Reach it through jump hosts, first first: `[USER@]HOST[:PORT][,HOST2…]` (a HOST that is
    /// a node is reached as that node); `none` connects directly, ignoring the ssh
    /// configuration's ProxyJump [default: the ssh configuration's ProxyJump].
    #[arg(long, value_name = "HOSTS")]
    jump: Option<String>,
}

#[derive(Args, Debug)]
pub(crate) struct TrustArgs {
    /// The node.
    name: String,
    /// Pin only if the machine offers this key (`SHA256:…`, as `ssh-keygen -lf` prints it).
    #[arg(long, value_name = "SHA256:…")]
    fingerprint: Option<String>,
    /// Seconds to wait for the machine.
    #[arg(long, default_value_t = 10)]
    connect_timeout: u64,
}

pub(crate) fn run(command: NodeCommand, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    match command {
        NodeCommand::Add(a) => add(&inv, a, ctx)?,
        NodeCommand::Set(a) => set::set(&inv, a, ctx)?,
        NodeCommand::Tag { name, tags } => retag(&inv, &name, &tags, true, ctx)?,
        NodeCommand::Untag { name, tags } => retag(&inv, &name, &tags, false, ctx)?,
        NodeCommand::List => list(&inv, ctx)?,
        NodeCommand::Show { name } => show::show(&inv, &name, ctx)?,
        NodeCommand::Trust(a) => trust(&inv, a, ctx)?,
        NodeCommand::Adopt(a) => return super::adopt::adopt(a, ctx, inv),
        NodeCommand::Remove { name } => remove(&inv, &name, ctx)?,
        NodeCommand::Import(a) => return import::import(&inv, a, ctx),
    }
    Ok(exit::OK)
}

fn add(inv: &Inventory, a: AddArgs, ctx: &Context) -> Result<()> {
    let node = Node {
        address: a.address.unwrap_or_else(|| LOCAL_ADDRESS.into()),
        local: a.local,
        port: a.port.unwrap_or(22),
        port_given: a.port.is_some(),
        user: a.user.clone().unwrap_or_else(|| "root".into()),
        user_given: a.user.is_some(),
        identity: identity(a.identity)?,
        sudo: a.sudo,
        root: normal_root(&a.root),
        jump: a.jump,
        ..Node::new(&a.name, "")
    };
    check(&node)?;
    inv.add_node_in(
        &node,
        &crate::push::route::BySsh(&ssh::config::SshConfig::load()?),
    )?;
    let added = NodeAdded {
        added: &node.name,
        local: node.local.as_deref(),
    };
    match &node.local {
        Some(dir) => ctx.answer(
            added,
            format_args!(
                "added {}, on this machine with {} as its /",
                node.name,
                visible(&dir.display().to_string())
            ),
        ),
        None => ctx.answer(
            added,
            format_args!(
                "added {}; pin its host key next: mesh node trust {}",
                node.name, node.name
            ),
        ),
    }
    Ok(())
}

fn list(inv: &Inventory, ctx: &Context) -> Result<()> {
    let nodes = inv.nodes()?;
    let mut tags = inv.tags()?;
    if ctx.json {
        let views: Vec<NodeListed> = nodes
            .into_iter()
            .map(|node| NodeListed {
                tags: tags.remove(&node.name).unwrap_or_default(),
                node,
            })
            .collect();
        return print_json(&views);
    }
    if nodes.is_empty() {
        out!("no nodes yet: `mesh node add NAME --address HOST`, or `mesh lab up 3`");
    }
    for n in nodes {
        let key = n
            .host_key
            .as_deref()
            .map(fingerprint_of)
            .unwrap_or_else(|| "host key not pinned".into());
        let tags = tags
            .get(&n.name)
            .map(|t| format!("  @{}", t.join(" @")))
            .unwrap_or_default();
        if let Some(dir) = &n.local {
            out!(
                "{:<12} local {}{}",
                visible(&n.name),
                visible(&dir.display().to_string()),
                visible(&tags)
            );
            continue;
        }
        out!(
            "{:<12} {}@{}:{}  {key}{}",
            visible(&n.name),
            visible(&n.user),
            visible(&n.address),
            n.port,
            visible(&tags)
        );
    }
    Ok(())
}

fn remove(inv: &Inventory, name: &str, ctx: &Context) -> Result<()> {
    // a rollback's hold goes with the node: said, so that adding it again is not mistaken for
    // keeping it held
    let hold = inv.held_at(name)?;
    inv.remove_node(name)?;
    let dropped = hold.as_ref().map_or(String::new(), |h| {
        format!(
            "; it was held at generation {} by rollback: the hold is dropped with it",
            h.generation
        )
    });
    ctx.answer(
        NodeRemoved {
            removed: name,
            dropped_hold: hold.map(|h| Generation {
                generation: h.generation,
            }),
        },
        format_args!(
            "removed {name} from the inventory{dropped}; the machine itself was not touched"
        ),
    );
    Ok(())
}

/// `node tag` (`add`) and `node untag`: what moved, and the tags the node carries now.
fn retag(inv: &Inventory, name: &str, tags: &[String], add: bool, ctx: &Context) -> Result<()> {
    let moved = if add {
        inv.tag(name, tags)?
    } else {
        inv.untag(name, tags)?
    };
    let now = inv.tags_of(name)?;
    let verb = if add { "tagged" } else { "untagged" };
    if ctx.json {
        return print_json(&Retagged {
            node: name,
            added: add.then_some(moved.as_slice()),
            removed: (!add).then_some(moved.as_slice()),
            tags: &now,
        });
    }
    let list = |t: &[String]| {
        if t.is_empty() {
            "none".to_string()
        } else {
            t.join(", ")
        }
    };
    out!(
        "{name}: {verb} {}; its tags: {}",
        if moved.is_empty() {
            "nothing new".to_string()
        } else {
            moved.join(", ")
        },
        list(&now)
    );
    Ok(())
}

/// What a node on this machine is stored with for an address (it is never connected to).
const LOCAL_ADDRESS: &str = "localhost";

/// `/srv/mesh/` is meant as `/srv/mesh`; `/` stays `/` and is refused by [`check`].
pub(super) fn normal_root(root: &str) -> String {
    root.strip_suffix('/')
        .filter(|r| !r.is_empty())
        .unwrap_or(root)
        .to_string()
}

/// An identity file as stored: absolute ([`check`] refuses one that is not a key file).
pub(super) fn identity(path: Option<PathBuf>) -> Result<Option<PathBuf>> {
    Ok(path.map(|p| std::path::absolute(&p)).transpose()?)
}

/// A node as `node add` and `node set` store it, through the inventory's one check: nothing is
/// stored unless it passes.
pub(super) fn check(node: &Node) -> Result<()> {
    if let Err(e) = node.validate() {
        bail!(
            "{}: --{} {}; nothing was stored",
            node.name,
            e.field,
            e.reason
        );
    }
    Ok(())
}

pub(super) fn fingerprint_of(key: &str) -> String {
    ssh::parse_public_key(key)
        .map(|k| ssh::fingerprint(&k))
        .unwrap_or_else(|e| format!("unreadable pinned key: {e}"))
}

fn trust(inv: &Inventory, a: TrustArgs, ctx: &Context) -> Result<()> {
    let node = inv.node(&a.name)?;
    if node.local.is_some() {
        bail!(
            "{}: a node on this machine has no host key: its helper runs here, not over SSH",
            node.name
        );
    }
    let unpinned = Node {
        host_key: None,
        ..node.clone()
    };
    let (reach, mut unusable) = crate::push::reach::reach(&[&unpinned], &inv.nodes()?)?;
    if let Some(e) = unusable.remove(&node.name) {
        return Err(e.into());
    }
    let target = reach
        .targets
        .get(&node.name)
        .ok_or_else(|| anyhow::anyhow!("{}: how to reach it was not worked out", node.name))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let key = runtime.block_on(ssh::scan_host_key(
        target,
        &reach.credentials,
        Duration::from_secs(a.connect_timeout),
        a.fingerprint.as_deref(),
    ))?;
    let seen = ssh::fingerprint(&key);
    let algorithm = key.algorithm().to_string();
    // under --json stdout holds only the answer (the pin below): what the operator decides on
    // goes to stderr
    let say = |text: String| {
        if ctx.json {
            err_raw!("{text}");
        } else {
            out_raw!("{text}");
        }
    };
    say(format!(
        "{} ({}:{}) offers {algorithm} {seen}\n",
        node.name, node.address, node.port
    ));
    let replaced = node
        .host_key
        .as_deref()
        .map(fingerprint_of)
        .filter(|old| *old != seen);
    if let Some(old) = &replaced {
        say(format!(
            "the key pinned now is {old}: pinning replaces it\n"
        ));
    }
    agreed(&node.name, &seen, a.fingerprint.as_deref(), &say)?;
    let openssh = key
        .to_openssh()
        .map_err(|e| anyhow::anyhow!("cannot write the key: {e}"))?;
    inv.pin_host_key(&node.name, &openssh)?;
    ctx.answer(
        Pinned {
            pinned: &node.name,
            algorithm: &algorithm,
            fingerprint: &seen,
            replaced: replaced.as_deref(),
        },
        format_args!("pinned {seen} for {}", node.name),
    );
    Ok(())
}

/// Whether the key `seen` is to be pinned: it is the one `--fingerprint` names, or the operator
/// says yes on a terminal.
fn agreed(node: &str, seen: &str, fingerprint: Option<&str>, say: &dyn Fn(String)) -> Result<()> {
    match fingerprint {
        Some(want) if want == seen => {}
        Some(want) => {
            bail!("{node}: refused: the machine offers {seen}, not {want}; nothing was pinned")
        }
        None => {
            if !std::io::stdin().is_terminal() {
                bail!(
                    "{node}: no terminal to confirm on; check the key and pass --fingerprint {seen}"
                );
            }
            say(format!("Pin this key for {node}? [y/N] "));
            let mut answer = String::new();
            std::io::stdin().lock().read_line(&mut answer)?;
            if !matches!(answer.trim(), "y" | "Y" | "yes") {
                bail!("{node}: not pinned");
            }
        }
    }
    Ok(())
}
