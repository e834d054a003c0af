//! Authentication: key files (loaded once, before the fan-out, so a passphrase is asked at most
//! once and only on a terminal) and ssh-agent's keys, offered in OpenSSH's order ([`order`]):
//! the agent's keys first, in the agent's order (with IdentitiesOnly only those a key file
//! holds too), then the key files the agent does not hold, each key once, since a key offered
//! twice counts twice against the server's `MaxAuthTries`.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use russh::client::Handle;
use russh::keys::agent::client::AgentClient;
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg, PublicKey};

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

/// The default key files OpenSSH tries when the configuration names none, in its order, less
/// those mesh cannot use (`id_ecdsa_sk`, `id_ed25519_sk`: security keys; `id_xmss`, `id_dsa`),
/// which ssh too skips where it cannot load them.
const DEFAULT_FILES: &[&str] = &["id_rsa", "id_ecdsa", "id_ed25519"];

/// The key files to try when a node names none.
pub fn default_identities() -> Vec<PathBuf> {
    // the passwd entry's home, as ssh takes `~/.ssh/id_*`, whatever `$HOME` says
    let Some(home) = super::local::local_home() else {
        return Vec::new();
    };
    DEFAULT_FILES
        .iter()
        .map(|n| home.join(".ssh").join(n))
        .filter(|p| p.is_file())
        .collect()
}

/// One key to offer: loaded from a file (an agent key a file holds too is offered from the
/// file, the same key), or one only the agent holds.
#[derive(Debug)]
enum Offer<'a> {
    File(&'a Arc<PrivateKey>),
    Agent(PublicKey),
}

/// The keys in the order OpenSSH's `pubkey_prepare` offers them: the agent's in its order
/// (only those a file holds too, with IdentitiesOnly), then the files' the agent does not hold,
/// in the configuration's order; each key once.
fn order<'a>(
    files: &[&'a Arc<PrivateKey>],
    agent: Vec<PublicKey>,
    identities_only: bool,
) -> Vec<Offer<'a>> {
    let mut offers: Vec<Offer<'a>> = Vec::new();
    let mut offered: Vec<PublicKey> = Vec::new();
    let mut take = |key: &PublicKey, offer: Offer<'a>, offers: &mut Vec<Offer<'a>>| {
        if !offered.iter().any(|k| k.key_data() == key.key_data()) {
            offered.push(key.clone());
            offers.push(offer);
        }
    };
    for key in agent {
        match files
            .iter()
            .find(|f| f.public_key().key_data() == key.key_data())
        {
            Some(file) => take(&key, Offer::File(file), &mut offers),
            None if !identities_only => take(&key.clone(), Offer::Agent(key), &mut offers),
            None => {}
        }
    }
    for file in files {
        take(file.public_key(), Offer::File(file), &mut offers);
    }
    offers
}

pub(super) async fn authenticate(
    handle: &mut Handle<Checker>,
    target: &Target,
    credentials: &Credentials,
) -> Result<Vec<String>, SshError> {
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
    let files: Vec<&Arc<PrivateKey>> = target
        .identities
        .iter()
        .filter_map(|path| credentials.keys.get(path))
        .collect();
    let mut agent = match credentials.agent {
        true => AgentClient::connect_env().await.ok(),
        false => None,
    };
    let listed = match agent.as_mut() {
        Some(agent) => agent.request_identities().await.unwrap_or_default(),
        None => Vec::new(),
    };
    let listed = listed
        .into_iter()
        .map(|identity| identity.public_key().into_owned())
        .collect();
    for offer in order(&files, listed, target.identities_only) {
        let accepted = match (offer, agent.as_mut()) {
            (Offer::File(key), _) => {
                tried.push(super::fingerprint(key.public_key()));
                let with_hash = PrivateKeyWithHashAlg::new(key.clone(), rsa_hash);
                handle
                    .authenticate_publickey(target.user.clone(), with_hash)
                    .await
                    .map_err(protocol)?
                    .success()
            }
            (Offer::Agent(key), Some(agent)) => {
                tried.push(format!("agent {}", super::fingerprint(&key)));
                handle
                    .authenticate_publickey_with(target.user.clone(), key, rsa_hash, agent)
                    .await
                    .is_ok_and(|r| r.success())
            }
            (Offer::Agent(_), None) => false,
        };
        if accepted {
            return Ok(tried);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A new ed25519 key, made by ssh-keygen.
    fn key(dir: &Path, name: &str) -> Arc<PrivateKey> {
        let path = dir.join(name);
        let made = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        Arc::new(load_identity("test", &path).unwrap())
    }

    /// Each offer by name: `file:a` or `agent:c`.
    fn names(offers: &[Offer<'_>], all: &[(&str, &Arc<PrivateKey>)]) -> Vec<String> {
        let name = |k: &PublicKey| {
            all.iter()
                .find(|(_, key)| key.public_key().key_data() == k.key_data())
                .map(|(n, _)| n.to_string())
                .unwrap()
        };
        offers
            .iter()
            .map(|o| match o {
                Offer::File(key) => format!("file:{}", name(key.public_key())),
                Offer::Agent(key) => format!("agent:{}", name(key)),
            })
            .collect()
    }

    #[test]
    fn agent_keys_come_first_then_files_the_agent_does_not_hold_each_key_once() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c, d) = (
            key(dir.path(), "a"),
            key(dir.path(), "b"),
            key(dir.path(), "c"),
            key(dir.path(), "d"),
        );
        let all = [("a", &a), ("b", &b), ("c", &c), ("d", &d)];
        // files a, b, a again; the agent holds d, b, d again
        let files = [&a, &b, &a];
        let agent = || {
            vec![
                d.public_key().clone(),
                b.public_key().clone(),
                d.public_key().clone(),
            ]
        };
        let offers = order(&files, agent(), false);
        assert_eq!(names(&offers, &all), ["agent:d", "file:b", "file:a"]);
        // IdentitiesOnly: only the agent keys a file holds, still first
        let offers = order(&files, agent(), true);
        assert_eq!(names(&offers, &all), ["file:b", "file:a"]);
        let offers = order(&[&c, &a], Vec::new(), false);
        assert_eq!(names(&offers, &all), ["file:c", "file:a"]);
    }

    #[test]
    fn default_key_files_are_tried_in_openssh_order() {
        assert_eq!(DEFAULT_FILES, ["id_rsa", "id_ecdsa", "id_ed25519"]);
    }
}
