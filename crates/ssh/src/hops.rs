//! One connection per jump host for a whole run: every node behind a bastion opens its
//! `direct-tcpip` channel over the same authenticated connection, as OpenSSH's ControlMaster
//! would, instead of logging in to the bastion once per node (200 logins for 200 machines,
//! and sshd's `MaxStartups` drops them once more than 10 are unauthenticated at once).
//!
//! Two nodes share a hop's connection only where they would have made the same one: the same
//! route, the same user, address and port, and the same host key checks and keys offered. A node
//! whose own configuration would refuse the bastion's key (another known_hosts, a `@revoked`
//! line, a HostKeyAlias) or log in otherwise (other identities) makes a connection of its own.
//! A hop that failed fails the run's later nodes behind it at once, naming the first failure,
//! instead of each waiting out its own connect timeout in turn.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use russh::client::Handle;
use tokio::sync::Mutex;

use super::hostkey::{Checker, fingerprint};
use super::{Credentials, SshError, Target, jump};

/// How many nodes at most share one connection to a jump host: each is a `direct-tcpip` channel
/// of it, which sshd's `MaxSessions` does not count, but one connection carries every byte of
/// them. Past it a second connection is opened (`--parallel 100` is one login).
pub(crate) const CHANNELS_PER_CONNECTION: usize = 128;

/// One hop's connections in a run, and how its first failed connection failed.
#[derive(Default)]
struct Hop {
    open: Vec<Arc<Handle<Checker>>>,
    /// The failure's kind (`SshError::kind`) and message: later nodes fail with it at once.
    failed: Option<(&'static str, String)>,
}

/// One hop's state, shared by every node of the run reached through it.
type Slot = Arc<Mutex<Hop>>;

/// The jump hosts' connections of one run, by the route that reaches each.
#[derive(Default, Clone)]
pub struct Hops {
    open: Arc<Mutex<HashMap<String, Slot>>>,
}

impl Hops {
    /// The slot of the hop reached by `route`, made empty when the run first asks for it.
    async fn slot(&self, route: &str) -> Slot {
        self.open
            .lock()
            .await
            .entry(route.to_string())
            .or_default()
            .clone()
    }

