//! One connection per jump host for a whole run: every node behind a bastion opens its
//! `direct-tcpip` channel over the same authenticated connection, as OpenSSH's ControlMaster
//! would, instead of logging in to the bastion once per node (200 logins for 200 machines,
//! and sshd's `MaxStartups` drops them once more than 10 are unauthenticated at once).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use russh::client::Handle;
use tokio::sync::Mutex;

use super::hostkey::Checker;
use super::{Credentials, SshError, Target, jump};

/// How many nodes at most share one connection to a jump host: each is a `direct-tcpip` channel
/// of it, which sshd's `MaxSessions` does not count, but one connection carries every byte of
/// them. Past it a second connection is opened (`--parallel 100` is one login).
pub(crate) const CHANNELS_PER_CONNECTION: usize = 128;

/// One hop's connections, shared by every node of the run reached through it.
type Slot = Arc<Mutex<Vec<Arc<Handle<Checker>>>>>;

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
}

/// Whether one more node may go through `handle`: the slot holds one reference, every session
/// (and every connection further along a chain) through it holds another.
fn room(handle: &Arc<Handle<Checker>>) -> bool {
    Arc::strong_count(handle) <= CHANNELS_PER_CONNECTION
}

/// A hop as a route key: where it connects and as whom, after the hops before it. Two nodes
/// whose jump hosts agree on each of these reach the same machine the same way.
fn route_key(route: &str, hop: &Target) -> String {
    format!("{route}>{}@{}:{}", hop.user, hop.address, hop.port)
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
        let mut open = slot.lock().await;
        open.retain(|h| !h.is_closed());
        let handle = match open.iter().find(|h| room(h)) {
            Some(h) => h.clone(),
            None => {
                let h = Arc::new(
                    jump::reach(via, hop, credentials, timeout)
                        .await
                        .map_err(failed)?,
                );
                open.push(h.clone());
                h
            }
        };
        chain.push(handle);
    }
    Ok(chain)
}
