//! `mesh node import FILE --from ansible`: the hosts of an Ansible INI inventory as nodes, its
//! groups as tags. What would be added, changed and left alone is said first; a node already in
//! the inventory with other values is taken only with `--replace`; everything is stored in one
//! transaction or nothing is. Variables mesh has no meaning for are listed, never guessed into
//! settings, and host keys are never invented: each node is trusted afterwards.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};

use super::super::{Context, exit};
use crate::inventory::ansible::{AnsibleHost, parse_ini};
use crate::inventory::{Inventory, Node};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum From {
    /// An Ansible inventory in INI form (`[web]`, `[prod:children]`, `[web:vars]`, ranges).
    Ansible,
    /// An OpenSSH client configuration: each `Host` alias that names one machine becomes a
    /// node reached by that alias, so its HostName, Port, User, ProxyJump and IdentityFile stay
    /// the configuration's, read at every push as ssh reads them; patterns are skipped, saying so.
    SshConfig,
}

#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// The inventory file.
    file: PathBuf,
    /// What kind of file it is.
    #[arg(long, value_enum)]
    from: From,
    /// Say what would be added, changed and left alone; store nothing.
    #[arg(long)]
    dry_run: bool,
    /// Take the file's values for nodes the inventory has with others (their assignments,
    /// layers and pinned keys are kept).
    #[arg(long)]
    replace: bool,
}

/// A host as the file has it, and the inventory's node of that name with its tags, if any.
type Planned = (Node, Vec<String>, Option<(Vec<String>, Node)>);

/// Says each node to add or change; returns how many are added, changed and as they were.
fn say(plan: &[Planned]) -> (usize, usize, usize) {
    let (mut added, mut changed, mut same) = (0, 0, 0);
    for (node, tags, before) in plan {
        match before {
            None => {
                added += 1;
                out!(
                    "+ {} ({}@{}:{}{}) tags {}",
                    node.name,
                    node.user,
                    node.address,
                    node.port,
                    if node.sudo { ", sudo" } else { "" },
                    if tags.is_empty() {
                        "none".into()
                    } else {
                        tags.join(" ")
                    }
                );
            }
            Some((had_tags, had)) => {
                let d = differences(had, had_tags, node, tags);
                if d.is_empty() {
                    same += 1;
                } else {
                    changed += 1;
                    out!("~ {}: {}", node.name, d.join(", "));
                }
            }
        }
    }
    (added, changed, same)
}

/// Stores every planned node (a node the inventory has keeps its pinned key and its root), in
/// one transaction.
fn store(inv: &Inventory, plan: &[Planned]) -> Result<()> {
    inv.atomically(|inv| -> Result<()> {
        for (node, tags, before) in plan {
            match before {
                None => inv.add_node(node)?,
                Some((_, had)) => inv.edit_node_in(
                    &Node {
                        host_key: had.host_key.clone(),
                        root: had.root.clone(),
                        ..node.clone()
                    },
                    &crate::inventory::AsWritten,
                )?,
            }
            inv.tag(&node.name, tags)?;
        }
        Ok(())
    })
}

/// The variables a host line may carry that mesh reads.
const KNOWN: [&str; 6] = [
    "ansible_host",
    "ansible_port",
    "ansible_user",
    "ansible_become",
    "ansible_ssh_common_args",
    "ansible_ssh_private_key_file",
];

