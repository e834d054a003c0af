//! Who the operator is on this machine, as OpenSSH takes it: the passwd entry of this process's
//! user (getpwuid), not `$USER` or `$HOME`. `%u`, `%d`, `~/` in an IdentityFile, the user's own
//! `~/.ssh/config`, the known_hosts and default keys and a jump host's default user are that
//! entry's, so `sudo -E`, `env HOME=…` and cron read the files `ssh` reads. Only `Include`
//! follows `$HOME`, because OpenSSH expands it with glob(3)'s `GLOB_TILDE`, which does.
//!
//! NSS is called here, in the operator; the rule of no NSS calls is the static helper's.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::unistd::{Uid, User};

/// The local user as read once at the edge, passed down so tests can give a fake entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Local {
    /// The passwd entry's name (`%u`); `None` if this uid has no entry.
    pub name: Option<String>,
    /// The passwd entry's home (`%d`, `~/`); `None` if this uid has no entry.
    pub home: Option<PathBuf>,
    /// `%i`.
    pub uid: u32,
    /// `$HOME` (unset or empty is `None`): only `Include ~/…` reads it.
    pub env_home: Option<PathBuf>,
}

impl Local {
    /// This process's user, read from passwd and the environment the first time.
    pub fn current() -> Local {
        static LOCAL: OnceLock<Local> = OnceLock::new();
        LOCAL
            .get_or_init(|| {
                let uid = Uid::current();
                // no entry (or NSS failing) leaves name and home unknown; a use names it
                let entry = User::from_uid(uid).ok().flatten();
                Local {
                    name: entry.as_ref().map(|u| u.name.clone()),
                    home: entry.map(|u| u.dir),
                    uid: uid.as_raw(),
                    env_home: std::env::var_os("HOME")
                        .filter(|h| !h.is_empty())
                        .map(PathBuf::from),
                }
            })
            .clone()
    }

    /// The home `~user/` names: this user's own from this entry, another's from passwd
    /// (getpwnam), as OpenSSH's tilde expansion does.
    pub fn home_of(&self, user: &str) -> Option<PathBuf> {
        if self.name.as_deref() == Some(user) {
            return self.home.clone();
        }
        User::from_name(user).ok().flatten().map(|u| u.dir)
    }

    /// Where `Include ~/…` looks: `$HOME`, else the passwd home, as glob(3) takes `~`.
    pub fn include_home(&self) -> Option<&Path> {
        self.env_home.as_deref().or(self.home.as_deref())
    }

    /// `path` with a leading `~/` or `~user/` replaced by that home (`~` alone too), as
    /// OpenSSH's tilde_expand_filename does; `Err` names the user with no home.
    pub fn tilde(&self, path: &str) -> Result<String, TildeError> {
        let Some(rest) = path.strip_prefix('~') else {
            return Ok(path.to_string());
        };
        let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let home = if user.is_empty() {
            self.home.clone().ok_or(TildeError::NoEntry(self.uid))?
        } else {
            self.home_of(user)
                .ok_or_else(|| TildeError::NoUser(user.to_string()))?
        };
        let home = home.to_string_lossy().trim_end_matches('/').to_string();
        Ok(if tail.is_empty() && !rest.contains('/') {
            home
        } else {
            format!("{home}/{tail}")
        })
    }
}

/// A `~` or `~user` with no home to stand for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TildeError {
    /// `~`: this uid has no passwd entry.
    #[error("~ is the passwd entry's home, and uid {0} has no passwd entry")]
    NoEntry(u32),
    #[error("~{0}: no such user in passwd")]
    NoUser(String),
}

impl Default for Local {
    /// This process's user: what every configuration not given another one reads.
    fn default() -> Local {
        Local::current()
    }
}

/// The local user name, the passwd entry's, as OpenSSH's default user; `None` if this uid has
/// no entry.
pub fn local_user() -> Option<String> {
    Local::current().name
}

/// The passwd entry's home, where ssh's own files are (`~/.ssh/known_hosts`, the default keys).
pub fn local_home() -> Option<PathBuf> {
    Local::current().home
}
