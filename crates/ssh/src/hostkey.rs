//! Host key verification: the pinned key, else the operator's known_hosts files.

use std::sync::{Arc, Mutex};

use russh::client;
use russh::keys::{Algorithm, EcdsaCurve, HashAlg, PublicKey, PublicKeyOrCertificate};

use super::known_hosts::{KnownHosts, Verdict};
use super::{SshError, Target};

/// Checks the key a machine offers, and remembers it so a refusal can name it.
#[derive(Clone)]
pub(super) struct Checker {
    pub(super) pinned: Option<PublicKey>,
    pub(super) known: Arc<KnownHosts>,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) seen: Arc<Mutex<Option<PublicKey>>>,
    /// The target's node name, whether it is a node, and every node's pinned key.
    pub(super) node: (String, bool),
    pub(super) pinned_by: Arc<std::collections::BTreeMap<String, String>>,
}

/// The node other than `node` that has `key` pinned, when `node` is a node: a machine offering
/// it is that other node's.
fn pinned_elsewhere<'a>(
    (node, is_node): (&str, bool),
    pinned_by: &'a std::collections::BTreeMap<String, String>,
    key: &PublicKey,
) -> Option<&'a String> {
    if !is_node {
        return None;
    }
    pinned_by
        .get(&fingerprint(key))
        .filter(|other| other.as_str() != node)
}

impl client::Handler for Checker {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        offered: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        // Host certificates would need a trusted authority; mesh pins keys.
        let PublicKeyOrCertificate::PublicKey { key, .. } = offered else {
            return Ok(false);
        };
        if let Ok(mut seen) = self.seen.lock() {
            *seen = Some(key.clone());
        }
        if pinned_elsewhere((&self.node.0, self.node.1), &self.pinned_by, key).is_some() {
            return Ok(false);
        }
        // a key known_hosts revokes is refused even where it is the pinned one
        let verdict = self.known.check(&self.host, self.port, key);
        Ok(match &self.pinned {
            _ if matches!(verdict, Verdict::Revoked { .. }) => false,
            Some(pinned) => pinned.key_data() == key.key_data(),
            None => verdict == Verdict::Known,
        })
    }
}

/// Turns a failed handshake into the refusal that says what happened.
pub(super) fn explain(
    target: &Target,
    known: &KnownHosts,
    seen: &Arc<Mutex<Option<PublicKey>>>,
    error: russh::Error,
) -> SshError {
    let seen = seen.lock().ok().and_then(|s| s.clone());
    let node = target.node.clone();
    let (russh::Error::UnknownKey, Some(seen)) = (&error, seen) else {
        return SshError::Protocol {
            node,
            source: error,
        };
    };
    if let Some(other) = pinned_elsewhere((&node, target.is_node), &target.pinned_by, &seen) {
        return SshError::PinnedElsewhere {
            other: other.clone(),
            seen: fingerprint(&seen),
            node,
        };
    }
    // a revoked key is named as that first, even where another key is pinned
    let (name, port) = target.key_name();
    match (known.check(name, port, &seen), &target.pinned) {
        (Verdict::Revoked { place }, _) => SshError::Revoked {
            node,
            seen: fingerprint(&seen),
            place,
        },
        (_, Some(pinned)) => SshError::KeyChanged {
            node,
            recorded_in: "the inventory's pin".into(),
            pinned: fingerprint(pinned),
            seen: fingerprint(&seen),
            is_node: target.is_node,
        },
        (Verdict::Changed { recorded, place }, None) => SshError::KeyChanged {
            is_node: target.is_node,
            node,
            recorded_in: format!("known_hosts ({place})"),
            pinned: fingerprint(&recorded),
            seen: fingerprint(&seen),
        },
        (Verdict::Unknown, None) if target.accepts_unknown.is_some() => {
            SshError::UnknownNotAccepted {
                line: target.accepts_unknown.clone().unwrap_or_default(),
                node,
                seen: fingerprint(&seen),
                is_node: target.is_node,
            }
        }
        (Verdict::Unknown | Verdict::Known, None) if target.is_node => SshError::NotPinned {
            node,
            seen: fingerprint(&seen),
        },
        (Verdict::Unknown | Verdict::Known, None) => SshError::NotKnown {
            node,
            address: format!("{}:{}", target.address, target.port),
            seen: fingerprint(&seen),
        },
    }
}

/// OpenSSH's own preference among host key algorithms (its default `HostKeyAlgorithms`, less
/// certificates): what `ssh` asks for first whatever order known_hosts lists the keys in.
const OPENSSH_ORDER: &[Algorithm] = &[
    Algorithm::Ed25519,
    Algorithm::Ecdsa {
        curve: EcdsaCurve::NistP256,
    },
    Algorithm::Ecdsa {
        curve: EcdsaCurve::NistP384,
    },
    Algorithm::Ecdsa {
        curve: EcdsaCurve::NistP521,
    },
    Algorithm::Rsa {
        hash: Some(HashAlg::Sha512),
    },
    Algorithm::Rsa {
        hash: Some(HashAlg::Sha256),
    },
    Algorithm::Rsa { hash: None },
];

