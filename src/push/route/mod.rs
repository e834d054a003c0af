//! How each node is reached: what the inventory says of it, then OpenSSH's configuration for
//! its address (HostName, Port, User, IdentityFile, IdentitiesOnly, ProxyJump, ConnectTimeout,
//! ServerAliveInterval), then the defaults. A port, user, identity or jump given to `node add` or
//! `node set` wins over the configuration, as `ssh`'s command line wins over its files.
//!
//! A jump host that is a node (named by its node name, or by its address) is reached as that
//! node, pinned key included; any other is looked up in the configuration and checked against
//! known_hosts.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use crate::inventory::Node;
use crate::ssh::config::{HostConfig, SshConfig, Tokens, Written};
use crate::ssh::{self, Credentials, SshError, Target};

use super::PushError;
pub use crate::ssh::proxy_jump::{Hop, check_jump, is_direct, parse_hop, split};

/// Everything resolved before a fan-out: each node's target, and what connections rely on.
#[derive(Default, Clone)]
pub struct Reach {
    pub targets: BTreeMap<String, Target>,
    pub credentials: Credentials,
    /// The jump hosts' connections, opened once for the run.
    pub hops: ssh::Hops,
}

/// More jump hosts than this, each in front of the next, is taken for a loop.
const MAX_DEPTH: usize = 8;
/// More jump hosts than this on the way to one machine is refused: no real route has that many,
/// and a configuration written to multiply them must not cost more than this.
const MAX_HOPS: usize = 32;

/// How to reach `node`; `nodes` is the inventory (for jump hosts that are nodes).
pub fn target(node: &Node, nodes: &[Node], config: &SshConfig) -> Result<Target, PushError> {
    let mut routes = Routes {
        owner: &node.name,
        nodes,
        config,
        seen: HashMap::new(),
    };
    let (mut target, chain) = routes.node(node, &Hop::default())?;
    target.jumps = routes.route(&chain, 0)?;
    Ok(target)
}

/// Where a push reaches each node under an ssh configuration, as its own resolver works it out:
/// what the inventory asks to refuse two nodes on one machine.
pub struct BySsh<'a>(pub &'a SshConfig);

impl crate::inventory::Machines for BySsh<'_> {
    fn machine_of(&self, node: &Node) -> crate::inventory::NodeMachine {
        // a node on this machine is its root directory: two nodes on one are one machine
        if let Some(dir) = &node.local {
            return crate::inventory::NodeMachine {
                host: format!("local:{}", dir.display()),
                port: 0,
            };
        }
        let (host, port) = match target(node, &[], self.0) {
            Ok(t) => (t.address, t.port),
            Err(_) => (node.address.clone(), node.port),
        };
        crate::inventory::NodeMachine {
            host: host.to_ascii_lowercase(),
            port,
        }
    }
}

/// A jump list and where it was written, for a refusal to point at.
#[derive(Clone)]
struct Chain {
    hops: Vec<String>,
    written: String,
    /// A ProxyCommand the configuration gives instead: refused when the route is followed.
    command: Option<Written>,
}

impl Chain {
    /// The jump list the configuration gives.
    fn of(cfg: HostConfig) -> Chain {
        Chain {
            hops: cfg.proxy_jump.unwrap_or_default(),
            written: cfg.proxy_jump_at.unwrap_or_default(),
            command: cfg.proxy_command,
        }
    }
}

/// One node's route being worked out: every distinct jump host is looked up once.
struct Routes<'a> {
    owner: &'a str,
    nodes: &'a [Node],
    config: &'a SshConfig,
    /// Each jump host as written, reached directly, and its own jump list.
    seen: HashMap<String, (Target, Chain)>,
}

