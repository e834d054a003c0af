//! Reaching one machine: over TCP, or, behind a jump host, over a `direct-tcpip` channel the
//! connection to the jump host before it opens (as OpenSSH's ProxyJump), then the same host key
//! check and authentication either way.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::client::{self, Handle};
use russh::keys::{Algorithm, PublicKey};

use super::hostkey::{self, Checker};
use super::{Credentials, SshError, Target, auth};

/// How often a refused connection is tried, and the pause between tries.
const REFUSED_ATTEMPTS: u32 = 6;
const REFUSED_PAUSE: Duration = Duration::from_millis(500);

/// A helper may work quietly for a while; keepalives tell a dead machine from a busy one.
pub const KEEPALIVE: Duration = Duration::from_secs(15);

enum Failure {
    Ssh(russh::Error),
    Other(SshError),
}

/// Connects to `target` (through `via`, a jump host's connection and name, when it is behind
/// one), verifies its host key and authenticates, within the target's ConnectTimeout or else
/// `timeout`. With `-v` it says so in one line on stderr.
pub(super) async fn reach(
    via: Option<(&Handle<Checker>, &str)>,
    target: &Target,
    credentials: &Credentials,
    timeout: Duration,
) -> Result<Handle<Checker>, SshError> {
    let timeout = target.connect_timeout.unwrap_or(timeout);
    let timed_out = || SshError::Timeout {
        node: target.node.clone(),
        address: format!("{}:{}", target.address, target.port),
        seconds: timeout.as_secs(),
        via: via.map(|v| v.1.to_string()),
    };
    let seen = Arc::new(Mutex::new(None));
    let handle = tokio::time::timeout(
        timeout,
        handshake(via.map(|v| v.0), target, credentials, seen.clone(), None),
    )
    .await
    .map_err(|_| timed_out())?;
    let mut handle = match handle {
        Ok(h) => h,
        Err(Failure::Ssh(e)) => {
            return Err(hostkey::explain(
                target,
                target.known(credentials),
                &seen,
                e,
            ));
        }
        Err(Failure::Other(e)) => return Err(e),
    };
    let tried = tokio::time::timeout(
        timeout,
        auth::authenticate(&mut handle, target, credentials),
    )
    .await
    .map_err(|_| timed_out())??;
    if super::verbose() {
        let key = seen.lock().ok().and_then(|s| s.clone());
        eprintln!(
            "{}",
            connected(target, via.map(|v| v.1), key.as_ref(), credentials, &tried)
        );
    }
    Ok(handle)
}

/// `-v`'s line for one connection: where, as whom, through which hop, the host key and what
/// vouched for it, the keys offered and the one accepted (the last offered).
fn connected(
    target: &Target,
    via: Option<&str>,
    key: Option<&PublicKey>,
    credentials: &Credentials,
    tried: &[String],
) -> String {
    let via = via.map(|hop| format!(" via {hop}")).unwrap_or_default();
    let host_key = match key {
        Some(key) => {
            let (name, port) = target.key_name();
            let place = match &target.pinned {
                Some(_) => "pinned in the inventory".to_string(),
                None => target
                    .known(credentials)
                    .place_of(name, port, key)
                    .map_or_else(|| "not recorded".into(), |p| format!("known_hosts {p}")),
            };
            format!("{} ({place})", super::fingerprint(key))
        }
        None => "unknown".into(),
    };
    let accepted = tried.last().map_or("none", String::as_str);
    format!(
        "{}: ssh {}@{}:{}{via}: host key {host_key}; offered {}; accepted {accepted}",
        target.node,
        target.user,
        target.address,
        target.port,
        tried.join(", ")
    )
}

