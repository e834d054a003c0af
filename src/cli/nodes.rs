//! `mesh node …`: machines in the inventory, and their pinned host keys.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};

use super::{Context, exit, print_json};
use crate::inventory::Node;
use crate::plan::visible;
use crate::ssh;

mod set;

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
        NodeCommand::Add(a) => {
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
            match &node.local {
                Some(dir) => ctx.answer(
                    serde_json::json!({"added": node.name, "local": dir}),
                    format_args!(
                        "added {}, on this machine with {} as its /",
                        node.name,
                        visible(&dir.display().to_string())
                    ),
                ),
                None => ctx.answer(
                    serde_json::json!({"added": node.name}),
                    format_args!(
                        "added {}; pin its host key next: mesh node trust {}",
                        node.name, node.name
                    ),
                ),
            }
        }
        NodeCommand::Set(a) => set::set(&inv, a, ctx)?,
        NodeCommand::Tag { name, tags } => retag(&inv, &name, &tags, true, ctx)?,
        NodeCommand::Untag { name, tags } => retag(&inv, &name, &tags, false, ctx)?,
        NodeCommand::List => {
            let nodes = inv.nodes()?;
            let mut tags = inv.tags()?;
            if ctx.json {
                let views: Vec<NodeView> = nodes
                    .into_iter()
                    .map(|node| NodeView {
                        tags: tags.remove(&node.name).unwrap_or_default(),
                        node,
                    })
                    .collect();
                print_json(&views)?;
            } else if nodes.is_empty() {
                out!("no nodes yet: `mesh node add NAME --address HOST`, or `mesh lab up 3`");
            } else {
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
            }
        }
        NodeCommand::Show { name } => {
            let n = inv.node(&name)?;
            let assignments = inv.assignments(Some(&name))?;
            let tags = inv.tags_of(&name)?;
            if ctx.json {
                let resolved = match super::reach::resolved(&n, &inv.nodes()?) {
                    Ok(fields) => serde_json::Value::Object(
                        fields
                            .into_iter()
                            .map(|(k, v)| (k.to_string(), v))
                            .collect(),
                    ),
                    Err(e) => serde_json::json!({ "error": e }),
                };
                print_json(&serde_json::json!({
                    "node": n, "tags": tags, "assignments": assignments, "resolved": resolved,
                }))?;
            } else if let Some(dir) = &n.local {
                out!("name:      {}", visible(&n.name));
                out!(
                    "local:     on this machine, {} standing for its /",
                    visible(&dir.display().to_string())
                );
                out!("tags:      {}", visible(&tags.join(", ")));
                out!("modules:   {}", modules(&assignments));
                out!("host key:  none: its helper runs here, not over SSH");
            } else {
                out!("name:      {}", visible(&n.name));
                out!("address:   {}:{}", visible(&n.address), n.port);
                out!(
                    "user:      {}{}",
                    visible(&n.user),
                    if n.sudo { " (sudo -n)" } else { "" }
                );
                out!(
                    "identity:  {}",
                    visible(
                        &n.identity
                            .as_ref()
                            .map_or("ssh-agent, then ~/.ssh/id_*".into(), |p| p
                                .display()
                                .to_string())
                    )
                );
                if let Some(jump) = &n.jump {
                    out!("jump:      {}", visible(jump));
                }
                out!(
                    "reached:   {}",
                    visible(&super::reach::describe(&n, &inv.nodes()?))
                );
                if let Ok(fields) = super::reach::resolved(&n, &inv.nodes()?) {
                    for (key, v) in fields {
                        for line in resolved_lines(key, &v) {
                            out!("{}", visible(&line));
                        }
                    }
                }
                out!(
                    "tags:      {}",
                    if tags.is_empty() {
                        "none".into()
                    } else {
                        visible(&tags.join(", ")).into_owned()
                    }
                );
                out!(
                    "host key:  {}",
                    n.host_key
                        .as_deref()
                        .map(fingerprint_of)
                        .unwrap_or_else(|| "not pinned".into())
                );
                out!("modules:   {}", modules(&assignments));
            }
        }
        NodeCommand::Trust(a) => trust(&inv, a, ctx)?,
        NodeCommand::Adopt(a) => return super::adopt::adopt(a, ctx, inv),
        NodeCommand::Remove { name } => {
            // a rollback's hold goes with the node: said, so that adding it again is not
            // mistaken for keeping it held
            let hold = inv.held_at(&name)?;
            inv.remove_node(&name)?;
            let dropped = hold.as_ref().map_or(String::new(), |h| {
                format!(
                    "; it was held at generation {} by rollback: the hold is dropped with it",
                    h.generation
                )
            });
            let mut json = serde_json::json!({ "removed": name });
            if let Some(h) = &hold {
                json["dropped_hold"] = serde_json::json!({ "generation": h.generation });
            }
            ctx.answer(
                json,
                format_args!(
                    "removed {name} from the inventory{dropped}; the machine itself was not \
                     touched"
                ),
            );
        }
    }
    Ok(exit::OK)
}

