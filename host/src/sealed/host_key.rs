//! The machine's `ssh-ed25519` host key, read from its OpenSSH private key file
//! (`openssh-key-v1`, unencrypted, as `ssh-keygen -A` writes it): the public key as SSH encodes
//! it, which names the stanza sealed to it, and the seed, from which its X25519 secret comes.
//!
//! Only this one form is read: a host key is never passphrase-protected, and every secret is
//! sealed to the ed25519 key (`super::HOST_KEY`), so nothing else needs reading here.

use base64ct::{Base64, Encoding};
use zeroize::{Zeroize, Zeroizing};

const BEGIN: &str = "-----BEGIN OPENSSH PRIVATE KEY-----";
const END: &str = "-----END OPENSSH PRIVATE KEY-----";
const MAGIC: &[u8] = b"openssh-key-v1\0";
const ED25519: &[u8] = b"ssh-ed25519";

/// An ed25519 host key: what it is sealed to, and what opens it.
pub(crate) struct HostKey {
    /// The public key in SSH's encoding (`string "ssh-ed25519", string key`).
    pub(crate) public: Vec<u8>,
    /// The 32-byte seed of the private key.
    pub(crate) seed: Zeroizing<[u8; 32]>,
}

/// Reads an unencrypted OpenSSH ed25519 private key; the error says what is wrong with it.
pub(crate) fn parse(text: &str) -> Result<HostKey, String> {
    let text = text.trim();
    let inner = text
        .strip_prefix(BEGIN)
        .and_then(|t| t.strip_suffix(END))
        .ok_or("it is not an OpenSSH private key (no BEGIN/END OPENSSH PRIVATE KEY lines)")?;
    let joined: String = inner.split_whitespace().collect();
    let mut bytes = Zeroizing::new(
        Base64::decode_vec(&joined).map_err(|_| "its base64 does not decode".to_string())?,
    );
    let key = read(&bytes);
    bytes.zeroize();
    key.ok_or_else(|| {
        "it is not an unencrypted ssh-ed25519 key in the openssh-key-v1 format".to_string()
    })
}

fn read(bytes: &[u8]) -> Option<HostKey> {
    let mut r = Reader(bytes.strip_prefix(MAGIC)?);
    let (cipher, kdf, _kdf_options) = (r.string()?, r.string()?, r.string()?);
    if cipher != b"none" || kdf != b"none" || r.u32()? != 1 {
        return None;
    }
    let public = r.string()?.to_vec();
    let mut private = Reader(r.string()?);
    let (check1, check2) = (private.u32()?, private.u32()?);
    if check1 != check2 || private.string()? != ED25519 {
        return None;
    }
    let point = private.string()?;
    let pair = private.string()?;
    if pair.len() != 64 || point.len() != 32 || pair[32..] != *point {
        return None;
    }
    let mut outer = Reader(&public);
    if outer.string()? != ED25519 || outer.string()? != point || !outer.0.is_empty() {
        return None;
    }
    let mut seed = Zeroizing::new([0u8; 32]);
    seed.copy_from_slice(&pair[..32]);
    Some(HostKey { public, seed })
}

/// SSH's wire encoding: big-endian u32 lengths before each string.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_be_bytes(*head))
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u32()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(s)
    }
}

/// A key `ssh-keygen` makes (of `kind`, under `passphrase`), in a directory of its own, with its
/// `.pub` beside it: the sealed tests' one source of real OpenSSH keys.
#[cfg(test)]
pub(super) fn keygen(kind: &str, passphrase: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let at = dir.path().join("ssh_host_key");
    let ok = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", kind, "-N", passphrase, "-C", "a comment", "-f"])
        .arg(&at)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    (dir, at)
}

#[cfg(test)]
mod tests {
    use base64ct::{Base64, Encoding};

    use super::parse;

    fn keygen(kind: &str, passphrase: &str) -> (tempfile::TempDir, String, String) {
        let (dir, at) = super::keygen(kind, passphrase);
        let private = std::fs::read_to_string(&at).unwrap();
        let public = std::fs::read_to_string(at.with_extension("pub")).unwrap();
        (dir, private, public)
    }

    #[test]
    fn an_ed25519_key_from_ssh_keygen_reads_with_the_public_key_ssh_keygen_printed() {
        let (_dir, private, public) = keygen("ed25519", "");
        let key = parse(&private).unwrap();
        let printed = public.split_whitespace().nth(1).unwrap();
        assert_eq!(Base64::encode_string(&key.public), printed);
    }

    #[test]
    fn keys_this_helper_does_not_open_are_refused_saying_why() {
        let (_dir, encrypted, _) = keygen("ed25519", "a passphrase");
        let (_dir2, ecdsa, _) = keygen("ecdsa", "");
        for text in [encrypted.as_str(), ecdsa.as_str()] {
            let why = parse(text).err().unwrap();
            assert!(why.contains("not an unencrypted ssh-ed25519 key"), "{why}");
        }
        let why = parse("ssh-ed25519 AAAA").err().unwrap();
        assert!(why.contains("not an OpenSSH private key"), "{why}");
        let cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n-----END OPENSSH PRIVATE KEY-----";
        assert!(parse(cut).is_err());
    }
}