/// Connects only far enough to learn the host key `target` offers: of the kinds `only` names
/// when given, else as a connection asks.
pub(super) async fn scan(
    via: Option<&Handle<Checker>>,
    target: &Target,
    credentials: &Credentials,
    timeout: Duration,
    only: Option<&[Algorithm]>,
) -> Result<PublicKey, SshError> {
    let timeout = target.connect_timeout.unwrap_or(timeout);
    let seen = Arc::new(Mutex::new(None));
    let mut unpinned = target.clone();
    unpinned.pinned = None;
    let result = tokio::time::timeout(
        timeout,
        handshake(via, &unpinned, credentials, seen.clone(), only),
    )
    .await;
    if let Some(key) = seen.lock().ok().and_then(|s| s.clone()) {
        return Ok(key);
    }
    match result {
        Err(_) => Err(SshError::Timeout {
            node: target.node.clone(),
            address: format!("{}:{}", target.address, target.port),
            seconds: timeout.as_secs(),
            via: None,
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

async fn handshake(
    via: Option<&Handle<Checker>>,
    target: &Target,
    credentials: &Credentials,
    seen: Arc<Mutex<Option<PublicKey>>>,
    only: Option<&[Algorithm]>,
) -> Result<Handle<Checker>, Failure> {
    let mut config = client::Config {
        keepalive_interval: match target.keepalive {
            Some(d) if d.is_zero() => None,
            Some(d) => Some(d),
            None => Some(KEEPALIVE),
        },
        keepalive_max: 3,
        inactivity_timeout: None,
        ..Default::default()
    };
    config.preferred.key = match only {
        Some(kinds) => kinds.to_vec().into(),
        None => {
            hostkey::algorithms(target, target.known(credentials), &config.preferred.key).into()
        }
    };
    let config = Arc::new(config);
    let checker = Checker {
        pinned: target.pinned.clone(),
        known: target
            .known_hosts
            .clone()
            .unwrap_or_else(|| credentials.known_hosts.clone()),
        host: target.key_name().0.to_string(),
        port: target.key_name().1,
        seen,
        node: (target.node.clone(), target.is_node),
        pinned_by: target.pinned_by.clone(),
    };
    match via {
        None => direct(config, target, checker).await,
        Some(hop) => {
            let channel = hop
                .channel_open_direct_tcpip(
                    target.address.clone(),
                    u32::from(target.port),
                    "127.0.0.1",
                    0,
                )
                .await
                .map_err(|e| {
                    Failure::Other(SshError::Unreachable {
                        node: target.node.clone(),
                        address: format!("{}:{}", target.address, target.port),
                        reason: format!("the jump host before it could not connect there: {e}"),
                    })
                })?;
            client::connect_stream(config, channel.into_stream(), checker)
                .await
                .map_err(Failure::Ssh)
        }
    }
}

/// Connects straight to `target` and exchanges keys. A connection sshd's listening socket
/// still held when sshd closed it to re-execute is reset before sshd says a word, so a reset
/// or an end before the key exchange is done is tried again, as a refused connection is.
async fn direct(
    config: Arc<client::Config>,
    target: &Target,
    checker: Checker,
) -> Result<Handle<Checker>, Failure> {
    let mut attempt = 1;
    loop {
        let stream = tcp(target).await.map_err(Failure::Other)?;
        match client::connect_stream(config.clone(), stream, checker.clone()).await {
            Err(russh::Error::IO(e)) if dropped(e.kind()) && attempt < REFUSED_ATTEMPTS => {
                attempt += 1;
                tokio::time::sleep(REFUSED_PAUSE).await;
            }
            done => return done.map_err(Failure::Ssh),
        }
    }
}

/// Whether a connection error is sshd not (yet) taking connections rather than an answer.
fn dropped(kind: std::io::ErrorKind) -> bool {
    use std::io::ErrorKind::{
        ConnectionAborted, ConnectionRefused, ConnectionReset, UnexpectedEof,
    };
    matches!(
        kind,
        ConnectionRefused | ConnectionReset | ConnectionAborted | UnexpectedEof
    )
}

async fn tcp(target: &Target) -> Result<tokio::net::TcpStream, SshError> {
    let address = format!("{}:{}", target.address, target.port);
    let addrs: Vec<_> = tokio::net::lookup_host((target.address.as_str(), target.port))
        .await
        .map_err(|e| SshError::Resolve {
            node: target.node.clone(),
            address: target.address.clone(),
            reason: e.to_string(),
        })?
        .collect();
    let mut last = String::from("no address");
    // sshd closes its listening socket while it re-executes itself on a reload (which a push may
    // just have caused), so a refused connection is tried again, as OpenSSH's ConnectionAttempts;
    // one the kernel had already completed is reset instead, and may be told so here.
    for attempt in 0..REFUSED_ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(REFUSED_PAUSE).await;
        }
        let mut refused = false;
        for a in &addrs {
            match tokio::net::TcpStream::connect(a).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Err(e) => {
                    refused |= dropped(e.kind());
                    last = e.to_string();
                }
            }
        }
        if !refused {
            break;
        }
    }
    Err(SshError::Unreachable {
        node: target.node.clone(),
        address,
        reason: last,
    })
}