    /// Takes `handle` out of the run: a node found no answer through it, so it may be dead
    /// without having closed (a dropped route keeps it open until keepalives give up), and the
    /// next node behind the hop logs in again rather than waiting on it too.
    pub(crate) async fn forget(&self, handle: &Arc<Handle<Checker>>) {
        let slots: Vec<Slot> = self.open.lock().await.values().cloned().collect();
        for slot in slots {
            slot.lock().await.open.retain(|h| !Arc::ptr_eq(h, handle));
        }
    }
}

/// Whether one more node may go through `handle`: the slot holds one reference, every session
/// (and every connection further along a chain) through it holds another.
fn room(handle: &Arc<Handle<Checker>>) -> bool {
    Arc::strong_count(handle) <= CHANNELS_PER_CONNECTION
}

/// A hop as a route key: where it connects and as whom, after the hops before it, and all that
/// decides whether a connection there is one this node would accept and log in with: the hop
/// as written, its pinned key, known_hosts files, HostKeyAlias and the keys it offers. Two
/// nodes whose hops agree on each of these would make the same connection; any difference
/// is a connection of its own.
fn route_key(route: &str, hop: &Target) -> String {
    let pinned = hop.pinned.as_ref().map(fingerprint);
    let known: Vec<_> = hop.known_hosts_files.iter().map(|(f, _)| f).collect();
    format!(
        "{route}>{}@{}:{} as {:?} pinned {pinned:?} known {known:?} alias {:?} keys {:?} only \
         {} timeout {:?} alive {:?} unknown {:?}",
        hop.user,
        hop.address,
        hop.port,
        hop.node,
        hop.host_key_alias,
        hop.identities,
        hop.identities_only,
        hop.connect_timeout,
        hop.keepalive,
        hop.accepts_unknown,
    )
}

/// Connects to each of the target's jump hosts in turn, each through those before it, reusing
/// what `hops` has open for the same route; a failure names the hop. A hop's connection that
/// has closed since is opened again. Without `hops`, every hop is a connection of its own.
pub(super) async fn through(
    target: &Target,
    credentials: &Credentials,
    hops: Option<&Hops>,
    timeout: Duration,
) -> Result<Vec<Arc<Handle<Checker>>>, SshError> {
    let mut chain: Vec<Arc<Handle<Checker>>> = Vec::new();
    let mut route = String::new();
    for (i, hop) in target.jumps.iter().enumerate() {
        route = route_key(&route, hop);
        let before = i.checked_sub(1).map(|b| target.jumps[b].node.as_str());
        let via = chain.last().map(|h| &**h).zip(before);
        let failed = |source| SshError::Jump {
            node: target.node.clone(),
            hop: hop.node.clone(),
            source: Box::new(source),
        };
        let Some(hops) = hops else {
            let handle = jump::reach(via, hop, credentials, timeout).await;
            chain.push(Arc::new(handle.map_err(failed)?));
            continue;
        };
        let slot = hops.slot(&route).await;
        // held while connecting: the nodes behind this hop wait for one login, not one each
        let mut state = slot.lock().await;
        if let Some((kind, message)) = &state.failed {
            return Err(failed(SshError::Earlier {
                kind,
                message: message.clone(),
            }));
        }
        state.open.retain(|h| !h.is_closed());
        let handle = match state.open.iter().find(|h| room(h)) {
            Some(h) => h.clone(),
            None => match jump::reach(via, hop, credentials, timeout).await {
                Ok(h) => {
                    let h = Arc::new(h);
                    state.open.push(h.clone());
                    h
                }
                Err(e) => {
                    state.failed = Some((e.kind(), e.to_string()));
                    return Err(failed(e));
                }
            },
        };
        chain.push(handle);
    }
    Ok(chain)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use russh::keys::PublicKey;

    use super::route_key;
    use crate::Target;

    const KEY_A: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPQORzT/pBlqQLEkTlIuiICN6BxZwyFJVv380l4F4amB";
    const KEY_B: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJq4R5Ejk666inj6g+SulVD24zs4hUNiNhfJtaJVA9El";

    /// One change to a hop's settings, with what it changes.
    type Change = fn(&mut Target);

    fn bastion() -> Target {
        let mut hop = Target::direct("bastion", "10.0.0.1", 22, "root");
        hop.pinned = PublicKey::from_openssh(KEY_A).ok();
        hop.identities = vec![PathBuf::from("/keys/ops")];
        hop.known_hosts_files = vec![(PathBuf::from("/root/.ssh/known_hosts"), "default".into())];
        hop
    }

    #[test]
    fn two_nodes_jumping_through_the_same_hop_the_same_way_share_its_connection() {
        assert_eq!(route_key("", &bastion()), route_key("", &bastion()));
    }

    /// Each change to what decides whether the hop's key is accepted, or how mesh logs in
    /// there, is a connection of its own: else a node rides a login its own configuration
    /// would have refused (a `@revoked` line in its known_hosts, a key taken off the bastion).
    #[test]
    fn a_hop_reached_with_other_host_key_checks_or_other_keys_is_a_connection_of_its_own() {
        let changes: Vec<(&str, Change)> = vec![
            ("the name it is written as", |h| h.node = "bastbad".into()),
            ("the user", |h| h.user = "deploy".into()),
            ("the port", |h| h.port = 2222),
            ("the pinned key", |h| {
                h.pinned = PublicKey::from_openssh(KEY_B).ok();
            }),
            ("no pinned key", |h| h.pinned = None),
            ("the known_hosts files", |h| {
                h.known_hosts_files = vec![(PathBuf::from("/tmp/kh_bad"), "config:3".into())];
            }),
            ("a HostKeyAlias", |h| {
                h.host_key_alias = Some("other".into())
            }),
            ("the identities", |h| {
                h.identities = vec![PathBuf::from("/keys/revoked")];
            }),
            ("IdentitiesOnly", |h| h.identities_only = true),
            ("StrictHostKeyChecking", |h| {
                h.accepts_unknown = Some("StrictHostKeyChecking no (config:4)".into());
            }),
        ];
        let same = route_key("", &bastion());
        for (what, change) in changes {
            let mut other = bastion();
            change(&mut other);
            assert_ne!(
                route_key("", &other),
                same,
                "{what} differs, same connection"
            );
        }
        assert_ne!(
            route_key("first", &bastion()),
            same,
            "another route before it"
        );
    }
}
