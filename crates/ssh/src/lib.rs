//! SSH: one verified, authenticated connection per node, and commands run over it with data on
//! their stdin.
//!
//! Host keys are always verified, a jump host's as a node's: against the key pinned in the
//! inventory, else the operator's known_hosts files. An unknown key is refused with its
//! fingerprint and the command that pins it; a changed key is refused naming both fingerprints.
//! Where a node is and how to log in come from the inventory and OpenSSH's configuration
//! ([`config`]), resolved before any connection.

mod auth;
pub mod config;
mod exec;
pub mod files;
mod hops;
mod hostkey;
mod jump;
pub mod proxy_jump;
pub use jump::KEEPALIVE;
pub mod known_hosts;
mod local;
mod output;

use std::path::PathBuf;
use std::time::Duration;

use russh::client::Handle;
use russh::keys::PublicKey;

pub use auth::{Credentials, default_identities, load_identity};
pub use hops::Hops;
use hostkey::Checker;
pub use hostkey::{PublicKeyError, fingerprint, parse_public_key};
pub use local::{Local, local_home, local_user};
pub use output::{Bound, Output, size};

/// Why talking to a node failed. Every variant names the node.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    #[error("{node}: unreachable: cannot resolve {address}: {reason}")]
    Resolve {
        node: String,
        address: String,
        reason: String,
    },
    #[error("{node}: unreachable: connecting to {address} failed: {reason}")]
    Unreachable {
        node: String,
        address: String,
        reason: String,
    },
    #[error(
        "{node}: unreachable: no answer from {address} within {seconds}s{}",
        via.as_ref().map(|hop| format!(" through jump host {hop}")).unwrap_or_default()
    )]
    Timeout {
        node: String,
        address: String,
        seconds: u64,
        /// The jump host it was reached through: the silence may be the hop's.
        via: Option<String>,
    },
    #[error(
        "{node}: host key {seen} is not pinned and not in known_hosts; check it, then `mesh node trust {node} --fingerprint {seen}`"
    )]
    NotPinned { node: String, seen: String },
    #[error(
        "{node}: it offers the host key {seen}, which {other} has pinned: {node} is {other}'s machine, and one machine is one node; remove one of them (`mesh node remove {node}`)"
    )]
    PinnedElsewhere {
        node: String,
        other: String,
        seen: String,
    },
    #[error(
        "{node}: host key {seen} of {address} is not in known_hosts; check it, then add it there (ssh-keyscan) or add the machine as a node and `mesh node trust` it"
    )]
    NotKnown {
        node: String,
        address: String,
        seen: String,
    },
    #[error(
        "{node}: host key {seen} is not pinned and not in known_hosts; the ssh configuration's {line} would have ssh accept it unchecked, mesh does not: check it, then {}",
        if *is_node { format!("`mesh node trust {node} --fingerprint {seen}`") } else {
            "add it to known_hosts (ssh-keyscan)".into()
        }
    )]
    UnknownNotAccepted {
        node: String,
        seen: String,
        line: String,
        is_node: bool,
    },
    #[error(
        "{node}: HOST KEY CHANGED (REMOTE HOST IDENTIFICATION HAS CHANGED): {recorded_in} has {pinned}, the machine offered {seen}; refused. If the machine was rebuilt, check the new key, then {}",
        if *is_node { format!("pin it with `mesh node trust {node}`") } else {
            "put it in place of that known_hosts line (`ssh-keygen -R HOST` removes the old one)".into()
        }
    )]
    KeyChanged {
        node: String,
        /// Where the key that was expected is written: the inventory, or a known_hosts line.
        recorded_in: String,
        pinned: String,
        seen: String,
        /// Whether `mesh node trust` records a new key; known_hosts does for another machine
        /// (a jump host that is no node).
        is_node: bool,
    },
    #[error(
        "{node}: host key {seen} is marked @revoked in {place}; refused: a revoked key is never trusted or pinned"
    )]
    Revoked {
        node: String,
        seen: String,
        place: String,
    },
    #[error(
        "{node}: {user}@{address} refused every key offered ({tried}); add the node's key with --identity or load it into ssh-agent"
    )]
    Auth {
        node: String,
        user: String,
        address: String,
        tried: String,
    },
    #[error("{node}: the identity file {}: {reason}", path.display())]
    Identity {
        node: String,
        path: PathBuf,
        reason: String,
    },
    #[error("{node}: how to reach it cannot be worked out: {reason}")]
    Config { node: String, reason: String },
    #[error("{node}: through jump host {hop}: {source}")]
    Jump {
        node: String,
        hop: String,
        source: Box<SshError>,
    },
    #[error("{node}: ssh: {source}")]
    Protocol { node: String, source: russh::Error },
    /// A jump host's connection failed for an earlier node of this run: not tried again until
    /// the next run, so a dead bastion costs one connect timeout, not one per node behind it.
    #[error("{message} (for an earlier node of this run; not tried again until the next run)")]
    Earlier {
        /// The first failure's kind.
        kind: &'static str,
        /// The first failure, as it said.
        message: String,
    },
    #[error(
        "{node}: {what} was more than {} on {stream}, the most mesh reads of it; it stopped \
         reading there, and nothing of it was used",
        size(*bound)
    )]
    TooMuch {
        node: String,
        what: &'static str,
        stream: &'static str,
        bound: usize,
    },
}

