//! OpenSSH's client configuration (`~/.ssh/config`, then `/etc/ssh/ssh_config`), read the way
//! `ssh` reads it, for the keywords mesh acts on: HostName, Port, User, IdentityFile,
//! IdentitiesOnly, ProxyJump, ProxyCommand (to refuse it), ConnectTimeout,
//! ServerAliveInterval, and those that decide which host key is trusted ([`hostkeys`]).
//!
//! The first value found for a keyword wins, reading the user's file before the system's and
//! each file top to bottom ([`lookup`]); IdentityFile adds up instead; ProxyJump and
//! ProxyCommand share one slot (the first of them wins, as in OpenSSH). `Host` and `Match`
//! lines are evaluated in their place ([`matching`]); `Include` is followed ([`include`]).
//! Keywords OpenSSH knows and mesh does not act on are ignored; one OpenSSH does not know is
//! refused ([`keywords`]).
//!
//! ssh2-config was considered: it has no IdentitiesOnly and merges only what libssh2 supports,
//! so this small reader, tested against `ssh` itself, is the one place the format is read.

mod hostkeys;
mod include;
mod keywords;
mod lookup;
mod matching;
mod reason;
mod values;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use hostkeys::{Files, KnownFiles};
use matching::Condition;
pub use matching::{ExecRefused, MatchError};
pub use reason::Reason;
use values::split;
pub(crate) use values::wildcard;
pub use values::{ExpandError, ValueError};

pub use super::local::Local;

/// The keywords mesh acts on (lower case); the others are left to OpenSSH.
const READ: &[&str] = &[
    "hostname",
    "port",
    "user",
    "identityfile",
    "identitiesonly",
    "proxyjump",
    "proxycommand",
    "connecttimeout",
    "serveraliveinterval",
    "userknownhostsfile",
    "globalknownhostsfile",
    "hostkeyalias",
    "stricthostkeychecking",
    "canonicalizehostname",
];

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {reason}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: Option<usize>,
    /// Boxed: every push's and deploy's error holds a `ConfigError`, and stays small.
    pub reason: Box<Reason>,
}

/// What the configuration says for one host; `None` where it says nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostConfig {
    pub host_name: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    /// Every IdentityFile of every matching block, in order, as written (`none` left out):
    /// its `%` tokens depend on the connection, see [`HostConfig::identities`].
    pub identity_files: Vec<Written>,
    pub identities_only: Option<bool>,
    /// The jump hosts in order; `Some(empty)` for `ProxyJump none`.
    pub proxy_jump: Option<Vec<String>>,
    /// Where that ProxyJump is written: `file:line`.
    pub proxy_jump_at: Option<String>,
    /// A ProxyCommand (other than `none`) that came before any ProxyJump: mesh does not run it.
    pub proxy_command: Option<Written>,
    pub connect_timeout: Option<Duration>,
    /// `Some(ZERO)` turns keepalives off, as `ServerAliveInterval 0` does.
    pub server_alive_interval: Option<Duration>,
    /// UserKnownHostsFile and GlobalKnownHostsFile as written; `None` where not given.
    pub user_known_hosts: Option<KnownFiles>,
    pub global_known_hosts: Option<KnownFiles>,
    /// HostKeyAlias, lower case as ssh uses it.
    pub host_key_alias: Option<String>,
    /// The StrictHostKeyChecking that applies, lower case, and where: see
    /// [`HostConfig::accepts_unknown`].
    pub strict_host_key_checking: Option<Written>,
    /// CanonicalizeHostname `yes` or `always`: ssh then reads its files a second time, as for
    /// `Match final` (mesh rewrites no name with CanonicalDomains: that takes DNS).
    pub canonicalize: Option<bool>,
    /// Where each value above was written, `file:line`, by keyword in lower case
    /// (`hostname`, `port` …; `proxyjump` for the ProxyJump/ProxyCommand slot).
    pub at: std::collections::BTreeMap<String, String>,
    /// The local user the tokens and `~` of [`HostConfig::identities`] stand for.
    pub local: Local,
}

/// A value as written in a file, and where: `file:line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub value: String,
    pub at: String,
}

