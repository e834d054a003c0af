//! Sealed content: a secret file's content arrives encrypted (age) to this machine's
//! `ssh-ed25519` host key, and is opened here, with the host's private key, only to be written.
//! The same goes for the value of a secret environment variable. So a secret crosses the wire,
//! and sits in the operator's inventory, only sealed.

use std::fmt;
use std::path::{Path, PathBuf};

use mesh_wire::{Declaration, Sealed};

mod age_file;
mod host_key;

/// The private half of the host key every secret is sealed to.
pub(crate) const HOST_KEY: &str = "/etc/ssh/ssh_host_ed25519_key";

/// Why a secret did not open: the host key it was tried with, and what went wrong.
#[derive(Debug)]
pub(crate) enum UnsealError {
    /// The host key cannot be read, or is not a key age reads.
    Key { key: PathBuf, why: String },
    /// The secret does not open with the key: sealed to another, or damaged.
    Decrypt { key: PathBuf, why: String },
    /// It opened, and what it holds is not UTF-8 text.
    NotText { key: PathBuf },
    /// A sealed environment value: the resource and the variable it is for.
    Environment {
        id: String,
        name: String,
        error: Box<UnsealError>,
    },
}

impl fmt::Display for UnsealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, why) = match self {
            UnsealError::Environment { id, name, error } => {
                return write!(f, "{id}: {name}: {error}");
            }
            UnsealError::Key { key, why } | UnsealError::Decrypt { key, why } => {
                (key, why.as_str())
            }
            UnsealError::NotText { key } => (key, "its content is not UTF-8 text"),
        };
        write!(
            f,
            "cannot open this secret with the host key {}: {why}; it was sealed to the host key \
             pinned in the operator's inventory: if the machine's key changed, `mesh node trust` \
             it again",
            key.display()
        )
    }
}

impl std::error::Error for UnsealError {}

/// Opens `sealed` with the host key of the machine whose `/` is `root`, as UTF-8 text.
pub(crate) fn open(root: &crate::files::Root, sealed: &Sealed) -> Result<String, UnsealError> {
    open_with(sealed, &root.real(Path::new(HOST_KEY)))
}

/// Opens `sealed` with the OpenSSH private key at `key`.
pub(crate) fn open_with(sealed: &Sealed, key: &Path) -> Result<String, UnsealError> {
    let unreadable = |why: String| UnsealError::Key {
        key: key.to_path_buf(),
        why,
    };
    let text = zeroize::Zeroizing::new(
        std::fs::read_to_string(key).map_err(|e| unreadable(e.to_string()))?,
    );
    let host_key = host_key::parse(&text).map_err(unreadable)?;
    let bytes = age_file::open(&sealed.age, &host_key).map_err(|e| UnsealError::Decrypt {
        key: key.to_path_buf(),
        why: e.to_string(),
    })?;
    String::from_utf8(bytes.to_vec()).map_err(|_| UnsealError::NotText {
        key: key.to_path_buf(),
    })
}

/// Puts every sealed environment value of `declaration` back in its place, opened with the
/// host's key, before anything is checked or applied.
pub(crate) fn open_environments(
    declaration: &mut Declaration,
    root: &crate::files::Root,
) -> Result<(), UnsealError> {
    for r in &mut declaration.resources {
        let Some(env) = r.spec.environment_mut() else {
            continue;
        };
        let (environment, sealed) = (env.values, env.sealed);
        for (name, s) in std::mem::take(sealed) {
            let value = open(root, &s).map_err(|e| UnsealError::Environment {
                id: r.id.clone(),
                name: name.clone(),
                error: Box::new(e),
            })?;
            environment.insert(name, value);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::open_with;
    use mesh_wire::Sealed;

    #[test]
    fn what_was_sealed_to_the_host_key_opens_with_it_and_nothing_else() {
        let ((_host_dir, host), (_other_dir, other)) = (
            super::host_key::keygen("ed25519", ""),
            super::host_key::keygen("ed25519", ""),
        );
        let public = std::fs::read_to_string(host.with_extension("pub")).unwrap();
        let recipient = age::ssh::Recipient::from_str(public.trim()).unwrap();
        let sealed = Sealed {
            age: age::encrypt_and_armor(&recipient, b"requirepass s3cret\n").unwrap(),
            digest: "d".into(),
            lines: vec![],
        };
        assert!(!sealed.age.contains("s3cret"));
        assert_eq!(open_with(&sealed, &host).unwrap(), "requirepass s3cret\n");
        let refused = open_with(&sealed, &other).unwrap_err().to_string();
        assert!(refused.contains("cannot open this secret"), "{refused}");
        assert!(!refused.contains("s3cret"));
    }
}
