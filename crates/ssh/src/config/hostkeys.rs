//! The keywords that decide which host key is trusted: UserKnownHostsFile and
//! GlobalKnownHostsFile (several files each, `~/`, `${VAR}` and `%` tokens expanded as for
//! IdentityFile), HostKeyAlias (the name looked up in known_hosts instead of the host) and
//! StrictHostKeyChecking.
//!
//! mesh never accepts an unknown key unasked: `yes` and `ask` behave as mesh always does (an
//! unknown key is refused, `mesh node trust` pins it). `no`, `off`, `false` and `accept-new`
//! change nothing where the key is pinned (the pin decides, as it does for `node trust`
//! itself) or where known_hosts holds it; where known_hosts decides and has no entry, the
//! refusal names the line ssh would have followed ([`HostConfig::accepts_unknown`]), so the
//! operator sees that the files say otherwise.

use std::path::PathBuf;

use super::values::{ExpandError, ValueError};
use super::{HostConfig, Local, Tokens, Written};

/// The lines of a file that list known_hosts files: the files as written, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFiles {
    pub files: Vec<String>,
    pub at: String,
}

impl KnownFiles {
    /// The files with `~/`, `${VAR}` and `%` tokens expanded for this connection, as OpenSSH
    /// expands UserKnownHostsFile.
    pub fn expand(
        &self,
        keyword: &str,
        tokens: Tokens<'_>,
        local: &Local,
    ) -> Result<Vec<PathBuf>, ExpandError> {
        let written: Vec<Written> = self
            .files
            .iter()
            .map(|value| Written {
                value: value.clone(),
                at: self.at.clone(),
            })
            .collect();
        super::values::expand_paths(keyword, &written, tokens, local)
    }
}

/// Expanded known_hosts files, in order.
pub type Files = Vec<PathBuf>;

/// Checks a StrictHostKeyChecking value as OpenSSH does (`unsupported option` otherwise).
pub(super) fn strict(value: &str) -> Result<(), ValueError> {
    match value.to_ascii_lowercase().as_str() {
        "yes" | "true" | "ask" | "no" | "false" | "off" | "accept-new" => Ok(()),
        _ => Err(ValueError::Unsupported(value.to_string())),
    }
}

impl HostConfig {
    /// The StrictHostKeyChecking that applies, where it would have ssh accept an unknown key:
    /// `StrictHostKeyChecking VALUE (file:line)`, for the refusal to name.
    pub fn accepts_unknown(&self) -> Option<String> {
        let strict = self.strict_host_key_checking.as_ref()?;
        matches!(strict.value.as_str(), "no" | "false" | "off" | "accept-new")
            .then(|| format!("StrictHostKeyChecking {} ({})", strict.value, strict.at))
    }

    /// The known_hosts files for this connection, user's then system's, or `None` for either
    /// where the configuration names none (mesh's defaults then apply).
    pub fn known_hosts_files(
        &self,
        tokens: Tokens<'_>,
    ) -> Result<(Option<Files>, Option<Files>), ExpandError> {
        let user = self
            .user_known_hosts
            .as_ref()
            .map(|k| k.expand("UserKnownHostsFile", tokens, &self.local))
            .transpose()?;
        let global = self
            .global_known_hosts
            .as_ref()
            .map(|k| k.expand("GlobalKnownHostsFile", tokens, &self.local))
            .transpose()?;
        Ok((user, global))
    }
}

#[cfg(test)]
mod tests {
    use super::super::SshConfig;
    use super::*;
    use std::path::Path;

    fn lookup(text: &str, host: &str) -> Result<HostConfig, String> {
        let mut c = SshConfig::default();
        c.add(Path::new("cfg"), text).map_err(|e| e.to_string())?;
        c.lookup(host).map_err(|e| e.to_string())
    }

    /// `ssh -G -F cfg a` shows `userknownhostsfile /root/kh1 /root/kh2 /tmp/10.0.0.1-22-bob-a`,
    /// `globalknownhostsfile /etc/g1 /etc/g2` and `hostkeyalias alias1`.
    #[test]
    fn known_hosts_files_and_alias_are_read_as_ssh_reads_them() {
        let cfg = lookup(
            "Host a\n  UserKnownHostsFile ~/kh1 %d/kh2 /tmp/%h-%p-%r-%n\n  HostKeyAlias Alias1\n\
             GlobalKnownHostsFile /etc/g1 /etc/g2\n  HostName 10.0.0.1\n  User bob\n\
             UserKnownHostsFile /ignored\n",
            "a",
        )
        .unwrap();
        let home = std::env::var("HOME").unwrap_or_default();
        let tokens = Tokens {
            alias: "a",
            host: "10.0.0.1",
            user: "bob",
            port: 22,
        };
        let (user, global) = cfg.known_hosts_files(tokens).unwrap();
        let want: Vec<PathBuf> = [
            format!("{home}/kh1"),
            format!("{home}/kh2"),
            "/tmp/10.0.0.1-22-bob-a".into(),
        ]
        .map(PathBuf::from)
        .into();
        assert_eq!(user, Some(want));
        assert_eq!(global, Some(vec!["/etc/g1".into(), "/etc/g2".into()]));
        assert_eq!(cfg.host_key_alias.as_deref(), Some("alias1"));
        assert_eq!(cfg.at.get("userknownhostsfile").unwrap(), "cfg:2");
        let none = lookup("Host other\n  UserKnownHostsFile /x\n", "a").unwrap();
        assert_eq!(none.known_hosts_files(tokens).unwrap(), (None, None));
        let bad = lookup("UserKnownHostsFile /kh/%z\n", "a").unwrap();
        let e = bad.known_hosts_files(tokens).unwrap_err().to_string();
        assert!(e.starts_with("cfg:1: UserKnownHostsFile"), "{e}");
    }

    /// ssh takes the first StrictHostKeyChecking; one that accepts an unknown key is no
    /// refusal of the configuration (a pinned key decides), but is kept for the refusal of an
    /// unknown key to name; a value ssh refuses (`unsupported option "bogus"`) is refused
    /// anywhere.
    #[test]
    fn strict_host_key_checking_that_accepts_unknown_keys_is_kept_with_its_line() {
        for ok in ["yes", "ask", "True"] {
            let cfg = lookup(&format!("StrictHostKeyChecking {ok}\n"), "a").unwrap();
            assert_eq!(cfg.accepts_unknown(), None, "{ok}");
        }
        for no in ["no", "off", "false", "accept-new"] {
            let cfg = lookup(&format!("Host a\n StrictHostKeyChecking {no}\n"), "a").unwrap();
            assert_eq!(
                cfg.accepts_unknown(),
                Some(format!("StrictHostKeyChecking {no} (cfg:2)"))
            );
            // a block for another host does not apply to this one
            let other = lookup(&format!("Host b\n StrictHostKeyChecking {no}\n"), "a").unwrap();
            assert_eq!(other.accepts_unknown(), None);
        }
        let first = lookup("StrictHostKeyChecking yes\nStrictHostKeyChecking no\n", "a").unwrap();
        assert_eq!(first.accepts_unknown(), None);
        let e = lookup("Host b\n StrictHostKeyChecking bogus\n", "a").unwrap_err();
        assert!(e.contains("unsupported option"), "{e}");
    }
}
