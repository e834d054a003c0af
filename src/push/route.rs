//! How each node is reached: what the inventory says of it, then OpenSSH's configuration for
//! its address (HostName, Port, User, IdentityFile, IdentitiesOnly, ProxyJump, ConnectTimeout,
//! ServerAliveInterval), then the defaults. A port, user, identity or jump given to `node add` or
//! `node set` wins over the configuration, as `ssh`'s command line wins over its files.
//!
//! A jump host that is a node (named by its node name, or by its address) is reached as that
//! node, pinned key included; any other is looked up in the configuration and checked against
//! known_hosts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::inventory::Node;
use crate::ssh::config::SshConfig;
use crate::ssh::{self, Credentials, SshError, Target};

use super::PushError;

/// Everything resolved before a fan-out: each node's target, and what connections rely on.
#[derive(Default, Clone)]
pub struct Reach {
    pub targets: BTreeMap<String, Target>,
    pub credentials: Credentials,
}

/// More jump hosts than this in front of one machine is taken for a loop.
const MAX_DEPTH: usize = 8;

/// How to reach `node`; `nodes` is the inventory (for jump hosts that are nodes).
pub fn target(node: &Node, nodes: &[Node], config: &SshConfig) -> Result<Target, PushError> {
    resolve(node, nodes, config, 0)
}

fn resolve(
    node: &Node,
    nodes: &[Node],
    config: &SshConfig,
    depth: usize,
) -> Result<Target, PushError> {
    let cfg = config
        .lookup(&node.address, &node.user)
        .map_err(|e| unusable(&node.name, e.to_string()))?;
    let pinned = node
        .host_key
        .as_deref()
        .map(ssh::parse_public_key)
        .transpose()
        .map_err(|reason| PushError::PinnedKey {
            node: node.name.clone(),
            reason,
        })?;
    let port = match (node.port_given, cfg.port) {
        (false, Some(p)) => p,
        _ => node.port,
    };
    let user = match (node.user_given, &cfg.user) {
        (false, Some(u)) => u.clone(),
        _ => node.user.clone(),
    };
    let address = cfg
        .host_name
        .clone()
        .unwrap_or_else(|| node.address.clone());
    let mut target = Target::direct(&node.name, &address, port, &user);
    target.pinned = pinned;
    target.identities = match &node.identity {
        Some(own) => vec![own.clone()],
        None => identities(cfg.identity_files),
    };
    target.identities_only = cfg.identities_only.unwrap_or(false);
    target.connect_timeout = cfg.connect_timeout;
    target.keepalive = cfg.server_alive_interval;
    let chain = match &node.jump {
        Some(own) => split(own),
        None => cfg.proxy_jump.unwrap_or_default(),
    };
    target.jumps = hops(&node.name, &chain, nodes, config, depth)?;
    Ok(target)
}

/// The configuration's key files, else OpenSSH's defaults.
fn identities(configured: Vec<PathBuf>) -> Vec<PathBuf> {
    if configured.is_empty() {
        ssh::default_identities()
    } else {
        configured
    }
}

/// A jump list as written: `a,b`.
pub fn split(chain: &str) -> Vec<String> {
    chain
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .collect()
}

/// The hops in front of `owner`, first first. The first hop's own jump hosts come before it;
/// later hops are reached through those before them, as OpenSSH chains `-J a,b`.
fn hops(
    owner: &str,
    chain: &[String],
    nodes: &[Node],
    config: &SshConfig,
    depth: usize,
) -> Result<Vec<Target>, PushError> {
    if chain.is_empty() {
        return Ok(Vec::new());
    }
    if depth >= MAX_DEPTH {
        return Err(unusable(
            owner,
            format!(
                "more than {MAX_DEPTH} jump hosts in a row: do its jump hosts lead back to each other?"
            ),
        ));
    }
    let mut out = Vec::new();
    for (i, spec) in chain.iter().enumerate() {
        let hop = parse_hop(spec).map_err(|reason| unusable(owner, reason))?;
        let as_node = nodes.iter().find(|n| {
            n.name == hop.host || (n.address == hop.host && hop.port.is_none_or(|p| p == n.port))
        });
        let mut target = match as_node {
            Some(n) => resolve(n, nodes, config, depth + 1)?,
            None => outsider(owner, &hop, nodes, config, depth)?,
        };
        if let Some(user) = &hop.user {
            target.user = user.clone();
        }
        if let Some(port) = hop.port {
            target.port = port;
        }
        let before = std::mem::take(&mut target.jumps);
        if i == 0 {
            out.extend(before);
        }
        out.push(target);
    }
    Ok(out)
}

/// A jump host that is not a node: the configuration says how to reach it.
fn outsider(
    owner: &str,
    hop: &Hop,
    nodes: &[Node],
    config: &SshConfig,
    depth: usize,
) -> Result<Target, PushError> {
    let local = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let cfg = config
        .lookup(&hop.host, hop.user.as_deref().unwrap_or(&local))
        .map_err(|e| unusable(owner, e.to_string()))?;
    let address = cfg.host_name.clone().unwrap_or_else(|| hop.host.clone());
    let user = cfg.user.clone().unwrap_or(local);
    let mut target = Target::direct(&hop.host, &address, cfg.port.unwrap_or(22), &user);
    target.is_node = false;
    target.identities = identities(cfg.identity_files);
    target.identities_only = cfg.identities_only.unwrap_or(false);
    target.connect_timeout = cfg.connect_timeout;
    target.keepalive = cfg.server_alive_interval;
    let chain = cfg.proxy_jump.unwrap_or_default();
    target.jumps = hops(owner, &chain, nodes, config, depth + 1)?;
    Ok(target)
}

