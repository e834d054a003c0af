//! OpenSSH's client configuration (`~/.ssh/config`, then `/etc/ssh/ssh_config`), read the way
//! `ssh` reads it, for the keywords mesh acts on: HostName, Port, User, IdentityFile,
//! IdentitiesOnly, ProxyJump, ProxyCommand (to refuse it), ConnectTimeout,
//! ServerAliveInterval, and those that decide which host key is trusted ([`hostkeys`]).
//!
//! The first value found for a keyword wins, reading the user's file before the system's and
//! each file top to bottom; IdentityFile adds up instead; ProxyJump and ProxyCommand share one
//! slot (the first of them wins, as in OpenSSH). `Host` takes patterns (`*`, `?`, `!` to
//! exclude); `Include` is followed ([`include`]); `Match` blocks other than `Match all` are not
//! (a block mesh cannot evaluate is skipped, as if it did not match). Keywords OpenSSH knows and
//! mesh does not act on are ignored; one OpenSSH does not know is refused ([`keywords`]).
//!
//! ssh2-config was considered: it has no IdentitiesOnly and merges only what libssh2 supports,
//! so this small reader, tested against `ssh` itself, is the one place the format is read.

mod hostkeys;
mod include;
mod keywords;
mod values;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use hostkeys::{Files, KnownFiles};
pub(crate) use values::wildcard;
use values::{percent, split, time, yes};

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
];

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {reason}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub reason: String,
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
    pub fn identities(&self, tokens: Tokens<'_>) -> Result<Vec<PathBuf>, String> {
        values::expand_paths("IdentityFile", &self.identity_files, tokens, &self.local)
    }
}

/// The parsed files, user's first.
#[derive(Debug, Clone, Default)]
pub struct SshConfig {
    blocks: Vec<Block>,
    /// Files read through `Include` so far, against [`include::MAX_FILES`].
    included: usize,
    /// Whose `~` and tokens these are.
    local: Local,
}

/// Lines that apply to a host when every one of their conditions does.
#[derive(Debug, Clone)]
struct Block {
    path: PathBuf,
    /// The block's own `Host`/`Match`, after those of the blocks that include its file.
    conditions: Vec<Condition>,
    lines: Vec<(usize, String, Vec<String>)>,
}

