//! Sealed content: a secret file's content arrives encrypted (age) to this machine's
//! `ssh-ed25519` host key, and is opened here, with the host's private key, only to be written.
//! The same goes for the value of a secret environment variable. So a secret crosses the wire,
//! and sits in the operator's inventory, only sealed.

use std::io::BufReader;
use std::path::Path;

use mesh_wire::{Declaration, Sealed};

/// The private half of the host key every secret is sealed to.
pub(crate) const HOST_KEY: &str = "/etc/ssh/ssh_host_ed25519_key";

/// Opens `sealed` with the host key of the machine whose `/` is `root`, as UTF-8 text.
pub(crate) fn open(root: &crate::files::Root, sealed: &Sealed) -> Result<String, String> {
    open_with(sealed, &root.real(Path::new(HOST_KEY)))
}

/// Opens `sealed` with the OpenSSH private key at `key`.
pub(crate) fn open_with(sealed: &Sealed, key: &Path) -> Result<String, String> {
    let cannot = |why: String| {
        format!(
            "cannot open this secret with the host key {}: {why}; it was sealed to the host key \
             pinned in the operator's inventory: if the machine's key changed, `mesh node trust` \
             it again",
            key.display()
        )
    };
    let file = std::fs::File::open(key).map_err(|e| cannot(e.to_string()))?;
    let identity = age::ssh::Identity::from_buffer(BufReader::new(file), None)
        .map_err(|e| cannot(e.to_string()))?;
    let bytes =
        age::decrypt(&identity, sealed.age.as_bytes()).map_err(|e| cannot(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| cannot("its content is not UTF-8 text".into()))
}

/// Puts every sealed environment value of `declaration` back in its place, opened with the
/// host's key, before anything is checked or applied.
pub(crate) fn open_environments(
    declaration: &mut Declaration,
    root: &crate::files::Root,
) -> Result<(), String> {
    for r in &mut declaration.resources {
        let Some(env) = r.spec.environment_mut() else {
            continue;
        };
        let (environment, sealed) = (env.values, env.sealed);
        for (name, s) in std::mem::take(sealed) {
            let value = open(root, &s).map_err(|e| format!("{}: {name}: {e}", r.id))?;
            environment.insert(name, value);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::str::FromStr;

    use super::open_with;
    use mesh_wire::Sealed;

    #[test]
    fn what_was_sealed_to_the_host_key_opens_with_it_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let keygen = |name: &str| {
            let at = dir.path().join(name);
            let ok = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(&at)
                .status()
                .unwrap()
                .success();
            assert!(ok);
            at
        };
        let (host, other) = (keygen("host"), keygen("other"));
        let public = std::fs::read_to_string(host.with_extension("pub")).unwrap();
        let recipient = age::ssh::Recipient::from_str(public.trim()).unwrap();
        let sealed = Sealed {
            age: age::encrypt_and_armor(&recipient, b"requirepass s3cret\n").unwrap(),
            digest: "d".into(),
            lines: vec![],
        };
        assert!(!sealed.age.contains("s3cret"));
        assert_eq!(open_with(&sealed, &host).unwrap(), "requirepass s3cret\n");
        let refused = open_with(&sealed, &other).unwrap_err();
        assert!(refused.contains("cannot open this secret"), "{refused}");
        assert!(!refused.contains("s3cret"));
    }
}
