//! known_hosts as OpenSSH reads it: the user's `~/.ssh/known_hosts` and `known_hosts2`, then the
//! system's `/etc/ssh/ssh_known_hosts` and `ssh_known_hosts2`; hashed names (`|1|salt|hash`),
//! `[host]:port` for a port other than 22, comma-separated names, `*`/`?` patterns and `!`
//! exclusions, `@revoked` keys (refused). `@cert-authority` lines are skipped: mesh does not
//! accept host certificates. Every key type russh reads is understood.
//!
//! russh's own `check_known_hosts_path` reads one file, has no patterns, negation or markers,
//! and reports a changed key by line number only, so it cannot name the recorded key.

use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use hmac::{Hmac, KeyInit, Mac};
use russh::keys::PublicKey;
use sha1::Sha1;

use super::config::wildcard;
use super::files::{FileError, read_text};

/// What the files say of the key a machine offered.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Recorded for this host.
    Known,
    /// Nothing recorded for this host.
    Unknown,
    /// Other keys are recorded for this host; `recorded` is one of the same type if there is one.
    Changed {
        recorded: Box<PublicKey>,
        place: String,
    },
    /// Listed as `@revoked`.
    Revoked { place: String },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Marker {
    None,
    Revoked,
    CertAuthority,
}

#[derive(Debug, Clone)]
struct Entry {
    place: String,
    marker: Marker,
    hosts: String,
    key: PublicKey,
}

/// Every entry of every file read, in the order OpenSSH reads them.
#[derive(Debug, Clone, Default)]
pub struct KnownHosts {
    entries: Vec<Entry>,
}

impl KnownHosts {
    /// The operator's files (`MESH_SSH_KNOWN_HOSTS` and `MESH_SSH_SYSTEM_KNOWN_HOSTS`, one path
    /// each, stand in for the user's and the system's pair). Files that are not there hold
    /// nothing; one that is there but cannot be read (a FIFO, a device, too large) is refused.
    pub fn load() -> Result<KnownHosts, FileError> {
        let (user, system) = default_files();
        KnownHosts::read(user.iter().chain(&system))
    }

