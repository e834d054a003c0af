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
    /// Nothing took the connection, or it ended before sshd said a word: worth another try.
    Dropped(SshError),
}

impl Failure {
    /// Whether sshd was not (yet) taking connections, rather than answering: refused, or reset
    /// or ended before the key exchange was done (a handshake ends before authentication).
    fn dropped(&self) -> bool {
        match self {
            Failure::Dropped(_) => true,
            Failure::Ssh(e) => ended(e),
            Failure::Other(_) => false,
        }
    }
}

/// Whether russh failed because the connection was reset or ended under it, before the key
/// exchange was done (a handshake ends there).
fn ended(e: &russh::Error) -> bool {
    match e {
        russh::Error::IO(e) => dropped(e.kind()),
        // the end of a jump host's channel before sshd's version line
        russh::Error::Disconnect => true,
        _ => false,
    }
}

fn dropped(kind: std::io::ErrorKind) -> bool {
    use std::io::ErrorKind::{
        ConnectionAborted, ConnectionRefused, ConnectionReset, UnexpectedEof,
    };
    matches!(
        kind,
        ConnectionRefused | ConnectionReset | ConnectionAborted | UnexpectedEof
    )
}

/// The bytes to a machine: a TCP connection, or a `direct-tcpip` channel through a jump host.
trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static> Stream for T {}

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
    let deadline = tokio::time::Instant::now() + timeout;
    let handle = tokio::time::timeout_at(
        deadline,
        handshake(via, target, credentials, seen.clone(), None, deadline),
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
        Err(Failure::Other(e) | Failure::Dropped(e)) => return Err(e),
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
    via: Option<(&Handle<Checker>, &str)>,
    target: &Target,
    credentials: &Credentials,
    timeout: Duration,
    only: Option<&[Algorithm]>,
) -> Result<PublicKey, SshError> {
    let timeout = target.connect_timeout.unwrap_or(timeout);
    let seen = Arc::new(Mutex::new(None));
    let mut unpinned = target.clone();
    unpinned.pinned = None;
    let deadline = tokio::time::Instant::now() + timeout;
    let result = tokio::time::timeout_at(
        deadline,
        handshake(via, &unpinned, credentials, seen.clone(), only, deadline),
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
            via: via.map(|v| v.1.to_string()),
        }),
        Ok(Err(Failure::Other(e) | Failure::Dropped(e))) => Err(e),
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

/// Connects and exchanges keys, trying a dropped connection again (see [`Failure::dropped`]) as
/// long as the next try starts before `deadline`: a try again that `deadline` cuts short, or one
/// there is no time left for, reports the failure before it (refused, say), not silence.
async fn handshake(
    via: Option<(&Handle<Checker>, &str)>,
    target: &Target,
    credentials: &Credentials,
    seen: Arc<Mutex<Option<PublicKey>>>,
    only: Option<&[Algorithm]>,
    deadline: tokio::time::Instant,
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
    // sshd closes its listening socket while it re-executes itself on a reload (which a push may
    // just have caused): a connection then is refused, as OpenSSH's ConnectionAttempts tries
    // again, or, where the kernel had already completed it, reset before sshd says a word
    let (mut attempt, mut before) = (1, None::<Failure>);
    loop {
        let once = async {
            match open(via, target).await {
                Ok(stream) => client::connect_stream(config.clone(), stream, checker.clone())
                    .await
                    .map_err(Failure::Ssh),
                Err(failure) => Err(failure),
            }
        };
        let tried = match before.take() {
            None => once.await,
            Some(before) => match tokio::time::timeout_at(deadline, once).await {
                Ok(tried) => tried,
                Err(_) => return Err(unanswered(before, via, target)),
            },
        };
        match tried {
            Err(f)
                if f.dropped()
                    && attempt < REFUSED_ATTEMPTS
                    && tokio::time::Instant::now() + REFUSED_PAUSE < deadline =>
            {
                attempt += 1;
                tokio::time::sleep(REFUSED_PAUSE).await;
                before = Some(f);
            }
            done => return done.map_err(|f| unanswered(f, via, target)),
        }
    }
}

/// `failure` as it is reported: a connection sshd reset or ended before it answered, every try,
/// is a machine not reached, named with its address (and the jump host it went through), as a
/// refused one is.
fn unanswered(failure: Failure, via: Option<(&Handle<Checker>, &str)>, target: &Target) -> Failure {
    match failure {
        Failure::Ssh(e) if ended(&e) => {
            let through = via
                .map(|v| format!(" through jump host {}", v.1))
                .unwrap_or_default();
            Failure::Other(SshError::Unreachable {
                node: target.node.clone(),
                address: format!("{}:{}", target.address, target.port),
                reason: format!("the connection{through} ended before sshd answered: {e}"),
            })
        }
        other => other,
    }
}

/// Opens the bytes to `target`: straight over TCP, or through the jump host `via`.
async fn open(
    via: Option<(&Handle<Checker>, &str)>,
    target: &Target,
) -> Result<Box<dyn Stream>, Failure> {
    let Some((hop, name)) = via else {
        return Ok(Box::new(tcp(target).await?));
    };
    let unreachable = |e: &russh::Error| SshError::Unreachable {
        node: target.node.clone(),
        address: format!("{}:{}", target.address, target.port),
        reason: format!("the jump host {name} could not connect there: {e}"),
    };
    match hop
        .channel_open_direct_tcpip(
            target.address.clone(),
            u32::from(target.port),
            "127.0.0.1",
            0,
        )
        .await
    {
        Ok(channel) => Ok(Box::new(channel.into_stream())),
        Err(e @ russh::Error::ChannelOpenFailure(russh::ChannelOpenFailure::ConnectFailed)) => {
            Err(Failure::Dropped(unreachable(&e)))
        }
        Err(e) => Err(Failure::Other(unreachable(&e))),
    }
}

async fn tcp(target: &Target) -> Result<tokio::net::TcpStream, Failure> {
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
    let (mut last, mut again) = (String::from("no address"), false);
    for a in &addrs {
        match tokio::net::TcpStream::connect(a).await {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => {
                again |= dropped(e.kind());
                last = e.to_string();
            }
        }
    }
    let unreachable = SshError::Unreachable {
        node: target.node.clone(),
        address,
        reason: last,
    };
    Err(if again {
        Failure::Dropped(unreachable)
    } else {
        Failure::Other(unreachable)
    })
}
