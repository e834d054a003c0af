//! Opens an age file (format v1, ASCII-armored) sealed to an `ssh-ed25519` recipient: the one
//! thing the helper does with age. The operator seals with the `age` crate; the helper carries
//! only this reader and the primitives it needs (X25519, HKDF-SHA-256, HMAC-SHA-256,
//! ChaCha20-Poly1305), not the crate's recipients, plugins, passphrases and translations, which
//! were most of the helper's size.
//!
//! Followed step by step from the age v1 specification (age-encryption.org/v1) and its
//! `ssh-ed25519` recipient. `tests` opens what the `age` crate seals, at every chunk boundary,
//! and refuses every byte of it changed, so a difference from age is a failing test.

use base64ct::{Base64, Base64Unpadded, Encoding};
use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};
use x25519_dalek::{X25519_BASEPOINT_BYTES, x25519};
use zeroize::Zeroizing;

use super::host_key::HostKey;

const ARMOR_BEGIN: &str = "-----BEGIN AGE ENCRYPTED FILE-----";
const ARMOR_END: &str = "-----END AGE ENCRYPTED FILE-----";
const VERSION: &[u8] = b"age-encryption.org/v1\n";
const SSH_ED25519: &str = "ssh-ed25519";
const SSH_ED25519_LABEL: &[u8] = b"age-encryption.org/v1/ssh-ed25519";
/// A payload chunk's plaintext, at most; every chunk but the last is exactly this.
const CHUNK: usize = 64 * 1024;
const TAG: usize = 16;

/// Why an age file did not open. None of them carries a byte of what was sealed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// Not an armored age file.
    Armor,
    /// The header does not follow the format: what part of it.
    Header(&'static str),
    /// No stanza is sealed to this key.
    NotForThisKey,
    /// The stanza names this key, and the key does not open it.
    Unwrap,
    /// The header was changed after it was sealed.
    Mac,
    /// The payload was cut or changed.
    Payload,
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Armor => f.write_str("it is not an armored age file"),
            OpenError::Header(what) => write!(f, "its age header is malformed ({what})"),
            OpenError::NotForThisKey => f.write_str("it is not sealed to this key"),
            OpenError::Unwrap => f.write_str("its file key does not open with this key"),
            OpenError::Mac => f.write_str("its age header was changed (the MAC does not match)"),
            OpenError::Payload => f.write_str("its payload was cut or changed"),
        }
    }
}

/// Opens `armored` with `key`: the plaintext, or why not.
pub(crate) fn open(armored: &str, key: &HostKey) -> Result<Zeroizing<Vec<u8>>, OpenError> {
    let file = dearmor(armored)?;
    let header = Header::parse(&file)?;
    let file_key = header.file_key(key)?;
    let mac_key = hkdf(&[], b"header", &*file_key);
    let mut mac =
        <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(&*mac_key).map_err(|_| OpenError::Mac)?;
    mac.update(&file[..header.mac_input]);
    mac.verify_slice(&header.mac).map_err(|_| OpenError::Mac)?;
    payload(&file[header.end..], &file_key)
}

/// The armor as age writes and reads it: lines of 64 base64 columns, the last of 1 to 64.
fn dearmor(armored: &str) -> Result<Vec<u8>, OpenError> {
    let inner = armored
        .trim()
        .strip_prefix(ARMOR_BEGIN)
        .and_then(|t| t.strip_suffix(ARMOR_END))
        .and_then(|t| t.strip_prefix("\r\n").or_else(|| t.strip_prefix('\n')))
        .ok_or(OpenError::Armor)?;
    let lines: Vec<&str> = inner.lines().collect();
    let (last, full) = lines.split_last().ok_or(OpenError::Armor)?;
    if full.iter().any(|l| l.len() != 64) || last.is_empty() || last.len() > 64 {
        return Err(OpenError::Armor);
    }
    Base64::decode_vec(&lines.concat()).map_err(|_| OpenError::Armor)
}

/// The parsed header: its stanzas, and where its MAC and the payload are.
struct Header<'a> {
    stanzas: Vec<Stanza<'a>>,
    /// The header's bytes that the MAC covers end here (through `---`).
    mac_input: usize,
    mac: [u8; 32],
    /// The payload starts here.
    end: usize,
}

struct Stanza<'a> {
    args: Vec<&'a str>,
    body: Vec<u8>,
}