/// What IdentityFile's `%` tokens stand for on one connection, as OpenSSH expands them.
#[derive(Debug, Clone, Copy)]
pub struct Tokens<'a> {
    /// `%n`: the host as given, before HostName.
    pub alias: &'a str,
    /// `%h`: the host connected to, after HostName.
    pub host: &'a str,
    /// `%r`: the user logged in as (one given on the command line wins over User).
    pub user: &'a str,
    /// `%p`.
    pub port: u16,
}

impl HostConfig {
    /// The IdentityFiles with `~/`, `~user/`, `${VAR}` and the `%` tokens expanded for this
    /// connection: `%h`, `%n`, `%p`, `%r`, `%d` (the passwd entry's home), `%u` (its name), `%i`
    /// (local uid) and `%%`. Another token is refused naming where it is written, as OpenSSH
    /// refuses it.
    pub fn identities(&self, tokens: Tokens<'_>) -> Result<Vec<PathBuf>, ExpandError> {
        values::expand_paths("IdentityFile", &self.identity_files, tokens, &self.local)
    }
}

/// The parsed files, user's first.
#[derive(Debug, Clone, Default)]
pub struct SshConfig {
    blocks: Vec<Block>,
    /// Every `Host` and `Match` line, where it is written (file, line): blocks name them.
    conditions: Vec<(PathBuf, usize, Condition)>,
    /// Whether a `Match final` asks for ssh's second pass.
    final_pass: bool,
    /// Files read through `Include` so far, against [`include::MAX_FILES`].
    included: usize,
    /// Whose `~` and tokens these are.
    local: Local,
}

/// Lines that apply to a host when every one of their conditions does.
#[derive(Debug, Clone)]
struct Block {
    path: PathBuf,
    /// The block's own `Host`/`Match` (in [`SshConfig::conditions`]), after those of the
    /// blocks that include its file.
    conditions: Vec<usize>,
    lines: Vec<(usize, String, Vec<String>)>,
}

impl SshConfig {
    /// The operator's files: `MESH_SSH_CONFIG` or `~/.ssh/config` (a relative Include is read
    /// from `~/.ssh`), then `MESH_SSH_SYSTEM_CONFIG` or `/etc/ssh/ssh_config` (from `/etc/ssh`).
    /// A file that is not there is no configuration.
    pub fn load() -> Result<SshConfig, ConfigError> {
        Self::load_as(Local::current())
    }

    /// [`SshConfig::load`] for `local`: the user's file is in its passwd home, as ssh reads
    /// it whatever `$HOME` says; a relative Include from `$HOME/.ssh`, as ssh's glob finds it.
    pub fn load_as(local: Local) -> Result<SshConfig, ConfigError> {
        let user = std::env::var_os("MESH_SSH_CONFIG")
            .map(PathBuf::from)
            .or_else(|| local.home.as_ref().map(|h| h.join(".ssh/config")));
        let system = std::env::var_os("MESH_SSH_SYSTEM_CONFIG")
            .map_or_else(|| PathBuf::from("/etc/ssh/ssh_config"), PathBuf::from);
        let mut config = SshConfig::for_user(local);
        let files = user
            .map(|u| (u, include::user_dir(&config.local)))
            .into_iter()
            .chain([(system, PathBuf::from("/etc/ssh"))]);
        for (path, dir) in files {
            match super::files::read_text(&path) {
                Ok(text) => config.add_from(&path, &text, &dir)?,
                Err(e) if e.is_missing() => {}
                Err(e) => {
                    return Err(ConfigError {
                        path,
                        line: None,
                        reason: Box::new(Reason::Unreadable(e)),
                    });
                }
            }
        }
        Ok(config)
    }

    /// No files yet, `~` and the tokens standing for `local`.
    pub fn for_user(local: Local) -> SshConfig {
        SshConfig {
            blocks: Vec::new(),
            conditions: Vec::new(),
            final_pass: false,
            included: 0,
            local,
        }
    }

    /// Reads one more file's text (a user's file: a relative Include is read from `~/.ssh`),
    /// after those already read.
    pub fn add(&mut self, path: &Path, text: &str) -> Result<(), ConfigError> {
        let dir = include::user_dir(&self.local);
        self.add_from(path, text, &dir)
    }