/// The host key algorithms to ask for: only the pinned key's kind when one is pinned; else the
/// kinds known_hosts records for the machine first, then the rest. As OpenSSH does
/// (`order_hostkeyalgs`), the recorded kinds are asked for in its own preference order, not in
/// the order of the file: a machine with an ed25519 key then offers it even where its ECDSA key
/// is listed above it (sealed secrets need the ed25519 key), and a stale line of another kind
/// above the right one is never what the machine is measured against.
pub(super) fn algorithms(
    target: &Target,
    known: &KnownHosts,
    defaults: &[Algorithm],
) -> Vec<Algorithm> {
    if let Some(pinned) = &target.pinned {
        return algorithms_for(pinned);
    }
    let mut recorded: Vec<Algorithm> = Vec::new();
    let (name, port) = target.key_name();
    for a in known
        .keys_for(name, port)
        .into_iter()
        .flat_map(algorithms_for)
    {
        if !recorded.contains(&a) {
            recorded.push(a);
        }
    }
    // a kind OpenSSH's list lacks keeps its place after those it has
    recorded.sort_by_key(|a| {
        OPENSSH_ORDER
            .iter()
            .position(|o| o == a)
            .unwrap_or(OPENSSH_ORDER.len())
    });
    let mut out = recorded;
    for a in defaults {
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    out
}

/// Every kind of host key in OpenSSH's order but `key`'s, each as the algorithms that carry it.
pub(super) fn kinds_other_than(key: &PublicKey) -> Vec<Vec<Algorithm>> {
    let own = algorithms_for(key);
    let mut kinds: Vec<Vec<Algorithm>> = Vec::new();
    for a in OPENSSH_ORDER {
        if own.contains(a) {
            continue;
        }
        match kinds.last_mut() {
            // the RSA signature algorithms are one kind of key
            Some(last) if is_rsa(a) && last.iter().all(is_rsa) => last.push(a.clone()),
            _ => kinds.push(vec![a.clone()]),
        }
    }
    kinds
}

fn is_rsa(a: &Algorithm) -> bool {
    matches!(a, Algorithm::Rsa { .. })
}

/// The algorithms that can carry a key of this kind.
fn algorithms_for(key: &PublicKey) -> Vec<Algorithm> {
    match key.algorithm() {
        Algorithm::Rsa { .. } => vec![
            Algorithm::Rsa {
                hash: Some(HashAlg::Sha512),
            },
            Algorithm::Rsa {
                hash: Some(HashAlg::Sha256),
            },
            Algorithm::Rsa { hash: None },
        ],
        other => vec![other],
    }
}

/// `SHA256:…`, as OpenSSH prints it.
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

/// Reads a public key in OpenSSH form (`ssh-ed25519 AAAA… [comment]`).
pub fn parse_public_key(text: &str) -> Result<PublicKey, PublicKeyError> {
    PublicKey::from_openssh(text.trim()).map_err(PublicKeyError)
}

/// A text that is not an OpenSSH public key; what the key library said of it.
#[derive(Debug, thiserror::Error)]
#[error("not an OpenSSH public key: {0}")]
pub struct PublicKeyError(russh::keys::ssh_key::Error);

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdwlzA7ywn5+Bs51gDd4efsKL46CckJB88Fw0wAWPHb";
    const ECDSA: &str = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBGHsOsL1NtGsB1nFRW6WRhd3FFq1AMS28Ga6Z4JzXlBIFaHhpnaoyLdz7/f9+YlHersZNgiZFE5vGjRV76bNh4A=";

    fn asked(known_hosts: &str) -> Vec<Algorithm> {
        let mut known = KnownHosts::default();
        known.add(Path::new("kh"), known_hosts);
        let target = Target::direct("web1", "192.0.2.1", 22, "root");
        algorithms(&target, &known, &russh::Preferred::DEFAULT.key)
    }

    #[test]
    fn the_recorded_kinds_are_asked_for_in_opensshs_order_not_the_files() {
        let ecdsa = Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP256,
        };
        // ECDSA listed first: ed25519 is still asked for first, as ssh does
        let both = asked(&format!("192.0.2.1 {ECDSA}\n192.0.2.1 {ED}\n"));
        assert_eq!(both[..2], [Algorithm::Ed25519, ecdsa.clone()], "{both:?}");
        // only ECDSA recorded: that kind first, the rest after
        let only = asked(&format!("192.0.2.1 {ECDSA}\n"));
        assert_eq!(only[..2], [ecdsa, Algorithm::Ed25519], "{only:?}");
        // each kind once
        let mut seen = only.clone();
        seen.dedup();
        assert_eq!(seen.len(), only.len());
    }

    #[test]
    fn the_other_kinds_of_a_key_are_each_kind_but_its_own_rsa_as_one() {
        let ecdsa = PublicKey::from_openssh(ECDSA).unwrap();
        let kinds = kinds_other_than(&ecdsa);
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        assert_eq!(kinds[0], [Algorithm::Ed25519]);
        assert!(
            kinds[3].iter().all(is_rsa) && kinds[3].len() == 3,
            "{kinds:?}"
        );
        let ed = PublicKey::from_openssh(ED).unwrap();
        assert!(!kinds_other_than(&ed).concat().contains(&Algorithm::Ed25519));
    }
}