impl Routes<'_> {
    /// `node` reached directly (as a jump host, with the user and port `hop` gives), and the
    /// jump list in front of it.
    fn node(&self, node: &Node, hop: &Hop) -> Result<(Target, Chain), PushError> {
        // a user the hop or the inventory gives is ssh's `-l`: `Match user` takes it
        let given = hop
            .user
            .as_deref()
            .or(node.user_given.then_some(node.user.as_str()));
        let cfg = self
            .config
            .lookup_as(&node.address, given)
            .map_err(|e| unusable(self.owner, e.to_string()))?;
        let pinned = node
            .host_key
            .as_deref()
            .map(ssh::parse_public_key)
            .transpose()
            .map_err(|e| PushError::PinnedKey {
                node: node.name.clone(),
                reason: e.to_string(),
            })?;
        let port = match (hop.port, node.port_given, cfg.port) {
            (Some(p), _, _) | (None, false, Some(p)) => p,
            _ => node.port,
        };
        let user = match (&hop.user, node.user_given, &cfg.user) {
            (Some(u), _, _) | (None, false, Some(u)) => u.clone(),
            _ => node.user.clone(),
        };
        let address = cfg
            .host_name
            .clone()
            // lowered as ssh lowers the name it connects to (a HostName is lowered already)
            .unwrap_or_else(|| node.address.to_ascii_lowercase());
        let mut target = Target::direct(&node.name, &address, port, &user);
        // where a key is pinned, the pin decides and StrictHostKeyChecking changes nothing
        if pinned.is_none() {
            target.accepts_unknown = cfg.accepts_unknown();
        }
        target.pinned = pinned;
        target.identities = match &node.identity {
            Some(own) => vec![own.clone()],
            None => self.identities(&cfg, &node.address, &target)?,
        };
        target.identities_only = cfg.identities_only.unwrap_or(false);
        target.connect_timeout = cfg.connect_timeout;
        target.keepalive = cfg.server_alive_interval;
        self.host_keys(&cfg, &node.address, &mut target)?;
        let chain = match &node.jump {
            Some(own) => Chain {
                hops: if is_direct(own) {
                    Vec::new()
                } else {
                    split(own)
                },
                written: format!("node {}'s --jump", node.name),
                command: None,
            },
            None => Chain::of(cfg),
        };
        Ok((target, chain))
    }

    /// The hops in front of a machine whose jump list is `chain`, first first. The first hop's
    /// own jump hosts come before it; a later hop is reached through those before it and its
    /// own ProxyJump is not read, as OpenSSH chains `-J a,b` (`b` is reached as `ssh -J a b`).
    fn route(&mut self, chain: &Chain, depth: usize) -> Result<Vec<Target>, PushError> {
        if let Some(command) = &chain.command {
            return Err(unusable(
                self.owner,
                format!(
                    "{}: ProxyCommand {}: mesh does not run ProxyCommand; use ProxyJump (or `mesh node set {} --jump HOST`)",
                    command.at, command.value, self.owner
                ),
            ));
        }
        let Some((first, rest)) = chain.hops.split_first() else {
            return Ok(Vec::new());
        };
        let refuse = |why: String| unusable(self.owner, format!("{}: {why}", chain.written));
        if depth >= MAX_DEPTH {
            return Err(refuse(format!(
                "more than {MAX_DEPTH} jump hosts in a row: do its jump hosts lead back to each other?"
            )));
        }
        let too_many = || refuse(format!("the route has more than {MAX_HOPS} jump hosts"));
        if chain.hops.len() > MAX_HOPS {
            return Err(too_many());
        }
        let (target, own) = self.hop(first)?;
        let mut out = self.route(&own, depth + 1)?;
        out.push(target);
        for spec in rest {
            out.push(self.hop(spec)?.0);
        }
        if out.len() > MAX_HOPS {
            return Err(too_many());
        }
        Ok(out)
    }

    /// A jump host as written (`[user@]host[:port]`), reached directly, and its own jump list.
    fn hop(&mut self, spec: &str) -> Result<(Target, Chain), PushError> {
        if let Some(seen) = self.seen.get(spec) {
            return Ok(seen.clone());
        }
        let hop = parse_hop(spec).map_err(|e| unusable(self.owner, e.to_string()))?;
        let as_node = self.nodes.iter().find(|n| {
            n.name == hop.host || (n.address == hop.host && hop.port.is_none_or(|p| p == n.port))
        });
        let (target, chain) = match as_node {
            Some(n) => self.node(n, &hop)?,
            None => self.outsider(&hop)?,
        };
        self.seen
            .insert(spec.to_string(), (target.clone(), chain.clone()));
        Ok((target, chain))
    }

    /// The configuration's key files for `target` as it is reached (`alias` as given), else
    /// OpenSSH's defaults.
    fn identities(
        &self,
        cfg: &HostConfig,
        alias: &str,
        target: &Target,
    ) -> Result<Vec<PathBuf>, PushError> {
        if cfg.identity_files.is_empty() {
            return Ok(ssh::default_identities());
        }
        cfg.identities(Tokens {
            alias,
            host: &target.address,
            user: &target.user,
            port: target.port,
        })
        .map_err(|reason| unusable(self.owner, reason.to_string()))
    }

    /// HostKeyAlias and the known_hosts files the configuration names for `target` (`alias`
    /// as given), read now so that one that cannot be is refused before anything connects.
    fn host_keys(
        &self,
        cfg: &HostConfig,
        alias: &str,
        target: &mut Target,
    ) -> Result<(), PushError> {
        target.host_key_alias = cfg.host_key_alias.clone();
        let tokens = Tokens {
            alias,
            host: &target.address,
            user: &target.user,
            port: target.port,
        };
        let (user, global) = cfg
            .known_hosts_files(tokens)
            .map_err(|reason| unusable(self.owner, reason.to_string()))?;
        let (default_user, default_global) = ssh::known_hosts::default_files();
        let given = user.is_some() || global.is_some();
        let named =
            |files: Option<Vec<PathBuf>>, defaults: Vec<PathBuf>, at: Option<&String>| match (
                files, at,
            ) {
                (Some(files), Some(at)) => files.into_iter().map(|f| (f, at.clone())).collect(),
                _ => defaults
                    .into_iter()
                    .map(|f| (f, "default".to_string()))
                    .collect::<Vec<_>>(),
            };
        let mut files = named(user, default_user, cfg.at.get("userknownhostsfile"));
        files.extend(named(
            global,
            default_global,
            cfg.at.get("globalknownhostsfile"),
        ));
        if given {
            let known =
                ssh::known_hosts::KnownHosts::read(files.iter().map(|(f, _)| f)).map_err(|e| {
                    unusable(
                        self.owner,
                        format!("{e} (a known_hosts file the ssh configuration names)"),
                    )
                })?;
            target.known_hosts = Some(std::sync::Arc::new(known));
        }
        target.known_hosts_files = files;
        Ok(())
    }

    /// A jump host that is not a node: the configuration says how to reach it.
    fn outsider(&self, hop: &Hop) -> Result<(Target, Chain), PushError> {
        let cfg = self
            .config
            .lookup_as(&hop.host, hop.user.as_deref())
            .map_err(|e| unusable(self.owner, e.to_string()))?;
        let address = cfg
            .host_name
            .clone()
            .unwrap_or_else(|| hop.host.to_ascii_lowercase());
        // as `ssh -J user@host:port`: what the hop says wins over the configuration
        let user = match hop.user.clone().or_else(|| cfg.user.clone()) {
            Some(user) => user,
            None => ssh::local_user().ok_or_else(|| {
                unusable(
                    self.owner,
                    format!(
                        "jump host {}: no user to log in as: neither the hop nor the ssh configuration names one, and the local user name is unknown (this uid has no passwd entry)",
                        hop.host
                    ),
                )
            })?,
        };
        let port = hop.port.or(cfg.port).unwrap_or(22);
        let mut target = Target::direct(&hop.host, &address, port, &user);
        target.is_node = false;
        target.accepts_unknown = cfg.accepts_unknown();
        target.identities = self.identities(&cfg, &hop.host, &target)?;
        target.identities_only = cfg.identities_only.unwrap_or(false);
        target.connect_timeout = cfg.connect_timeout;
        target.keepalive = cfg.server_alive_interval;
        self.host_keys(&cfg, &hop.host, &mut target)?;
        Ok((target, Chain::of(cfg)))
    }
}

fn unusable(node: &str, reason: String) -> PushError {
    PushError::Ssh(SshError::Config {
        node: node.to_string(),
        reason,
    })
}

#[cfg(test)]
mod tests;