impl SshError {
    /// A short word for the kind of failure, for summaries and `--json`; a jump host's failure
    /// is of the kind it is.
    pub fn kind(&self) -> &'static str {
        match self {
            SshError::Resolve { .. } | SshError::Unreachable { .. } | SshError::Timeout { .. } => {
                "unreachable"
            }
            SshError::NotPinned { .. }
            | SshError::PinnedElsewhere { .. }
            | SshError::NotKnown { .. }
            | SshError::UnknownNotAccepted { .. }
            | SshError::KeyChanged { .. }
            | SshError::Revoked { .. } => "host-key",
            SshError::Auth { .. } | SshError::Identity { .. } => "auth",
            SshError::Config { .. } => "config",
            SshError::Jump { source, .. } => source.kind(),
            SshError::Earlier { kind, .. } => kind,
            SshError::Protocol { .. } => "ssh",
            // what answered was the helper, or what stands in its place
            SshError::TooMuch { .. } => "helper",
        }
    }
}

/// Where and how to reach one machine: a node, or a jump host on the way to one.
#[derive(Debug, Clone)]
pub struct Target {
    /// The node, or the jump host as written, for messages.
    pub node: String,
    /// Where to connect (after the ssh configuration's HostName).
    pub address: String,
    pub port: u16,
    pub user: String,
    /// The pinned host key, if any; otherwise known_hosts decides.
    pub pinned: Option<PublicKey>,
    /// Whether this is an inventory node (a refused unknown key then says `mesh node trust`).
    pub is_node: bool,
    /// Every node's pinned host key (fingerprint) and that node: a node that offers a key
    /// another node has pinned is that node's machine, refused (one machine is one node).
    pub pinned_by: std::sync::Arc<std::collections::BTreeMap<String, String>>,
    /// Key files to offer, in order (keys loaded into [`Credentials`]).
    pub identities: Vec<PathBuf>,
    /// Offer only those files, not ssh-agent's keys (IdentitiesOnly).
    pub identities_only: bool,
    /// Jump hosts, first hop first, each reached through those before it.
    pub jumps: Vec<Target>,
    /// ConnectTimeout from the ssh configuration, over the caller's limit.
    pub connect_timeout: Option<Duration>,
    /// ServerAliveInterval from the ssh configuration; zero turns keepalives off.
    pub keepalive: Option<Duration>,
    /// The known_hosts files the configuration names for this machine (UserKnownHostsFile,
    /// GlobalKnownHostsFile), read; `None`: the operator's usual ones in [`Credentials`].
    pub known_hosts: Option<std::sync::Arc<known_hosts::KnownHosts>>,
    /// HostKeyAlias: the name known_hosts is searched for instead of the address.
    pub host_key_alias: Option<String>,
    /// The known_hosts files read for this machine, each with what named it (`file:line` of
    /// the ssh configuration, or `default`), for `node show`.
    pub known_hosts_files: Vec<(PathBuf, String)>,
    /// A StrictHostKeyChecking that would accept an unknown key (`no`, `accept-new` …), as
    /// `StrictHostKeyChecking VALUE (file:line)`, where no key is pinned: mesh still refuses
    /// an unknown key, and says which line it did not follow.
    pub accepts_unknown: Option<String>,
}

