//! SSH: one verified, authenticated connection per node, and commands run over it with data on
//! their stdin.
//!
//! Host keys are always verified: against the key pinned in the inventory, else the operator's
//! `~/.ssh/known_hosts`. An unknown key is refused with its fingerprint and the command that pins
//! it; a changed key is refused naming both fingerprints.

mod auth;
mod hostkey;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::ChannelMsg;
use russh::client::{self, Handle};
use russh::keys::PublicKey;

pub use auth::{Credentials, default_identities, load_identity};
use hostkey::Checker;
pub use hostkey::{fingerprint, parse_public_key};

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
    #[error("{node}: unreachable: no answer from {address} within {seconds}s")]
    Timeout {
        node: String,
        address: String,
        seconds: u64,
    },
    #[error(
        "{node}: host key {seen} is not pinned and not in known_hosts; check it, then `mesh node trust {node} --fingerprint {seen}`"
    )]
    NotPinned { node: String, seen: String },
    #[error(
        "{node}: HOST KEY CHANGED: pinned {pinned}, the machine offered {seen}; refused. If the machine was rebuilt, check the new key and pin it with `mesh node trust {node}`"
    )]
    KeyChanged {
        node: String,
        pinned: String,
        seen: String,
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
    #[error("{node}: ssh: {source}")]
    Protocol { node: String, source: russh::Error },
}

/// Where and how to reach one node.
#[derive(Debug, Clone)]
pub struct Target {
    pub node: String,
    pub address: String,
    pub port: u16,
    pub user: String,
    /// The pinned host key, if any.
    pub pinned: Option<PublicKey>,
}

/// What a remote command gave back.
#[derive(Debug, Clone)]
pub struct Output {
    /// The exit status; `None` when it was killed by a signal or the channel closed first.
    pub status: Option<u32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// An open, verified, authenticated connection.
pub struct Session {
    node: String,
    handle: Handle<Checker>,
}

/// Connects, verifies the host key and authenticates, all within `timeout` (the command that
/// follows has no time limit: keepalives notice a machine that goes away).
pub async fn connect(
    target: &Target,
    credentials: &Credentials,
    timeout: Duration,
) -> Result<Session, SshError> {
    let address = format!("{}:{}", target.address, target.port);
    let timed_out = || SshError::Timeout {
        node: target.node.clone(),
        address: address.clone(),
        seconds: timeout.as_secs(),
    };
    let seen = Arc::new(Mutex::new(None));
    let handle = tokio::time::timeout(timeout, open(target, seen.clone()))
        .await
        .map_err(|_| timed_out())?;
    let handle = match handle {
        Ok(h) => h,
        Err(Failure::Ssh(e)) => return Err(hostkey::explain(target, &seen, e)),
        Err(Failure::Other(e)) => return Err(e),
    };
    let mut session = Session {
        node: target.node.clone(),
        handle,
    };
    tokio::time::timeout(
        timeout,
        auth::authenticate(&mut session.handle, target, credentials),
    )
    .await
    .map_err(|_| timed_out())??;
    Ok(session)
}

enum Failure {
    Ssh(russh::Error),
    Other(SshError),
}

/// How often a refused connection is tried, and the pause between tries.
const REFUSED_ATTEMPTS: u32 = 3;
const REFUSED_PAUSE: Duration = Duration::from_millis(500);

async fn open(
    target: &Target,
    seen: Arc<Mutex<Option<PublicKey>>>,
) -> Result<Handle<Checker>, Failure> {
    let address = format!("{}:{}", target.address, target.port);
    let addrs: Vec<_> = tokio::net::lookup_host((target.address.as_str(), target.port))
        .await
        .map_err(|e| {
            Failure::Other(SshError::Resolve {
                node: target.node.clone(),
                address: target.address.clone(),
                reason: e.to_string(),
            })
        })?
        .collect();
    let mut last = String::from("no address");
    let mut stream = None;
    // sshd closes its listening socket while it re-executes itself on a reload (which a push may
    // just have caused), so a refused connection is tried again, as OpenSSH's ConnectionAttempts.
    'attempts: for attempt in 0..REFUSED_ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(REFUSED_PAUSE).await;
        }
        let mut refused = false;
        for a in &addrs {
            match tokio::net::TcpStream::connect(a).await {
                Ok(s) => {
                    stream = Some(s);
                    break 'attempts;
                }
                Err(e) => {
                    refused |= e.kind() == std::io::ErrorKind::ConnectionRefused;
                    last = e.to_string();
                }
            }
        }
        if !refused {
            break;
        }
    }
    let stream = stream.ok_or_else(|| {
        Failure::Other(SshError::Unreachable {
            node: target.node.clone(),
            address: address.clone(),
            reason: last,
        })
    })?;
    let _ = stream.set_nodelay(true);
    let mut config = client::Config {
        // A helper may work quietly for a while; keepalives tell a dead machine from a busy one.
        keepalive_interval: Some(Duration::from_secs(15)),
        keepalive_max: 3,
        inactivity_timeout: None,
        ..Default::default()
    };
    if let Some(pinned) = &target.pinned {
        config.preferred.key = hostkey::algorithms_for(pinned).into();
    }
    let checker = Checker {
        pinned: target.pinned.clone(),
        host: target.address.clone(),
        port: target.port,
        seen,
    };
    client::connect_stream(Arc::new(config), stream, checker)
        .await
        .map_err(Failure::Ssh)
}