    /// The entries of `paths`, in order, read as [`KnownHosts::load`] reads them.
    pub fn read<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> Result<KnownHosts, FileError> {
        let mut known = KnownHosts::default();
        for path in paths {
            match read_text(path) {
                Ok(text) => known.add(path, &text),
                Err(e) if e.is_missing() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(known)
    }

    /// Reads one more file's text. A line that cannot be read is skipped, as OpenSSH does.
    pub fn add(&mut self, path: &Path, text: &str) {
        for (n, line) in text.lines().enumerate() {
            let mut fields = line.split_whitespace();
            let Some(mut first) = fields.next().filter(|f| !f.starts_with('#')) else {
                continue;
            };
            let marker = match first {
                "@revoked" => Marker::Revoked,
                "@cert-authority" => Marker::CertAuthority,
                _ => Marker::None,
            };
            if marker != Marker::None {
                let Some(next) = fields.next() else { continue };
                first = next;
            }
            let (Some(kind), Some(data)) = (fields.next(), fields.next()) else {
                continue;
            };
            let Ok(key) = PublicKey::from_openssh(&format!("{kind} {data}")) else {
                continue;
            };
            self.entries.push(Entry {
                place: format!("{}:{}", path.display(), n + 1),
                marker,
                hosts: first.to_string(),
                key,
            });
        }
    }

    /// The keys recorded for `host` at `port` (to ask the machine for one of their types).
    pub fn keys_for(&self, host: &str, port: u16) -> Vec<&PublicKey> {
        let name = written_name(host, port);
        self.entries
            .iter()
            .filter(|e| e.marker == Marker::None && matches(&e.hosts, &name))
            .map(|e| &e.key)
            .collect()
    }

    /// Where the keys for `host` at `port` are recorded (`file:line`), the plain `host`
    /// entries after those of `[host]:port`, as [`KnownHosts::check`] may take them.
    pub fn places_for(&self, host: &str, port: u16) -> Vec<String> {
        let names = names_for(host, port);
        names
            .iter()
            .flat_map(|name| {
                self.entries
                    .iter()
                    .filter(move |e| e.marker == Marker::None && matches(&e.hosts, name))
            })
            .map(|e| e.place.clone())
            .collect()
    }

    /// The line (`file:line`) that records exactly `key` for `host` at `port` (or, for a port
    /// other than 22, for the plain `host`, as [`KnownHosts::check`] may take it).
    pub fn place_of(&self, host: &str, port: u16, key: &PublicKey) -> Option<String> {
        let names = names_for(host, port);
        names.iter().find_map(|name| {
            self.entries
                .iter()
                .find(|e| {
                    e.marker == Marker::None
                        && e.key.key_data() == key.key_data()
                        && matches(&e.hosts, name)
                })
                .map(|e| e.place.clone())
        })
    }

    /// Whether `offered` is the key recorded for `host` at `port`. As OpenSSH does ("found
    /// matching key w/out port"), when nothing of the offered key's type is recorded for
    /// `[host]:port`, a plain `host` entry holding exactly that key is taken; a plain entry
    /// with another key does not make it changed.
    pub fn check(&self, host: &str, port: u16, offered: &PublicKey) -> Verdict {
        let verdict = self.check_name(&written_name(host, port), offered);
        let of_type_recorded = |v: &Verdict| match v {
            Verdict::Unknown => false,
            Verdict::Changed { recorded, .. } => recorded.algorithm() == offered.algorithm(),
            _ => true,
        };
        if port != 22
            && !of_type_recorded(&verdict)
            && self.check_name(&written_name(host, 22), offered) == Verdict::Known
        {
            return Verdict::Known;
        }
        verdict
    }

    fn check_name(&self, name: &str, offered: &PublicKey) -> Verdict {
        let same = |e: &&Entry| e.key.key_data() == offered.key_data();
        let mut for_host = self
            .entries
            .iter()
            .filter(|e| e.marker != Marker::CertAuthority && matches(&e.hosts, name));
        if let Some(revoked) = for_host
            .clone()
            .filter(|e| e.marker == Marker::Revoked)
            .find(same)
        {
            return Verdict::Revoked {
                place: revoked.place.clone(),
            };
        }
        let plain: Vec<&Entry> = for_host
            .by_ref()
            .filter(|e| e.marker == Marker::None)
            .collect();
        if plain.iter().any(same) {
            return Verdict::Known;
        }
        let recorded = plain
            .iter()
            .find(|e| e.key.algorithm() == offered.algorithm())
            .or(plain.first());
        match recorded {
            Some(e) => Verdict::Changed {
                recorded: Box::new(e.key.clone()),
                place: e.place.clone(),
            },
            None => Verdict::Unknown,
        }
    }
}

/// The names a host's keys may be recorded under: `[host]:port`, then (for a port other than
/// 22) the plain `host`, as [`KnownHosts::check`] takes them.
fn names_for(host: &str, port: u16) -> Vec<String> {
    let mut names = vec![written_name(host, port)];
    if port != 22 {
        names.push(written_name(host, 22));
    }
    names
}

/// How a host is written in known_hosts: bare for port 22, else `[host]:port`.
fn written_name(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if port == 22 {
        host
    } else {
        format!("[{host}]:{port}")
    }
}

/// Whether a comma-separated list of names, patterns and hashes names `name`: one must match
/// and no `!` pattern may.
fn matches(hosts: &str, name: &str) -> bool {
    let mut matched = false;
    for pattern in hosts.split(',') {
        if let Some(hashed) = pattern.strip_prefix("|1|") {
            matched |= hashed_matches(hashed, name);
        } else if let Some(negated) = pattern.strip_prefix('!') {
            if wildcard(&negated.to_ascii_lowercase(), name) {
                return false;
            }
        } else {
            matched |= wildcard(&pattern.to_ascii_lowercase(), name);
        }
    }
    matched
}

/// `salt|hash`, both base64: the name's HMAC-SHA1 keyed with the salt.
fn hashed_matches(hashed: &str, name: &str) -> bool {
    let Some((salt, hash)) = hashed.split_once('|') else {
        return false;
    };
    let (Ok(salt), Ok(hash)) = (
        BASE64.decode(salt.as_bytes()),
        BASE64.decode(hash.as_bytes()),
    ) else {
        return false;
    };
    Hmac::<Sha1>::new_from_slice(&salt)
        .map(|mac| {
            mac.chain_update(name.as_bytes())
                .verify_slice(&hash)
                .is_ok()
        })
        .unwrap_or(false)
}

/// The user's and the system's known_hosts files when the ssh configuration names none.
pub fn default_files() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let user: Vec<PathBuf> = match std::env::var_os("MESH_SSH_KNOWN_HOSTS") {
        Some(p) => vec![p.into()],
        // the passwd entry's home, as ssh expands `~/.ssh/known_hosts`
        None => super::local::local_home()
            .map(|h| vec![h.join(".ssh/known_hosts"), h.join(".ssh/known_hosts2")])
            .unwrap_or_default(),
    };
    let system: Vec<PathBuf> = match std::env::var_os("MESH_SSH_SYSTEM_KNOWN_HOSTS") {
        Some(p) => vec![p.into()],
        None => vec![
            "/etc/ssh/ssh_known_hosts".into(),
            "/etc/ssh/ssh_known_hosts2".into(),
        ],
    };
    (user, system)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdwlzA7ywn5+Bs51gDd4efsKL46CckJB88Fw0wAWPHb";
    const ED2: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIM3B3iDpOL53hrvTvN2DuWKI2COCDFeyXWajahfvDs5";
    const ECDSA: &str = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBGHsOsL1NtGsB1nFRW6WRhd3FFq1AMS28Ga6Z4JzXlBIFaHhpnaoyLdz7/f9+YlHersZNgiZFE5vGjRV76bNh4A=";

    fn key(text: &str) -> PublicKey {
        PublicKey::from_openssh(text).unwrap()
    }

    fn hosts(text: &str) -> KnownHosts {
        let mut k = KnownHosts::default();
        k.add(Path::new("kh"), text);
        k
    }

    /// `ssh-keygen -H` form of a name, with a fixed salt.
    fn hashed(name: &str) -> String {
        let salt = [7u8; 20];
        let mac = Hmac::<Sha1>::new_from_slice(&salt)
            .unwrap()
            .chain_update(name.as_bytes())
            .finalize()
            .into_bytes();
        format!("|1|{}|{}", BASE64.encode(&salt), BASE64.encode(&mac))
    }

    #[test]
    fn plain_hashed_listed_and_bracketed_names_are_found() {
        let k = hosts(&format!(
            "# comment\nweb,192.0.2.1 {ED}\n{} {ED}\n[192.0.2.9]:2222 {ED} c\n",
            hashed("db.example")
        ));
        for (host, port) in [
            ("web", 22),
            ("192.0.2.1", 22),
            ("db.example", 22),
            ("192.0.2.9", 2222),
        ] {
            assert_eq!(
                k.check(host, port, &key(ED)),
                Verdict::Known,
                "{host}:{port}"
            );
        }
        assert_eq!(k.check("192.0.2.9", 22, &key(ED)), Verdict::Unknown);
        assert_eq!(k.check("other", 22, &key(ED)), Verdict::Unknown);
    }

    #[test]
    fn another_key_for_the_host_is_changed_naming_the_recorded_one() {
        let k = hosts(&format!("*.lan,!gw.lan {ED}\nweb {ECDSA}\n"));
        match k.check("db.lan", 22, &key(ED2)) {
            Verdict::Changed { recorded, place } => {
                assert_eq!(recorded.key_data(), key(ED).key_data());
                assert_eq!(place, "kh:1");
            }
            v => panic!("{v:?}"),
        }
        assert_eq!(k.check("gw.lan", 22, &key(ED2)), Verdict::Unknown);
        // only an ECDSA key recorded: that is the one wanted, another type is not taken
        assert_eq!(k.keys_for("web", 22).len(), 1);
        assert_eq!(k.check("web", 22, &key(ECDSA)), Verdict::Known);
        assert!(matches!(
            k.check("web", 22, &key(ED)),
            Verdict::Changed { .. }
        ));
    }

    #[test]
    fn revoked_keys_are_refused_and_authorities_skipped() {
        let k = hosts(&format!(
            "@revoked * {ED}\nweb {ED}\n@cert-authority * {ED2}\nbroken line\n"
        ));
        assert_eq!(
            k.check("web", 22, &key(ED)),
            Verdict::Revoked {
                place: "kh:1".into()
            }
        );
        assert_eq!(k.check("db", 22, &key(ED2)), Verdict::Unknown);
    }

    #[test]
    fn a_plain_entry_with_the_offered_key_answers_for_a_port_with_no_entry_of_its_type() {
        let k = hosts(&format!("192.0.2.1 {ED}\n"));
        assert_eq!(k.check("192.0.2.1", 2222, &key(ED)), Verdict::Known);
        // another key in the plain entry: nothing is known for [addr]:2222, it is not changed
        assert_eq!(k.check("192.0.2.1", 2222, &key(ED2)), Verdict::Unknown);
        // an [addr]:port entry of the offered type decides, the plain one is not asked
        let k = hosts(&format!("192.0.2.1 {ED}\n[192.0.2.1]:2222 {ED2}\n"));
        assert!(matches!(
            k.check("192.0.2.1", 2222, &key(ED)),
            Verdict::Changed { .. }
        ));
        // only another type for [addr]:port: the plain entry with the offered key is taken
        let k = hosts(&format!("[192.0.2.1]:2222 {ECDSA}\n192.0.2.1 {ED}\n"));
        assert_eq!(k.check("192.0.2.1", 2222, &key(ED)), Verdict::Known);
        // a key revoked for the plain name is never taken for the port
        let k = hosts(&format!("@revoked 192.0.2.1 {ED}\n192.0.2.1 {ED}\n"));
        assert_ne!(k.check("192.0.2.1", 2222, &key(ED)), Verdict::Known);
    }

    #[test]
    fn the_line_holding_the_key_is_found_as_check_takes_it() {
        let k = hosts(&format!("[192.0.2.1]:2222 {ECDSA}\n192.0.2.1 {ED}\n"));
        assert_eq!(
            k.place_of("192.0.2.1", 2222, &key(ED)).as_deref(),
            Some("kh:2")
        );
        assert_eq!(
            k.place_of("192.0.2.1", 2222, &key(ECDSA)).as_deref(),
            Some("kh:1")
        );
        assert_eq!(k.place_of("192.0.2.1", 22, &key(ECDSA)), None);
        assert_eq!(k.place_of("192.0.2.1", 2222, &key(ED2)), None);
    }
}
