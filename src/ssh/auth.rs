//! Authentication: key files (loaded once, before the fan-out, so a passphrase is asked at most
//! once and only on a terminal), then ssh-agent.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use russh::client::Handle;
use russh::keys::agent::client::AgentClient;
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg};

use super::hostkey::Checker;
use super::known_hosts::KnownHosts;
use super::{SshError, Target};

/// What a connection may rely on: the keys it may offer (each target names the files it
/// offers, loaded here once), ssh-agent, and the host keys known_hosts records.
#[derive(Default, Clone)]
pub struct Credentials {
    /// Keys loaded from files, by path.
    pub keys: BTreeMap<PathBuf, Arc<PrivateKey>>,
    /// Try ssh-agent (SSH_AUTH_SOCK) after the files, unless a target says IdentitiesOnly.
    pub agent: bool,
    pub known_hosts: Arc<KnownHosts>,
}

/// Loads a private key file (read as [`super::files::read_text`] reads); an encrypted one asks for its passphrase on a terminal and is refused
/// clearly without one.
pub fn load_identity(node: &str, path: &Path) -> Result<PrivateKey, SshError> {
    let fail = |reason: String| SshError::Identity {
        node: node.to_string(),
        path: path.to_path_buf(),
        reason,
    };
    let text = super::files::read_text(path).map_err(|e| fail(e.reason()))?;
    match russh::keys::decode_secret_key(&text, None) {
        Ok(k) => Ok(k),
        Err(russh::keys::Error::KeyIsEncrypted) => {
            if !std::io::stdin().is_terminal() {
                return Err(fail(
                    "is encrypted and there is no terminal to ask its passphrase on; load it into ssh-agent (ssh-add) instead".into(),
                ));
            }
            let prompt = format!("Passphrase for {}: ", path.display());
            let pass = rpassword::prompt_password(prompt)
                .map_err(|e| fail(format!("cannot read the passphrase: {e}")))?;
            russh::keys::decode_secret_key(&text, Some(&pass))
                .map_err(|e| fail(format!("cannot be opened: {e}")))
        }
        Err(e) => Err(fail(format!("cannot be read: {e}"))),
    }
}

/// The key files to try when a node names none.
pub fn default_identities() -> Vec<PathBuf> {
    // the passwd entry's home, as ssh takes `~/.ssh/id_*`, whatever `$HOME` says
    let Some(home) = super::local::local_home() else {
        return Vec::new();
    };
    ["id_ed25519", "id_ecdsa", "id_rsa"]
        .iter()
        .map(|n| home.join(".ssh").join(n))
        .filter(|p| p.is_file())
        .collect()
}

pub(super) async fn authenticate(
    handle: &mut Handle<Checker>,
    target: &Target,
    credentials: &Credentials,
) -> Result<(), SshError> {
    let protocol = |source| SshError::Protocol {
        node: target.node.clone(),
        source,
    };
    let mut tried = Vec::new();
    let rsa_hash = handle
        .best_supported_rsa_hash()
        .await
        .map_err(protocol)?
        .flatten();
    for key in target
        .identities
        .iter()
        .filter_map(|path| credentials.keys.get(path))
    {
        tried.push(super::fingerprint(key.public_key()));
        let with_hash = PrivateKeyWithHashAlg::new(key.clone(), rsa_hash);
        if handle
            .authenticate_publickey(target.user.clone(), with_hash)
            .await
            .map_err(protocol)?
            .success()
        {
            return Ok(());
        }
    }
    if credentials.agent
        && !target.identities_only
        && let Ok(mut agent) = AgentClient::connect_env().await
        && let Ok(identities) = agent.request_identities().await
    {
        for identity in identities {
            let key = identity.public_key().into_owned();
            tried.push(format!("agent {}", super::fingerprint(&key)));
            let result = handle
                .authenticate_publickey_with(target.user.clone(), key, rsa_hash, &mut agent)
                .await;
            if result.is_ok_and(|r| r.success()) {
                return Ok(());
            }
        }
    }
    Err(SshError::Auth {
        node: target.node.clone(),
        user: target.user.clone(),
        address: target.address.clone(),
        tried: if tried.is_empty() {
            "no key: none given, none in ~/.ssh, no agent".into()
        } else {
            tried.join(", ")
        },
    })
}
