//! Host key verification: the pinned key, else the operator's known_hosts.

use std::sync::{Arc, Mutex};

use russh::client;
use russh::keys::{Algorithm, HashAlg, PublicKey, PublicKeyOrCertificate};

use super::{SshError, Target};

/// Checks the key a machine offers, and remembers it so a refusal can name it.
pub(super) struct Checker {
    pub(super) pinned: Option<PublicKey>,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) seen: Arc<Mutex<Option<PublicKey>>>,
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
        Ok(match &self.pinned {
            Some(pinned) => pinned.key_data() == key.key_data(),
            None => known_hosts_path()
                .map(|path| russh::keys::check_known_hosts_path(&self.host, self.port, key, path))
                .is_some_and(|r| matches!(r, Ok(true))),
        })
    }
}

fn known_hosts_path() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".ssh/known_hosts"))
}

/// Turns a failed handshake into the refusal that says what happened.
pub(super) fn explain(
    target: &Target,
    seen: &Arc<Mutex<Option<PublicKey>>>,
    error: russh::Error,
) -> SshError {
    let seen = seen.lock().ok().and_then(|s| s.clone());
    match (error, seen) {
        (russh::Error::UnknownKey, Some(seen)) => match &target.pinned {
            Some(pinned) => SshError::KeyChanged {
                node: target.node.clone(),
                pinned: fingerprint(pinned),
                seen: fingerprint(&seen),
            },
            None => SshError::NotPinned {
                node: target.node.clone(),
                seen: fingerprint(&seen),
            },
        },
        (source, _) => SshError::Protocol {
            node: target.node.clone(),
            source,
        },
    }
}

/// The host key algorithms to ask for, so a machine offers the kind of key that is pinned.
pub(super) fn algorithms_for(pinned: &PublicKey) -> Vec<Algorithm> {
    match pinned.algorithm() {
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
pub fn parse_public_key(text: &str) -> Result<PublicKey, String> {
    PublicKey::from_openssh(text.trim()).map_err(|e| format!("not an OpenSSH public key: {e}"))
}