impl<'a> Header<'a> {
    fn parse(file: &'a [u8]) -> Result<Self, OpenError> {
        if !file.starts_with(VERSION) {
            return Err(OpenError::Header("not age-encryption.org/v1"));
        }
        let mut at = VERSION.len();
        let mut stanzas = Vec::new();
        loop {
            let (line, next) = line_at(file, at)?;
            if let Some(args) = line.strip_prefix("-> ") {
                let args: Vec<&str> = args.split(' ').collect();
                // each argument is one or more printable ASCII characters (VCHAR), as age asks
                if args
                    .iter()
                    .any(|a| a.is_empty() || !a.bytes().all(|b| b.is_ascii_graphic()))
                {
                    return Err(OpenError::Header(
                        "a stanza argument that is empty or not printable ASCII",
                    ));
                }
                let (body, after) = body_at(file, next)?;
                stanzas.push(Stanza { args, body });
                at = after;
            } else if let Some(encoded) = line.strip_prefix("--- ") {
                let mut mac = [0u8; 32];
                let decoded = Base64Unpadded::decode(encoded, &mut mac)
                    .map_err(|_| OpenError::Header("the MAC is not 32 bytes of base64"))?;
                if decoded.len() != 32 {
                    return Err(OpenError::Header("the MAC is not 32 bytes of base64"));
                }
                let mac_input = at + 3;
                return Ok(Header {
                    stanzas,
                    mac_input,
                    mac,
                    end: next,
                });
            } else {
                return Err(OpenError::Header(
                    "a line that is neither a stanza nor the MAC",
                ));
            }
        }
    }

    /// The file key from the stanza sealed to `key`.
    fn file_key(&self, key: &HostKey) -> Result<Zeroizing<[u8; 16]>, OpenError> {
        let tag = &Sha256::digest(&key.public)[..4];
        for stanza in self.stanzas.iter().filter(|s| s.args[0] == SSH_ED25519) {
            let [_, named, share] = stanza.args[..] else {
                return Err(OpenError::Header(
                    "an ssh-ed25519 stanza without two arguments",
                ));
            };
            let mut four = [0u8; 4];
            if Base64Unpadded::decode(named, &mut four).map(|t| t.len()) != Ok(4) {
                return Err(OpenError::Header("an ssh-ed25519 tag that is not 4 bytes"));
            }
            if four != tag {
                continue;
            }
            let mut epk = [0u8; 32];
            if Base64Unpadded::decode(share, &mut epk).map(|s| s.len()) != Ok(32) {
                return Err(OpenError::Header(
                    "an ssh-ed25519 share that is not 32 bytes",
                ));
            }
            return unwrap(key, epk, &stanza.body);
        }
        Err(OpenError::NotForThisKey)
    }
}

/// The `ssh-ed25519` recipient's unwrap: X25519 with the key's scalar, tweaked by the public key.
fn unwrap(key: &HostKey, epk: [u8; 32], body: &[u8]) -> Result<Zeroizing<[u8; 16]>, OpenError> {
    let mut scalar = Zeroizing::new([0u8; 32]);
    scalar.copy_from_slice(&Sha512::digest(key.seed.as_slice())[..32]);
    let ours = x25519(*scalar, X25519_BASEPOINT_BYTES);
    let tweak = hkdf(&key.public, SSH_ED25519_LABEL, &[]);
    let first = Zeroizing::new(x25519(*scalar, epk));
    if *first == [0u8; 32] {
        return Err(OpenError::Unwrap);
    }
    let shared = Zeroizing::new(x25519(*tweak, *first));
    let mut salt = [0u8; 64];
    salt[..32].copy_from_slice(&epk);
    salt[32..].copy_from_slice(&ours);
    let wrap = hkdf(&salt, SSH_ED25519_LABEL, &*shared);
    let opened = Zeroizing::new(
        ChaCha20Poly1305::new(&(*wrap).into())
            .decrypt(&[0u8; 12].into(), body)
            .map_err(|_| OpenError::Unwrap)?,
    );
    let file_key: [u8; 16] = opened[..].try_into().map_err(|_| OpenError::Unwrap)?;
    Ok(Zeroizing::new(file_key))
}

/// The STREAM payload: a 16-byte nonce, then chunks of 64 KiB, the last one marked.
fn payload(rest: &[u8], file_key: &[u8; 16]) -> Result<Zeroizing<Vec<u8>>, OpenError> {
    let (nonce, chunks) = rest.split_first_chunk::<16>().ok_or(OpenError::Payload)?;
    if chunks.is_empty() {
        return Err(OpenError::Payload);
    }
    let key = hkdf(nonce, b"payload", file_key);
    let aead = ChaCha20Poly1305::new(&(*key).into());
    let count = chunks.len().div_ceil(CHUNK + TAG);
    let mut plain = Zeroizing::new(Vec::with_capacity(chunks.len()));
    for (i, chunk) in chunks.chunks(CHUNK + TAG).enumerate() {
        let last = i + 1 == count;
        let mut nonce = [0u8; 12];
        nonce[3..11].copy_from_slice(&(i as u64).to_be_bytes());
        nonce[11] = u8::from(last);
        let opened = Zeroizing::new(
            aead.decrypt(&nonce.into(), chunk)
                .map_err(|_| OpenError::Payload)?,
        );
        // only a payload of nothing at all may end in an empty chunk
        if last && opened.is_empty() && i > 0 {
            return Err(OpenError::Payload);
        }
        plain.extend_from_slice(&opened);
    }
    Ok(plain)
}