impl Session {
    /// Runs `command` with `stdin` as its input and waits for it to end.
    ///
    /// `command` is passed to the remote user's shell: callers build it only from constants and
    /// values they have checked (a hex digest), never from operator or module text.
    pub async fn exec(&self, command: &str, stdin: &[u8]) -> Result<Output, SshError> {
        let protocol = |source| SshError::Protocol {
            node: self.node.clone(),
            source,
        };
        let mut channel = self.handle.channel_open_session().await.map_err(protocol)?;
        channel.exec(true, command).await.map_err(protocol)?;
        if !stdin.is_empty() {
            channel.data(stdin).await.map_err(protocol)?;
        }
        channel.eof().await.map_err(protocol)?;
        let mut out = Output {
            status: None,
            stdout: Vec::new(),
            stderr: Vec::new(),
        };
        // Data can arrive after the exit status: read until the channel closes.
        while let Some(msg) = channel.wait().await {
            match msg {
                ChannelMsg::Data { data } => out.stdout.extend_from_slice(&data),
                ChannelMsg::ExtendedData { data, ext: 1 } => out.stderr.extend_from_slice(&data),
                ChannelMsg::ExitStatus { exit_status } => out.status = Some(exit_status),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Closes the connection politely.
    pub async fn close(self) {
        let _ = self
            .handle
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }
}

/// Connects only far enough to learn the host key the machine offers (for `node trust`).
pub async fn scan_host_key(target: &Target, timeout: Duration) -> Result<PublicKey, SshError> {
    let address = format!("{}:{}", target.address, target.port);
    let seen = Arc::new(Mutex::new(None));
    let mut unpinned = target.clone();
    unpinned.pinned = None;
    let result = tokio::time::timeout(timeout, open(&unpinned, seen.clone())).await;
    if let Some(key) = seen.lock().ok().and_then(|s| s.clone()) {
        return Ok(key);
    }
    match result {
        Err(_) => Err(SshError::Timeout {
            node: target.node.clone(),
            address,
            seconds: timeout.as_secs(),
        }),
        Ok(Err(Failure::Other(e))) => Err(e),
        Ok(Err(Failure::Ssh(source))) => Err(SshError::Protocol {
            node: target.node.clone(),
            source,
        }),
        Ok(Ok(_)) => Err(SshError::Protocol {
            node: target.node.clone(),
            source: russh::Error::UnknownKey,
        }),
    }
}
