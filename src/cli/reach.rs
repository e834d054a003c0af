//! Before a fan-out: how every node is reached (inventory, then OpenSSH's configuration) and
//! every key file that takes, loaded once each, so a passphrase prompt never lands in the middle
//! of a parallel push.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use crate::inventory::Node;
use crate::push::{PushError, Reach, route};
use crate::ssh::config::SshConfig;
use crate::ssh::known_hosts::KnownHosts;
use crate::ssh::{self, Credentials, Target};

/// How to reach each of `nodes` (`all` is the inventory, for jump hosts that are nodes). A node
/// that cannot be reached as said (its own key file unusable, a jump host that cannot be
/// written down) comes back with its error: that node fails, the others go ahead.
pub(crate) fn reach(nodes: &[&Node], all: &[Node]) -> Result<(Reach, BTreeMap<String, PushError>)> {
    let config = SshConfig::load()?;
    let mut reach = Reach {
        targets: BTreeMap::new(),
        credentials: Credentials {
            agent: true,
            known_hosts: Arc::new(KnownHosts::load()?),
            ..Credentials::default()
        },
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

/// How `node` is reached once the ssh configuration is applied, as `node show` prints it:
/// `user@address:port via hop, hop`.
pub(crate) fn describe(node: &Node, all: &[Node]) -> String {
    let target = SshConfig::load()
        .map_err(|e| e.to_string())
        .and_then(|config| route::target(node, all, &config).map_err(|e| e.to_string()));
    match target {
        Err(e) => format!("cannot be worked out: {e}"),
        Ok(t) => {
            let at = |t: &Target| format!("{}@{}:{}", t.user, t.address, t.port);
            let hops: Vec<String> = t.jumps.iter().map(at).collect();
            if hops.is_empty() {
                at(&t)
            } else {
                format!("{} via {}", at(&t), hops.join(", "))
            }
        }
    }
}