/// One header line at `at` (without its newline) and where the next starts.
fn line_at(file: &[u8], at: usize) -> Result<(&str, usize), OpenError> {
    let rest = file.get(at..).ok_or(OpenError::Header("it ends early"))?;
    let len = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(OpenError::Header("it ends before the MAC line"))?;
    let line = std::str::from_utf8(&rest[..len])
        .map_err(|_| OpenError::Header("a line that is not text"))?;
    Ok((line, at + len + 1))
}

/// A stanza's body: lines of 64 base64 columns, ended by a shorter one (possibly empty).
fn body_at(file: &[u8], mut at: usize) -> Result<(Vec<u8>, usize), OpenError> {
    let mut body = Vec::new();
    loop {
        let (line, next) = line_at(file, at)?;
        if line.len() > 64 {
            return Err(OpenError::Header("a stanza body line over 64 columns"));
        }
        let mut bytes = [0u8; 48];
        let decoded = Base64Unpadded::decode(line, &mut bytes)
            .map_err(|_| OpenError::Header("a stanza body that is not base64"))?;
        body.extend_from_slice(decoded);
        at = next;
        if line.len() < 64 {
            return Ok((body, at));
        }
    }
}

fn hkdf(salt: &[u8], info: &[u8], ikm: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut okm = Zeroizing::new([0u8; 32]);
    // 32 bytes is far below HKDF-SHA-256's limit (255 × 32), so expand cannot refuse it
    let _ = hkdf::Hkdf::<Sha256>::new(Some(salt), ikm).expand(info, &mut *okm);
    okm
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use base64ct::{Base64, Encoding};

    use super::super::host_key::{self, HostKey};
    use super::{CHUNK, OpenError, open};

    /// A host key from `ssh-keygen`, and what the operator's `age` seals to it.
    fn host() -> (tempfile::TempDir, HostKey, age::ssh::Recipient) {
        let (dir, at) = host_key::keygen("ed25519", "");
        let key = host_key::parse(&std::fs::read_to_string(&at).unwrap()).unwrap();
        let public = std::fs::read_to_string(at.with_extension("pub")).unwrap();
        let recipient = age::ssh::Recipient::from_str(public.trim()).unwrap();
        (dir, key, recipient)
    }

    fn seal(to: &age::ssh::Recipient, plain: &[u8]) -> String {
        age::encrypt_and_armor(to, plain).unwrap()
    }

    /// Armors `binary` as age does: 64 columns a line.
    fn armor(binary: &[u8]) -> String {
        let encoded = Base64::encode_string(binary);
        let lines: Vec<&str> = encoded
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN AGE ENCRYPTED FILE-----\n{}\n-----END AGE ENCRYPTED FILE-----\n",
            lines.join("\n")
        )
    }

    fn binary(armored: &str) -> Vec<u8> {
        super::dearmor(armored).unwrap()
    }

    #[test]
    fn what_age_seals_opens_at_every_size_around_a_chunk() {
        let (_dir, key, to) = host();
        for len in [
            0,
            1,
            17,
            CHUNK - 1,
            CHUNK,
            CHUNK + 1,
            2 * CHUNK,
            2 * CHUNK + 3,
        ] {
            let plain: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let opened = open(&seal(&to, &plain), &key).unwrap();
            assert_eq!(opened.len(), len);
            assert!(*opened == plain, "{len} bytes");
        }
    }

    #[test]
    fn every_byte_changed_is_refused() {
        let (_dir, key, to) = host();
        let file = binary(&seal(&to, b"requirepass s3cret\n"));
        for at in 0..file.len() {
            let mut changed = file.clone();
            changed[at] ^= 0x01;
            assert!(open(&armor(&changed), &key).is_err(), "byte {at} changed");
        }
        assert_eq!(*open(&armor(&file), &key).unwrap(), b"requirepass s3cret\n");
        // cut anywhere, header or payload: refused, never a panic (a panic aborts the helper)
        for cut in 0..file.len() {
            assert!(open(&armor(&file[..cut]), &key).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn a_payload_cut_at_a_chunk_or_extended_is_refused() {
        let (_dir, key, to) = host();
        let plain = vec![7u8; 2 * CHUNK + 3];
        let file = binary(&seal(&to, &plain));
        let last = file.len() - (3 + 16);
        for cut in [&file[..last], &file[..file.len() - 1], &file[..last - 1]] {
            assert_eq!(open(&armor(cut), &key).unwrap_err(), OpenError::Payload);
        }
        let mut longer = file.clone();
        longer.extend_from_slice(&[0u8; 16]);
        assert_eq!(open(&armor(&longer), &key).unwrap_err(), OpenError::Payload);
    }

    #[test]
    fn a_file_sealed_to_another_key_or_not_age_says_so() {
        let (_dir, key, _) = host();
        let (_other_dir, _, other) = host();
        let sealed = seal(&other, b"x");
        assert_eq!(open(&sealed, &key).unwrap_err(), OpenError::NotForThisKey);
        assert_eq!(
            open("requirepass s3cret", &key).unwrap_err(),
            OpenError::Armor
        );
        let not_v1 = armor(b"age-encryption.org/v2\n--- AAAA\n");
        assert!(matches!(open(&not_v1, &key), Err(OpenError::Header(_))));
    }

    /// random edits/truncations/insertions of a sealed file: an error, never a panic,
    /// never the plaintext from a changed binary.
    #[test]
    fn random_edits_of_a_two_chunk_file_are_refused_without_a_panic() {
        let (_dir, key, to) = host();
        let plain: Vec<u8> = (0..CHUNK + 100).map(|i| (i % 251) as u8).collect();
        let file = binary(&seal(&to, &plain));
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let mut rnd = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..1000 {
            let mut m = file.clone();
            match rnd(4) {
                0 => {
                    let at = rnd(m.len());
                    m[at] ^= 1 + rnd(255) as u8;
                }
                1 => {
                    let at = rnd(m.len());
                    m.truncate(at);
                }
                2 => {
                    let at = rnd(m.len());
                    m.insert(at, rnd(256) as u8);
                }
                _ => {
                    let at = rnd(m.len());
                    m.remove(at);
                }
            }
            if m == file {
                continue;
            }
            assert!(open(&armor(&m), &key).is_err());
        }
    }

    /// An armor age refuses (a space after every column, or one long line) is refused here too.
    #[test]
    fn an_armor_age_would_refuse_is_refused() {
        let (_dir, key, to) = host();
        let sealed = seal(&to, b"secret");
        let odd: String = sealed
            .lines()
            .map(|l| {
                if l.starts_with("-----") {
                    format!("{l}\n")
                } else {
                    l.chars().map(|c| format!("{c} ")).collect::<String>() + "\n"
                }
            })
            .collect();
        let theirs = age::Decryptor::new(age::armor::ArmoredReader::new(odd.as_bytes()));
        assert!(theirs.is_err());
        assert_eq!(open(&odd, &key).unwrap_err(), OpenError::Armor);
        let unwrapped = format!(
            "-----BEGIN AGE ENCRYPTED FILE-----\n{}\n-----END AGE ENCRYPTED FILE-----\n",
            Base64::encode_string(&binary(&sealed))
        );
        assert_eq!(open(&unwrapped, &key).unwrap_err(), OpenError::Armor);
    }

    /// A stanza argument with a non-VCHAR byte (tab, non-ASCII), the header MACed again with
    /// the file key: age's parser refuses the header, and so does this reader.
    #[test]
    fn a_stanza_argument_that_is_not_printable_ascii_is_refused_even_with_a_good_mac() {
        use hmac::Mac;
        let (_dir, key, to) = host();
        let file = binary(&seal(&to, b"secret"));
        let header = super::Header::parse(&file).unwrap();
        let file_key = header.file_key(&key).unwrap();
        let head = &file[..header.mac_input - 3];
        let mut forged = head.to_vec();
        forged.extend_from_slice("-> grease\tx \u{e9}\n\n---".as_bytes());
        let mac_key = super::hkdf(&[], b"header", &*file_key);
        let mut mac =
            <hmac::Hmac<sha2::Sha256> as hmac::KeyInit>::new_from_slice(&*mac_key).unwrap();
        mac.update(&forged);
        let tag = mac.finalize().into_bytes();
        forged.extend_from_slice(
            format!(" {}\n", base64ct::Base64Unpadded::encode_string(&tag)).as_bytes(),
        );
        forged.extend_from_slice(&file[header.end..]);
        let armored = armor(&forged);
        let theirs = age::Decryptor::new(age::armor::ArmoredReader::new(armored.as_bytes()));
        assert!(theirs.is_err());
        assert!(matches!(open(&armored, &key), Err(OpenError::Header(_))));
    }

    /// base64ct refuses non-canonical trailing bits (what the header's canonicity rests on).
    #[test]
    fn non_canonical_base64_is_refused() {
        use base64ct::Base64Unpadded;
        let mut four = [0u8; 4];
        assert!(Base64Unpadded::decode("AAAAAA", &mut four).is_ok());
        assert!(Base64Unpadded::decode("AAAAAB", &mut four).is_err());
        let mut b = [0u8; 48];
        assert!(Base64Unpadded::decode("AB", &mut b).is_err());
        assert!(Base64Unpadded::decode("AA==", &mut b).is_err());
    }
}