/// `node tag` (`add`) and `node untag`: what moved, and the tags the node carries now.
fn retag(
    inv: &crate::inventory::Inventory,
    name: &str,
    tags: &[String],
    add: bool,
    ctx: &Context,
) -> Result<()> {
    let moved = if add {
        inv.tag(name, tags)?
    } else {
        inv.untag(name, tags)?
    };
    let now = inv.tags_of(name)?;
    let (verb, key) = if add {
        ("tagged", "added")
    } else {
        ("untagged", "removed")
    };
    if ctx.json {
        return print_json(&serde_json::json!({ "node": name, key: moved, "tags": now }));
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

/// A node's assignments as `node show` lists them: `instance (module)` where the two differ.
fn modules(assignments: &[crate::inventory::Assignment]) -> String {
    let list: Vec<String> = assignments
        .iter()
        .map(|a| {
            if a.instance == a.module {
                a.module.clone()
            } else {
                format!("{} ({})", a.instance, a.module)
            }
        })
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        visible(&list.join(", ")).into_owned()
    }
}

/// What a node on this machine is stored with for an address (it is never connected to).
const LOCAL_ADDRESS: &str = "localhost";

/// A node as `node list --json` shows it: with its tags.
#[derive(serde::Serialize)]
struct NodeView {
    #[serde(flatten)]
    node: Node,
    tags: Vec<String>,
}

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

fn trust(inv: &crate::inventory::Inventory, a: TrustArgs, ctx: &Context) -> Result<()> {
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
    match a.fingerprint {
        Some(want) if want == seen => {}
        Some(want) => bail!(
            "{}: refused: the machine offers {seen}, not {want}; nothing was pinned",
            node.name
        ),
        None => {
            if !std::io::stdin().is_terminal() {
                bail!(
                    "{}: no terminal to confirm on; check the key and pass --fingerprint {seen}",
                    node.name
                );
            }
            say(format!("Pin this key for {}? [y/N] ", node.name));
            let mut answer = String::new();
            std::io::stdin().lock().read_line(&mut answer)?;
            if !matches!(answer.trim(), "y" | "Y" | "yes") {
                bail!("{}: not pinned", node.name);
            }
        }
    }
    let openssh = key
        .to_openssh()
        .map_err(|e| anyhow::anyhow!("cannot write the key: {e}"))?;
    inv.pin_host_key(&node.name, &openssh)?;
    ctx.answer(
        serde_json::json!({"pinned": node.name, "algorithm": algorithm, "fingerprint": seen,
            "replaced": replaced}),
        format_args!("pinned {seen} for {}", node.name),
    );
    Ok(())
}

/// One resolved field as `node show` prints it, under `ssh -G`'s keyword, one line per value:
/// `port 2222 (ssh_config:F:3)`.
fn resolved_lines(key: &str, v: &serde_json::Value) -> Vec<String> {
    let keyword = key.replace('_', "");
    let keyword = keyword
        .strip_suffix('s')
        .filter(|_| key == "identity_files" || key == "known_hosts_files")
        .unwrap_or(&keyword);
    let one = |v: &serde_json::Value| {
        let value = match &v["value"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) if a.is_empty() => "none".into(),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|h| h.as_str().unwrap_or_default().to_string())
                .collect::<Vec<_>>()
                .join(","),
            serde_json::Value::Null => "none".into(),
            other => other.to_string(),
        };
        format!(
            "{keyword} {value} ({})",
            v["source"].as_str().unwrap_or_default()
        )
    };
    match v.as_array() {
        Some(list) if list.is_empty() => vec![format!("{keyword} none")],
        Some(list) => list.iter().map(one).collect(),
        None => vec![one(v)],
    }
}