#[derive(Debug, PartialEq)]
struct Hop {
    user: Option<String>,
    host: String,
    port: Option<u16>,
}

/// `[user@]host[:port]`, the host possibly an IPv6 address in brackets.
fn parse_hop(spec: &str) -> Result<Hop, String> {
    let bad = |why: &str| format!("jump host {spec:?}: {why}; write it as [USER@]HOST[:PORT]");
    let (user, rest) = match spec.rsplit_once('@') {
        Some((u, r)) => (Some(u.to_string()), r),
        None => (None, spec),
    };
    let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or_else(|| bad("a '[' is not closed"))?;
        (host, after.strip_prefix(':'))
    } else if rest.matches(':').count() == 1 {
        let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
        (h, Some(p))
    } else {
        (rest, None)
    };
    let port = port
        .map(|p| {
            p.parse::<u16>()
                .map_err(|_| bad("the port is not a number"))
        })
        .transpose()?;
    if host.is_empty() || host.starts_with('-') || user.as_deref().is_some_and(str::is_empty) {
        return Err(bad("no host"));
    }
    Ok(Hop {
        user,
        host: host.to_string(),
        port,
    })
}

/// Checks a `--jump` value of the node `owner` as the inventory stores it: every hop a login name
/// (if any) and a host name or address, and never `owner` itself (it would be reached through
/// itself).
pub fn check_jump(owner: &str, chain: &str) -> Result<(), String> {
    let hops = split(chain);
    if hops.is_empty() {
        return Err("names no host".into());
    }
    for spec in &hops {
        let hop = parse_hop(spec)?;
        if hop
            .user
            .as_deref()
            .is_some_and(|u| !crate::inventory::valid_user(u))
        {
            return Err(format!(
                "jump host {spec:?}: the user is not a login name (lower-case letters, digits, '_' and '-')"
            ));
        }
        if !crate::inventory::valid_address(&hop.host) {
            return Err(format!(
                "jump host {spec:?}: {:?} is not a host name or an IP address",
                hop.host
            ));
        }
        if hop.host == owner {
            return Err(format!(
                "jump host {spec:?} is {owner} itself: a node cannot be reached through itself"
            ));
        }
    }
    Ok(())
}

fn unusable(node: &str, reason: String) -> PushError {
    PushError::Ssh(SshError::Config {
        node: node.to_string(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn hops_are_parsed_in_every_form() {
        let hop = |u: Option<&str>, h: &str, p: Option<u16>| Hop {
            user: u.map(str::to_string),
            host: h.into(),
            port: p,
        };
        assert_eq!(parse_hop("gw").unwrap(), hop(None, "gw", None));
        assert_eq!(
            parse_hop("ops@gw:2200").unwrap(),
            hop(Some("ops"), "gw", Some(2200))
        );
        assert_eq!(parse_hop("[::1]:22").unwrap(), hop(None, "::1", Some(22)));
        assert_eq!(parse_hop("fe80::1").unwrap(), hop(None, "fe80::1", None));
        assert!(parse_hop("gw:port").is_err() && parse_hop("@gw").is_err());
        assert!(check_jump("n", " , ").is_err() && check_jump("n", "a,b:1").is_ok());
        for bad in [
            "a\nb\u{1b}[2J@node1",
            "-oProxyCommand=x@node1",
            "n",
            "ops@n:22",
        ] {
            assert!(check_jump("n", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_inventory_wins_and_the_configuration_fills_in_with_jumps_as_nodes() {
        let mut config = SshConfig::default();
        config
            .add(
                Path::new("c"),
                "Host web\n HostName 192.0.2.5\n Port 2222\n User ops\n ProxyJump gate,bastion:2200\n\
                 Host gate\n HostName 192.0.2.1\n ProxyJump outer\n Host bastion\n ProxyJump never\n",
            )
            .unwrap();
        let bastion = Node {
            port: 22,
            ..Node::new("bastion", "192.0.2.9")
        };
        let web = Node {
            port_given: false,
            user_given: false,
            ..Node::new("web", "web")
        };
        let t = target(&web, std::slice::from_ref(&bastion), &config).unwrap();
        assert_eq!(
            (t.address.as_str(), t.port, t.user.as_str()),
            ("192.0.2.5", 2222, "ops")
        );
        let route: Vec<(&str, &str, u16, bool)> = t
            .jumps
            .iter()
            .map(|h| (h.node.as_str(), h.address.as_str(), h.port, h.is_node))
            .collect();
        assert_eq!(
            route,
            vec![
                ("outer", "outer", 22, false),
                ("gate", "192.0.2.1", 22, false),
                ("bastion", "192.0.2.9", 2200, true),
            ]
        );
        let explicit = Node {
            port: 2020,
            jump: Some("root@bastion".into()),
            ..Node::new("web", "web")
        };
        let t = target(&explicit, &[bastion], &config).unwrap();
        assert_eq!((t.port, t.user.as_str(), t.jumps.len()), (2020, "root", 1));
    }

    #[test]
    fn jump_hosts_that_lead_back_to_each_other_are_refused() {
        let mut config = SshConfig::default();
        config
            .add(
                Path::new("c"),
                "Host a\n ProxyJump b\nHost b\n ProxyJump a\n",
            )
            .unwrap();
        let e = target(&Node::new("n", "a"), &[], &config).unwrap_err();
        assert_eq!(e.kind(), "config");
        assert!(e.to_string().contains("lead back"), "{e}");
    }
}