    /// Reads one more file's text, a relative Include read from `dir`.
    pub fn add_from(&mut self, path: &Path, text: &str, dir: &Path) -> Result<(), ConfigError> {
        self.read(path, text, dir, &[], 0)
    }

    /// Reads a file whose lines apply only where `outer` does (the conditions of the block
    /// that includes it), `depth` Includes down.
    fn read(
        &mut self,
        path: &Path,
        text: &str,
        dir: &Path,
        outer: &[usize],
        depth: usize,
    ) -> Result<(), ConfigError> {
        let start = |own: Option<usize>| Block {
            path: path.to_path_buf(),
            conditions: outer.iter().cloned().chain(own).collect(),
            lines: Vec::new(),
        };
        let mut block = start(None);
        for (n, raw) in text.lines().enumerate() {
            let line = n + 1;
            let fail = |reason: Reason| ConfigError {
                path: path.to_path_buf(),
                line: Some(line),
                reason: Box::new(reason),
            };
            let Some((keyword, args)) = split(raw).map_err(|e| fail(e.into()))? else {
                continue;
            };
            match keyword.as_str() {
                "host" => {
                    if args.is_empty() {
                        return Err(fail(Reason::NoPattern));
                    }
                    let id = self.condition(path, line, Condition::Host(args));
                    self.blocks
                        .push(std::mem::replace(&mut block, start(Some(id))));
                }
                "match" => {
                    let criteria = matching::parse_match(&args).map_err(|e| fail(e.into()))?;
                    self.final_pass |= matching::wants_final(&criteria);
                    let id = self.condition(path, line, Condition::Match(criteria));
                    self.blocks
                        .push(std::mem::replace(&mut block, start(Some(id))));
                }
                "include" => {
                    // what follows the Include still belongs to the block it is in
                    let conditions = block.conditions.clone();
                    let rest = Block {
                        path: path.to_path_buf(),
                        conditions: conditions.clone(),
                        lines: Vec::new(),
                    };
                    self.blocks.push(std::mem::replace(&mut block, rest));
                    self.include(&args, dir, &conditions, depth)
                        .map_err(|e| match e {
                            Included::Here(reason) => fail(reason),
                            Included::There(e) => e,
                        })?;
                }
                _ => block.lines.push((line, keyword, args)),
            }
        }
        self.blocks.push(block);
        Ok(())
    }

    /// Keeps a `Host` or `Match` line, written at `path:line`; its index.
    fn condition(&mut self, path: &Path, line: usize, condition: Condition) -> usize {
        self.conditions.push((path.to_path_buf(), line, condition));
        self.conditions.len() - 1
    }

    /// Reads every file an `Include` line names, in OpenSSH's order.
    fn include(
        &mut self,
        args: &[String],
        dir: &Path,
        conditions: &[usize],
        depth: usize,
    ) -> Result<(), Included> {
        if args.is_empty() {
            return Err(Included::Here(Reason::NoIncludeFile));
        }
        if depth >= include::MAX_DEPTH {
            return Err(Included::Here(Reason::TooDeep));
        }
        for arg in args {
            for file in include::expand(arg, dir, &self.local).map_err(Included::Here)? {
                let text = match super::files::read_text(&file) {
                    Ok(text) => text,
                    Err(e) if e.is_missing() => continue,
                    Err(error) => {
                        return Err(Included::Here(Reason::Include {
                            arg: arg.clone(),
                            error,
                        }));
                    }
                };
                self.included += 1;
                if self.included > include::MAX_FILES {
                    return Err(Included::Here(Reason::TooMany));
                }
                self.read(&file, &text, dir, conditions, depth + 1)
                    .map_err(Included::There)?;
            }
        }
        Ok(())
    }
}

/// Why an Include failed: on its own line, or inside a file it reads (already placed).
enum Included {
    Here(Reason),
    There(ConfigError),
}

#[cfg(test)]
mod home_tests;
#[cfg(test)]
mod match_tests;
#[cfg(test)]
mod openssh_tests;
#[cfg(test)]
mod tests;