/// Each `Host` alias of an ssh configuration that names one machine, as a host reached by that
/// alias; a pattern (`*`, `?`, `!`) is said and skipped.
fn ssh_hosts(text: &str) -> Vec<AnsibleHost> {
    let mut out: Vec<AnsibleHost> = Vec::new();
    for line in text.lines().map(str::trim) {
        let (keyword, rest) = line
            .split_once(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or((line, ""));
        if !keyword.eq_ignore_ascii_case("host") {
            continue;
        }
        for alias in rest.trim_start_matches([' ', '=', '\t']).split_whitespace() {
            if alias.contains(['*', '?', '!']) {
                out!("  skipped {alias}: a pattern, not a machine");
            } else if !out.iter().any(|h| h.name == alias) {
                out.push(AnsibleHost {
                    name: alias.to_string(),
                    vars: Default::default(),
                    groups: Default::default(),
                });
            }
        }
    }
    out
}

/// A host as a node, and the tags its groups make.
fn node_of(h: &AnsibleHost) -> Result<(Node, Vec<String>)> {
    if !crate::inventory::nodes_valid_name(&h.name) {
        bail!(
            "host {:?} is not a node name (a letter first, then letters, digits, - _ .): nothing was imported",
            h.name
        );
    }
    let var = |k: &str| h.vars.get(k).map(String::as_str);
    let mut node = Node::new(&h.name, var("ansible_host").unwrap_or(&h.name));
    if let Some(p) = var("ansible_port") {
        node.port = p
            .parse()
            .with_context(|| format!("host {}: ansible_port {p:?} is not a port", h.name))?;
        node.port_given = true;
    }
    if let Some(u) = var("ansible_user") {
        node.user = u.to_string();
        node.user_given = true;
    }
    node.sudo = matches!(var("ansible_become"), Some("true" | "True" | "yes" | "1"));
    node.identity = var("ansible_ssh_private_key_file").map(PathBuf::from);
    node.jump = var("ansible_ssh_common_args").and_then(jump_of);
    let tags: Vec<String> = h.groups.iter().cloned().collect();
    if let Some(t) = tags.iter().find(|t| !crate::inventory::nodes_valid_name(t)) {
        bail!(
            "group {t:?} of host {} is not a tag name: nothing was imported",
            h.name
        );
    }
    Ok((node, tags))
}

/// The jump hosts `-J HOSTS` or `-o ProxyJump=HOSTS` names in ssh's arguments.
fn jump_of(args: &str) -> Option<String> {
    let words: Vec<&str> = args.split_whitespace().collect();
    words.iter().enumerate().find_map(|(i, w)| {
        let next = || words.get(i + 1).map(|s| s.to_string());
        match *w {
            "-J" => next(),
            "-o" => next().and_then(|o| o.strip_prefix("ProxyJump=").map(str::to_string)),
            w => w
                .strip_prefix("-J")
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        }
    })
}

/// What differs between the inventory's node and the file's, in words.
fn differences(had: &Node, tags: &[String], want: &Node, new_tags: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut cmp = |what: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{what} {a} -> {b}"));
        }
    };
    cmp("address", had.address.clone(), want.address.clone());
    cmp("port", had.port.to_string(), want.port.to_string());
    cmp("user", had.user.clone(), want.user.clone());
    cmp("sudo", had.sudo.to_string(), want.sudo.to_string());
    cmp(
        "jump",
        format!("{:?}", had.jump),
        format!("{:?}", want.jump),
    );
    cmp(
        "identity",
        format!("{:?}", had.identity),
        format!("{:?}", want.identity),
    );
    let missing: Vec<&String> = new_tags.iter().filter(|t| !tags.contains(t)).collect();
    if !missing.is_empty() {
        out.push(format!(
            "tags + {}",
            missing
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    out
}

pub(crate) fn import(inv: &Inventory, a: ImportArgs, ctx: &Context) -> Result<u8> {
    if ctx.json {
        bail!("node import answers in text only for now: run it without --json");
    }
    let file = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file).with_context(|| format!("reading {file}"))?;
    let hosts = match a.from {
        From::Ansible => parse_ini(&text, &file)?,
        From::SshConfig => ssh_hosts(&text),
    };
    let mut plan = Vec::new();
    let mut unknown: BTreeMap<&str, usize> = BTreeMap::new();
    for h in &hosts {
        for k in h.vars.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
            *unknown.entry(k).or_default() += 1;
        }
        let (node, tags) = node_of(h)?;
        let before = match inv.node_opt(&node.name)? {
            Some(had) => Some((inv.tags_of(&had.name)?, had)),
            None => None,
        };
        plan.push((node, tags, before));
    }
    let (added, changed, same) = say(&plan);
    out!("{added} to add, {changed} changed, {same} as the inventory has them");
    for (k, n) in &unknown {
        out!(
            "  not read: {k} ({n} host{})",
            if *n == 1 { "" } else { "s" }
        );
    }
    if changed > 0 && !a.replace && !a.dry_run {
        bail!(
            "{changed} node(s) the inventory has with other values: nothing was imported; say --replace to take the file's"
        );
    }
    if a.dry_run {
        out!("(dry run: nothing stored)");
        return Ok(exit::OK);
    }
    if added + changed == 0 {
        out!("nothing to import: the inventory has every host as the file says");
        return Ok(exit::OK);
    }
    store(inv, &plan)?;
    out!(
        "imported; host keys are not: pin each node's (`mesh node trust NAME --fingerprint SHA256:…`, or `mesh node trust NAME` to be shown the key and asked)"
    );
    Ok(exit::OK)
}
