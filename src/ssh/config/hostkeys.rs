//! The keywords that decide which host key is trusted: UserKnownHostsFile and
//! GlobalKnownHostsFile (several files each, `~/`, `${VAR}` and `%` tokens expanded as for
//! IdentityFile), HostKeyAlias (the name looked up in known_hosts instead of the host) and
//! StrictHostKeyChecking.
//!
//! mesh never accepts an unknown key unasked: `yes` and `ask` behave as mesh always does (an
//! unknown key is refused, `mesh node trust` pins it); `no`, `off`, `false` and `accept-new`
//! are refused naming the line, since following them silently would trust a machine nobody
//! checked and ignoring them would hide that the operator's files say otherwise.

use std::path::PathBuf;

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
    ) -> Result<Vec<PathBuf>, String> {
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

/// Checks a StrictHostKeyChecking value as OpenSSH does, and refuses those that would accept a
/// key nobody checked.
pub(super) fn strict(value: &str) -> Result<(), String> {
    match value.to_ascii_lowercase().as_str() {
        "yes" | "true" | "ask" => Ok(()),
        "no" | "false" | "off" | "accept-new" => Err(format!(
            "StrictHostKeyChecking {value}: mesh never accepts an unknown host key unasked; \
             remove the line (or keep it to hosts mesh does not reach) and pin the key with \
             `mesh node trust NODE` after checking its fingerprint"
        )),
        _ => Err(format!("unsupported option {value:?}")),
    }
}

impl HostConfig {
    /// The known_hosts files for this connection, user's then system's, or `None` for either
    /// where the configuration names none (mesh's defaults then apply).
    pub fn known_hosts_files(
        &self,
        tokens: Tokens<'_>,
    ) -> Result<(Option<Files>, Option<Files>), String> {
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
        let e = bad.known_hosts_files(tokens).unwrap_err();
        assert!(e.starts_with("cfg:1: UserKnownHostsFile"), "{e}");
    }

    /// ssh takes the first StrictHostKeyChecking; mesh refuses those that accept an unknown key,
    /// naming the line, and refuses a value ssh refuses (`unsupported option "bogus"`) anywhere.
    #[test]
    fn strict_host_key_checking_that_accepts_unknown_keys_is_refused_naming_the_line() {
        for ok in ["yes", "ask", "True"] {
            assert!(lookup(&format!("StrictHostKeyChecking {ok}\n"), "a").is_ok());
        }
        for no in ["no", "off", "false", "accept-new"] {
            let e = lookup(&format!("Host a\n StrictHostKeyChecking {no}\n"), "a").unwrap_err();
            assert!(e.starts_with("cfg:2: StrictHostKeyChecking"), "{e}");
            assert!(e.contains("mesh node trust"), "{e}");
            // a block for another host does not stop this one
            assert!(lookup(&format!("Host b\n StrictHostKeyChecking {no}\n"), "a").is_ok());
        }
        assert!(lookup("StrictHostKeyChecking yes\nStrictHostKeyChecking no\n", "a").is_ok());
        let e = lookup("Host b\n StrictHostKeyChecking bogus\n", "a").unwrap_err();
        assert!(e.contains("unsupported option"), "{e}");
    }
}