#[derive(Debug, Clone)]
enum Condition {
    /// `Host` patterns.
    Host(Vec<String>),
    /// A `Match` mesh cannot evaluate: never applies.
    Never,
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
                        reason: e.reason(),
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
        outer: &[Condition],
        depth: usize,
    ) -> Result<(), ConfigError> {
        let start = |own: Option<Condition>| Block {
            path: path.to_path_buf(),
            conditions: outer.iter().cloned().chain(own).collect(),
            lines: Vec::new(),
        };
        let mut block = start(None);
        for (n, raw) in text.lines().enumerate() {
            let line = n + 1;
            let fail = |reason: String| ConfigError {
                path: path.to_path_buf(),
                line: Some(line),
                reason,
            };
            let Some((keyword, args)) = split(raw).map_err(fail)? else {
                continue;
            };
            match keyword.as_str() {
                "host" => {
                    if args.is_empty() {
                        return Err(fail("Host without a pattern".into()));
                    }
                    let next = start(Some(Condition::Host(args)));
                    self.blocks.push(std::mem::replace(&mut block, next));
                }
                "match" => {
                    let all = args.len() == 1 && args[0].eq_ignore_ascii_case("all");
                    let next = start((!all).then_some(Condition::Never));
                    self.blocks.push(std::mem::replace(&mut block, next));
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

    /// Reads every file an `Include` line names, in OpenSSH's order.
    fn include(
        &mut self,
        args: &[String],
        dir: &Path,
        conditions: &[Condition],
        depth: usize,
    ) -> Result<(), Included> {
        if args.is_empty() {
            return Err(Included::Here("Include without a file".into()));
        }
        if depth >= include::MAX_DEPTH {
            return Err(Included::Here(format!(
                "Include nested more than {} deep: do the files include each other?",
                include::MAX_DEPTH
            )));
        }
        for arg in args {
            for file in include::expand(arg, dir, &self.local).map_err(Included::Here)? {
                let text = match super::files::read_text(&file) {
                    Ok(text) => text,
                    Err(e) if e.is_missing() => continue,
                    Err(e) => return Err(Included::Here(format!("Include {arg}: {e}"))),
                };
                self.included += 1;
                if self.included > include::MAX_FILES {
                    return Err(Included::Here(format!(
                        "Include reads more than {} files in all",
                        include::MAX_FILES
                    )));
                }
                self.read(&file, &text, dir, conditions, depth + 1)
                    .map_err(Included::There)?;
            }
        }
        Ok(())
    }

    /// What applies to `host` (the name as given, before any HostName).
    ///
    /// As `ssh` does, every line of every file is checked, whether or not its block applies: a
    /// keyword OpenSSH does not know (unless an `IgnoreUnknown` that applies came before it), a
    /// keyword mesh reads given no value, more values than it takes, or a value OpenSSH refuses.
    pub fn lookup(&self, host: &str) -> Result<HostConfig, ConfigError> {
        let mut found = HostConfig {
            local: self.local.clone(),
            ..HostConfig::default()
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut ignore_unknown: Option<Vec<String>> = None;
        for block in &self.blocks {
            let applies = block.applies_to(host);
            for (line, keyword, args) in &block.lines {
                let fail = |reason: String| ConfigError {
                    path: block.path.clone(),
                    line: Some(*line),
                    reason,
                };
                if !keywords::known(keyword) {
                    if ignore_unknown
                        .as_ref()
                        .is_some_and(|patterns| host_matches(patterns, keyword))
                    {
                        continue;
                    }
                    return Err(fail(format!("Bad configuration option: {keyword}")));
                }
                if keyword == "ignoreunknown" && applies && ignore_unknown.is_none() {
                    // matched against the keyword in lower case, as OpenSSH does
                    ignore_unknown = Some(
                        args.iter()
                            .flat_map(|a| a.split(','))
                            .map(str::to_ascii_lowercase)
                            .collect(),
                    );
                }
                if !READ.contains(&keyword.as_str()) {
                    continue;
                }
                let value = Value::read(keyword, args).map_err(fail)?;
                if !applies {
                    continue;
                }
                let at = || format!("{}:{line}", block.path.display());
                if let Value::IdentityFile(file) = value {
                    let duplicate = found.identity_files.iter().any(|w| w.value == file);
                    if !file.eq_ignore_ascii_case("none") && !duplicate {
                        found.identity_files.push(Written {
                            value: file,
                            at: at(),
                        });
                    }
                    continue;
                }
                let slot = match keyword.as_str() {
                    "proxycommand" => "proxyjump",
                    other => other,
                };
                if seen.insert(slot) {
                    found.set(value, host, at()).map_err(fail)?;
                    found.at.insert(slot.to_string(), at());
                }
            }
        }
        Ok(found)
    }
}

/// One line's value of a keyword mesh reads, checked as OpenSSH checks it.
enum Value {
    HostName(String),
    Port(u16),
    User(String),
    IdentityFile(String),
    IdentitiesOnly(bool),
    /// The hops, empty for `none`.
    ProxyJump(Vec<String>),
    /// The command, `None` for `none`.
    ProxyCommand(Option<String>),
    ConnectTimeout(Duration),
    ServerAliveInterval(Duration),
    /// UserKnownHostsFile (`true`) or GlobalKnownHostsFile: the files as written.
    KnownHosts(bool, Vec<String>),
    HostKeyAlias(String),
    /// StrictHostKeyChecking's value, checked when it is the one that applies.
    Strict(String),
}

impl Value {
    fn read(keyword: &str, args: &[String]) -> Result<Value, String> {
        let Some(first) = args.first() else {
            return Err(format!("{keyword} without a value"));
        };
        // ProxyCommand is a command line; ProxyJump, as in OpenSSH, reads its first word only
        let many = [
            "proxycommand",
            "proxyjump",
            "userknownhostsfile",
            "globalknownhostsfile",
        ];
        if args.len() > 1 && !many.contains(&keyword) {
            return Err(format!("keyword {keyword} extra arguments at end of line"));
        }
        Ok(match keyword {
            "hostname" => Value::HostName(first.clone()),
            "port" => Value::Port(values::port(first)?),
            "user" => Value::User(first.clone()),
            "identityfile" => Value::IdentityFile(first.clone()),
            "identitiesonly" => Value::IdentitiesOnly(yes(first)?),
            "proxyjump" => Value::ProxyJump(if first.eq_ignore_ascii_case("none") {
                Vec::new()
            } else {
                first.split(',').map(str::to_string).collect()
            }),
            "proxycommand" => {
                Value::ProxyCommand((!first.eq_ignore_ascii_case("none")).then(|| args.join(" ")))
            }
            "connecttimeout" => Value::ConnectTimeout(time(first)?),
            "userknownhostsfile" | "globalknownhostsfile" => {
                Value::KnownHosts(keyword == "userknownhostsfile", args.to_vec())
            }
            "hostkeyalias" => Value::HostKeyAlias(first.to_ascii_lowercase()),
            "stricthostkeychecking" => {
                // an unknown value is refused wherever it is, as ssh refuses it
                if let Err(e) = hostkeys::strict(first)
                    && e.starts_with("unsupported")
                {
                    return Err(e);
                }
                Value::Strict(first.clone())
            }
            _ => Value::ServerAliveInterval(time(first)?),
        })
    }
}

impl HostConfig {
    /// Takes the first value of a keyword for `host`, written at `at`.
    fn set(&mut self, value: Value, host: &str, at: String) -> Result<(), String> {
        match value {
            Value::HostName(name) => {
                let name = percent(&name, |t| (t == 'h').then(|| host.to_ascii_lowercase()));
                // lowered after its tokens are expanded, as ssh lowers the name it connects to
                let name = name.map_err(|why| format!("HostName: {why}"))?;
                self.host_name = Some(name.to_ascii_lowercase())
            }
            Value::Port(port) => self.port = Some(port),
            Value::User(user) => self.user = Some(user),
            Value::IdentitiesOnly(only) => self.identities_only = Some(only),
            Value::ProxyJump(hops) => {
                self.proxy_jump_at = Some(at);
                self.proxy_jump = Some(hops);
            }
            Value::ProxyCommand(command) => {
                self.proxy_command = command.map(|value| Written { value, at })
            }
            // 0 is OpenSSH's "no ConnectTimeout": mesh's own limit applies
            Value::ConnectTimeout(t) => self.connect_timeout = Some(t).filter(|t| !t.is_zero()),
            Value::ServerAliveInterval(t) => self.server_alive_interval = Some(t),
            Value::KnownHosts(user, files) => {
                let files = Some(KnownFiles { files, at });
                match user {
                    true => self.user_known_hosts = files,
                    false => self.global_known_hosts = files,
                }
            }
            Value::HostKeyAlias(alias) => self.host_key_alias = Some(alias),
            Value::Strict(value) => hostkeys::strict(&value)?,
            Value::IdentityFile(_) => {}
        }
        Ok(())
    }
}

/// Why an Include failed: on its own line, or inside a file it reads (already placed).
enum Included {
    Here(String),
    There(ConfigError),
}

impl Block {
    /// As in OpenSSH, `Host` patterns are matched against the name as given, case and all.
    fn applies_to(&self, host: &str) -> bool {
        self.conditions.iter().all(|c| match c {
            Condition::Never => false,
            Condition::Host(patterns) => host_matches(patterns, host),
        })
    }
}

/// Whether a pattern list takes `text`: one pattern must match, no `!` pattern may.
fn host_matches(patterns: &[String], text: &str) -> bool {
    let mut matched = false;
    for p in patterns {
        match p.strip_prefix('!') {
            Some(negated) if wildcard(negated, text) => return false,
            Some(_) => {}
            None => matched |= wildcard(p, text),
        }
    }
    matched
}

#[cfg(test)]
mod home_tests;
#[cfg(test)]
mod openssh_tests;
#[cfg(test)]
mod tests;
