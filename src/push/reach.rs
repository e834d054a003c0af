//! Before a fan-out: how every node is reached (inventory, then OpenSSH's configuration) and
//! every key file that takes, loaded once each, so a passphrase prompt never lands in the middle
//! of a parallel push.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::inventory::Node;
use crate::ssh::config::{ConfigError, SshConfig};
use crate::ssh::files::FileError;
use crate::ssh::known_hosts::KnownHosts;
use crate::ssh::{self, Credentials, Target};

use super::{PushError, Reach, route};

/// What keeps every node from being reached: OpenSSH's configuration or known_hosts unreadable.
#[derive(Debug, thiserror::Error)]
pub enum ReachError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    KnownHosts(#[from] FileError),
}

/// How to reach each of `nodes` (`all` is the inventory, for jump hosts that are nodes). A node
/// that cannot be reached as said (its own key file unusable, a jump host that cannot be
/// written down) comes back with its error: that node fails, the others go ahead.
pub fn reach(
    nodes: &[&Node],
    all: &[Node],
) -> Result<(Reach, BTreeMap<String, PushError>), ReachError> {
    let config = SshConfig::load()?;
    let mut reach = Reach {
        targets: BTreeMap::new(),
        credentials: Credentials {
            agent: true,
            known_hosts: Arc::new(KnownHosts::load()?),
            ..Credentials::default()
        },
        hops: Default::default(),
    };
    // a key file the inventory names must work; one from the configuration or the defaults
    // that does not is passed over, as OpenSSH does
    let required: Vec<&PathBuf> = all.iter().filter_map(|n| n.identity.as_ref()).collect();
    let mut unusable = BTreeMap::new();
    // a node offering a key another node has pinned is that node's machine: refused on the
    // handshake, however it was reached (an alias, known_hosts)
    let pinned_by: Arc<BTreeMap<String, String>> = Arc::new(
        all.iter()
            .filter_map(|n| Some((n.host_key_fingerprint()?, n.name.clone())))
            .collect(),
    );
    'nodes: for node in nodes {
        let target = match route::target(node, all, &config) {
            Ok(mut t) => {
                for hop in &mut t.jumps {
                    hop.pinned_by = pinned_by.clone();
                }
                t.pinned_by = pinned_by.clone();
                t
            }
            Err(e) => {
                unusable.insert(node.name.clone(), e);
                continue;
            }
        };
        for hop in target.jumps.iter().chain([&target]) {
            if let Err(e) = load(&mut reach.credentials, &node.name, hop, &required) {
                unusable.insert(node.name.clone(), e);
                continue 'nodes;
            }
        }
        reach.targets.insert(node.name.clone(), target);
    }
    Ok((reach, unusable))
}

fn load(
    credentials: &mut Credentials,
    node: &str,
    target: &Target,
    required: &[&PathBuf],
) -> Result<(), PushError> {
    for path in &target.identities {
        if credentials.keys.contains_key(path) {
            continue;
        }
        match ssh::load_identity(node, path) {
            Ok(k) => {
                credentials.keys.insert(path.clone(), Arc::new(k));
            }
            Err(e) if required.contains(&path) => return Err(e.into()),
            Err(_) => {}
        }
    }
    Ok(())
}