impl Target {
    /// A node reached directly with the defaults: no key files, no jump.
    pub fn direct(node: &str, address: &str, port: u16, user: &str) -> Target {
        Target {
            node: node.to_string(),
            address: address.to_string(),
            port,
            user: user.to_string(),
            pinned: None,
            is_node: true,
            pinned_by: std::sync::Arc::default(),
            identities: Vec::new(),
            identities_only: false,
            jumps: Vec::new(),
            connect_timeout: None,
            keepalive: None,
            known_hosts: None,
            host_key_alias: None,
            known_hosts_files: Vec::new(),
            accepts_unknown: None,
        }
    }

    /// The known_hosts entries this machine's key is checked against.
    pub fn known<'a>(&'a self, credentials: &'a Credentials) -> &'a known_hosts::KnownHosts {
        self.known_hosts
            .as_deref()
            .unwrap_or(&credentials.known_hosts)
    }

    /// The name and port known_hosts is searched for: HostKeyAlias alone (ssh then adds no
    /// port), else the address and port.
    pub fn key_name(&self) -> (&str, u16) {
        match &self.host_key_alias {
            Some(alias) => (alias, 22),
            None => (&self.address, self.port),
        }
    }
}

/// `-v`: each connection says what it reached and how (see [`jump`]).
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns `-v`'s line per connection on (on stderr).
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}

/// An open, verified, authenticated connection.
pub struct Session {
    node: String,
    handle: Handle<Checker>,
    /// The jump hosts' connections, kept open as long as this one runs through them.
    _hops: Vec<std::sync::Arc<Handle<Checker>>>,
}

/// Connects (through every jump host), verifies each host key and authenticates, each machine
/// within `timeout` (the command that follows has no time limit: keepalives notice a machine
/// that goes away).
pub async fn connect(
    target: &Target,
    credentials: &Credentials,
    timeout: Duration,
) -> Result<Session, SshError> {
    connect_via(target, credentials, None, timeout).await
}

/// As [`connect`], with the jump hosts' connections taken from `hops` where the run has one
/// open already (one login per bastion for the whole run).
pub async fn connect_via(
    target: &Target,
    credentials: &Credentials,
    hops: Option<&Hops>,
    timeout: Duration,
) -> Result<Session, SshError> {
    let chain = hops::through(target, credentials, hops, timeout).await?;
    let via = chain
        .last()
        .map(|h| &**h)
        .zip(target.jumps.last().map(|hop| hop.node.as_str()));
    let handle = match jump::reach(via, target, credentials, timeout).await {
        Ok(handle) => handle,
        Err(e @ SshError::Timeout { .. }) => {
            if let (Some(hops), Some(last)) = (hops, chain.last()) {
                hops.forget(last).await;
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let hops = chain;
    Ok(Session {
        node: target.node.clone(),
        handle,
        _hops: hops,
    })
}

impl Session {
    /// Closes the connection politely.
    pub async fn close(self) {
        let _ = self
            .handle
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }
}

/// Connects only far enough to learn the host key the machine offers (for `node trust`); jump
/// hosts on the way are connected to fully, their keys checked. With `want` (a fingerprint), a
/// machine that offers another key first is asked for each other kind in turn: the key with that
/// fingerprint is found whichever kind it is and whatever known_hosts lists first (an operator
/// pins the ed25519 key that sealed secrets need by its fingerprint). A key known_hosts marks
/// `@revoked` is refused, never handed back to be pinned.
pub async fn scan_host_key(
    target: &Target,
    credentials: &Credentials,
    timeout: Duration,
    want: Option<&str>,
) -> Result<PublicKey, SshError> {
    let hops = hops::through(target, credentials, None, timeout).await?;
    let via = hops
        .last()
        .map(|h| &**h)
        .zip(target.jumps.last().map(|hop| hop.node.as_str()));
    let mut key = jump::scan(via, target, credentials, timeout, None).await?;
    if let Some(want) = want.filter(|w| *w != fingerprint(&key)) {
        for kind in hostkey::kinds_other_than(&key) {
            // a kind the machine lacks fails its handshake: it is only not the one
            if let Ok(other) = jump::scan(via, target, credentials, timeout, Some(&kind)).await
                && fingerprint(&other) == want
            {
                key = other;
                break;
            }
        }
    }
    let (name, port) = target.key_name();
    if let known_hosts::Verdict::Revoked { place } =
        target.known(credentials).check(name, port, &key)
    {
        return Err(SshError::Revoked {
            node: target.node.clone(),
            seen: fingerprint(&key),
            place,
        });
    }
    Ok(key)
}
