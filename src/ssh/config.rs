//! OpenSSH's client configuration (`~/.ssh/config`, then `/etc/ssh/ssh_config`), read the way
//! `ssh` reads it, for the keywords mesh acts on: HostName, Port, User, IdentityFile,
//! IdentitiesOnly, ProxyJump, ConnectTimeout and ServerAliveInterval.
//!
//! The first value found for a keyword wins, reading the user's file before the system's and
//! each file top to bottom; IdentityFile adds up instead. `Host` takes patterns (`*`, `?`, `!`
//! to exclude); `Match` blocks other than `Match all` and `Include` are not followed (a block
//! mesh cannot evaluate is skipped, as if it did not match). Keywords mesh does not act on are
//! ignored.
//!
//! ssh2-config was considered: it has no IdentitiesOnly and merges only what libssh2 supports,
//! so this small reader, tested below, is the one place the format is read.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The keywords mesh acts on (lower case); the others are left to OpenSSH.
const READ: &[&str] = &[
    "hostname",
    "port",
    "user",
    "identityfile",
    "identitiesonly",
    "proxyjump",
    "connecttimeout",
    "serveraliveinterval",
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
    pub connect_timeout: Option<Duration>,
    /// `Some(ZERO)` turns keepalives off, as `ServerAliveInterval 0` does.
    pub server_alive_interval: Option<Duration>,
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
    /// The IdentityFiles with `~/` and the `%` tokens expanded for this connection: `%h`, `%n`,
    /// `%p`, `%r`, `%d` (home), `%u` (local user), `%i` (local uid) and `%%`. Another token is
    /// refused naming where it is written, as OpenSSH refuses it.
    pub fn identities(&self, tokens: Tokens<'_>) -> Result<Vec<PathBuf>, String> {
        let home = home()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.identity_files
            .iter()
            .map(|written| {
                let path = match written.value.strip_prefix("~/") {
                    Some(rest) => format!("{home}/{rest}"),
                    None => written.value.clone(),
                };
                percent(&path, |token| match token {
                    'h' => Some(tokens.host.to_string()),
                    'n' => Some(tokens.alias.to_string()),
                    'p' => Some(tokens.port.to_string()),
                    'r' => Some(tokens.user.to_string()),
                    'd' => Some(home.clone()),
                    'u' => super::local_user(),
                    'i' => local_uid(),
                    _ => None,
                })
                .map(PathBuf::from)
                .map_err(|why| format!("{}: IdentityFile {:?}: {why}", written.at, written.value))
            })
            .collect()
    }
}

/// The parsed files, user's first.
#[derive(Debug, Clone, Default)]
pub struct SshConfig {
    blocks: Vec<Block>,
}

#[derive(Debug, Clone)]
struct Block {
    path: PathBuf,
    /// `None`: every host (lines before the first `Host`, or `Match all`).
    patterns: Option<Vec<String>>,
    /// A `Match` mesh cannot evaluate: never applies.
    never: bool,
    lines: Vec<(usize, String, Vec<String>)>,
}

impl SshConfig {
    /// The operator's files: `MESH_SSH_CONFIG` or `~/.ssh/config`, then `MESH_SSH_SYSTEM_CONFIG`
    /// or `/etc/ssh/ssh_config`. A file that is not there is no configuration.
    pub fn load() -> Result<SshConfig, ConfigError> {
        let user = std::env::var_os("MESH_SSH_CONFIG")
            .map(PathBuf::from)
            .or_else(|| home().map(|h| h.join(".ssh/config")));
        let system = std::env::var_os("MESH_SSH_SYSTEM_CONFIG")
            .map_or_else(|| PathBuf::from("/etc/ssh/ssh_config"), PathBuf::from);
        let mut config = SshConfig::default();
        for path in user.into_iter().chain([system]) {
            match super::files::read_text(&path) {
                Ok(text) => config.add(&path, &text)?,
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

    /// Reads one more file's text, after those already read.
    pub fn add(&mut self, path: &Path, text: &str) -> Result<(), ConfigError> {
        let mut block = Block {
            path: path.to_path_buf(),
            patterns: None,
            never: false,
            lines: Vec::new(),
        };
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
                "host" | "match" => {
                    let next = Block {
                        path: path.to_path_buf(),
                        patterns: (keyword == "host").then(|| args.clone()),
                        never: keyword == "match"
                            && !(args.len() == 1 && args[0].eq_ignore_ascii_case("all")),
                        lines: Vec::new(),
                    };
                    if keyword == "host" && args.is_empty() {
                        return Err(fail("Host without a pattern".into()));
                    }
                    self.blocks.push(std::mem::replace(&mut block, next));
                }
                _ => block.lines.push((line, keyword, args)),
            }
        }
        self.blocks.push(block);
        Ok(())
    }

    /// What applies to `host` (the name as given, before any HostName).
    pub fn lookup(&self, host: &str) -> Result<HostConfig, ConfigError> {
        let mut found = HostConfig::default();
        let mut seen = std::collections::BTreeSet::new();
        for block in self.blocks.iter().filter(|b| b.applies_to(host)) {
            for (line, keyword, args) in &block.lines {
                let fail = |reason: String| ConfigError {
                    path: block.path.clone(),
                    line: Some(*line),
                    reason,
                };
                if !READ.contains(&keyword.as_str()) {
                    continue;
                }
                let Some(first) = args.first() else {
                    return Err(fail(format!("{keyword} without a value")));
                };
                if keyword == "identityfile" {
                    if !first.eq_ignore_ascii_case("none") {
                        found.identity_files.push(Written {
                            value: first.clone(),
                            at: format!("{}:{line}", block.path.display()),
                        });
                    }
                    continue;
                }
                if !seen.insert(keyword.clone()) {
                    continue;
                }
                match keyword.as_str() {
                    "hostname" => {
                        let name = percent(first, |t| (t == 'h').then(|| host.to_string()));
                        found.host_name =
                            Some(name.map_err(|why| fail(format!("HostName: {why}")))?)
                    }
                    "port" => found.port = Some(number(first).map_err(fail)?),
                    "user" => found.user = Some(first.clone()),
                    "identitiesonly" => found.identities_only = Some(yes(first).map_err(fail)?),
                    "proxyjump" => {
                        found.proxy_jump_at = Some(format!("{}:{line}", block.path.display()));
                        found.proxy_jump = Some(if first.eq_ignore_ascii_case("none") {
                            Vec::new()
                        } else {
                            first.split(',').map(str::to_string).collect()
                        })
                    }
                    // 0 is OpenSSH's "no ConnectTimeout": mesh's own limit applies
                    "connecttimeout" => {
                        found.connect_timeout =
                            Some(time(first).map_err(fail)?).filter(|t| !t.is_zero())
                    }
                    "serveraliveinterval" => {
                        found.server_alive_interval = Some(time(first).map_err(fail)?)
                    }
                    _ => {}
                }
            }
        }
        Ok(found)
    }
}

impl Block {
    fn applies_to(&self, host: &str) -> bool {
        if self.never {
            return false;
        }
        let Some(patterns) = &self.patterns else {
            return true;
        };
        let host = host.to_ascii_lowercase();
        let mut matched = false;
        for p in patterns {
            let p = p.to_ascii_lowercase();
            match p.strip_prefix('!') {
                Some(negated) if wildcard(negated, &host) => return false,
                Some(_) => {}
                None => matched |= wildcard(&p, &host),
            }
        }
        matched
    }
}

/// OpenSSH's pattern: `*` any run of characters, `?` any one character.
pub(crate) fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// A line's keyword (lower case) and its arguments, quotes removed; `None` for a blank line or
/// a comment.
fn split(raw: &str) -> Result<Option<(String, Vec<String>)>, String> {
    let line = raw.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let end = line
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(line.len());
    let keyword = line[..end].to_ascii_lowercase();
    let rest = line[end..].trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim_start();
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut has = false;
    for c in rest.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                has = true;
            }
            c if c.is_whitespace() && !quoted => {
                if has {
                    args.push(std::mem::take(&mut current));
                    has = false;
                }
            }
            c => {
                current.push(c);
                has = true;
            }
        }
    }
    if quoted {
        return Err("a quote is not closed".into());
    }
    if has {
        args.push(current);
    }
    Ok(Some((keyword, args)))
}

fn number<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not a number in range"))
}

/// The most seconds OpenSSH takes for a time value (`INT_MAX`); larger ones it refuses.
const MAX_SECONDS: u64 = i32::MAX as u64;

/// A time as OpenSSH writes it (its `convtime`): seconds, or runs of a number and a unit
/// (`s`, `m`, `h`, `d`, `w`), as `1h30m`; at most [`MAX_SECONDS`] in all.
fn time(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "{text:?} is not a time OpenSSH accepts: seconds, or like 1h30m, at most {MAX_SECONDS}s"
        )
    };
    let mut total: u64 = 0;
    let mut rest = text;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let value: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let mut units = rest.chars();
        let scale = match units.next().map(|c| c.to_ascii_lowercase()) {
            None => 1,
            Some('s') => 1,
            Some('m') => 60,
            Some('h') => 60 * 60,
            Some('d') => 24 * 60 * 60,
            Some('w') => 7 * 24 * 60 * 60,
            Some(_) => return Err(bad()),
        };
        rest = units.as_str();
        total = value
            .checked_mul(scale)
            .and_then(|v| v.checked_add(total))
            .filter(|t| *t <= MAX_SECONDS)
            .ok_or_else(bad)?;
    }
    Ok(Duration::from_secs(total))
}

fn yes(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "yes" | "true" => Ok(true),
        "no" | "false" => Ok(false),
        _ => Err(format!("{text:?} is neither yes nor no")),
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// `text` with each `%x` replaced by `token(x)` and `%%` by `%`; a token `token` does not know
/// is refused.
fn percent(text: &str, token: impl Fn(char) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some(t) => match token(t) {
                Some(value) => out.push_str(&value),
                None => {
                    return Err(format!(
                        "%{t} is not expanded here, or its value is unknown"
                    ));
                }
            },
            None => return Err("ends with a lone %".into()),
        }
    }
    Ok(out)
}

/// The operator's uid, for `%i` (the owner of this process's /proc entry).
fn local_uid() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .ok()
        .map(|m| m.uid().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(user: &str, system: &str) -> SshConfig {
        let mut c = SshConfig::default();
        c.add(Path::new("user"), user).unwrap();
        c.add(Path::new("system"), system).unwrap();
        c
    }

    #[test]
    fn first_value_wins_user_file_before_system_and_identities_add_up() {
        let c = config(
            "# mine\nHost web web2\n  HostName 192.0.2.7\n  Port=2222\n  IdentityFile ~/.ssh/web\n\
             Host *\n  User deploy\n  Port 22\n  IdentityFile \"/keys/all %r\"\n",
            "Host *\n  User admin\n  IdentitiesOnly yes\n  ConnectTimeout 7\n",
        );
        let home = std::env::var("HOME").unwrap();
        let web = c.lookup("web").unwrap();
        assert_eq!(web.host_name.as_deref(), Some("192.0.2.7"));
        assert_eq!(web.port, Some(2222));
        assert_eq!(web.user.as_deref(), Some("deploy"));
        assert_eq!(web.identities_only, Some(true));
        assert_eq!(web.connect_timeout, Some(Duration::from_secs(7)));
        let tokens = Tokens {
            alias: "web",
            host: "192.0.2.7",
            user: "deploy",
            port: 2222,
        };
        assert_eq!(
            web.identities(tokens).unwrap(),
            vec![
                PathBuf::from(format!("{home}/.ssh/web")),
                PathBuf::from("/keys/all deploy")
            ]
        );
        let other = c.lookup("db").unwrap();
        assert_eq!(other.host_name, None);
        assert_eq!(other.port, Some(22));
    }

    #[test]
    fn patterns_wildcards_and_negation() {
        let c = config(
            "Host *.internal !secret.internal\n  ProxyJump bastion,admin@gw:2200\n\
             Host bastion\n  ProxyJump none\n  HostName %h.example.org\n",
            "",
        );
        assert_eq!(
            c.lookup("db.internal").unwrap().proxy_jump,
            Some(vec!["bastion".into(), "admin@gw:2200".into()])
        );
        assert_eq!(c.lookup("secret.internal").unwrap().proxy_jump, None);
        assert_eq!(
            c.lookup("DB.Internal").unwrap().proxy_jump.map(|j| j.len()),
            Some(2)
        );
        let bastion = c.lookup("bastion").unwrap();
        assert_eq!(bastion.proxy_jump, Some(vec![]));
        assert_eq!(bastion.host_name.as_deref(), Some("bastion.example.org"));
        assert!(wildcard("web-?", "web-1") && !wildcard("web-?", "web-12"));
        assert!(wildcard("*", "") && wildcard("a*b*c", "axxbyyc") && !wildcard("a*b", "ac"));
    }

    #[test]
    fn match_blocks_other_than_all_are_skipped_and_global_lines_apply() {
        let c = config(
            "User early\nSendEnv\nMatch host web exec \"true\"\n  Port 1\nMatch all\n  Port 2\n",
            "",
        );
        let web = c.lookup("web").unwrap();
        assert_eq!(web.user.as_deref(), Some("early"));
        assert_eq!(web.port, Some(2));
    }

    #[test]
    fn a_bad_value_names_the_file_and_line() {
        let c = config("Host web\n  Port many\n", "");
        let e = c.lookup("web").unwrap_err().to_string();
        assert_eq!(e, "user:2: \"many\" is not a number in range");
        let mut bad = SshConfig::default();
        let e = bad.add(Path::new("f"), "Host\n").unwrap_err().to_string();
        assert!(e.starts_with("f:1:"), "{e}");
        assert!(bad.add(Path::new("f"), "User \"x\n").is_err());
    }

    /// The identity files OpenSSH would offer for `host` (`-l user` if given): `ssh -v` says
    /// each before it connects (through a ProxyCommand that ends at once, so offline).
    fn openssh_identities(file: &Path, host: &str, user: Option<&str>) -> Vec<PathBuf> {
        let mut ssh = std::process::Command::new("ssh");
        ssh.args(["-v", "-o", "ProxyCommand=true", "-o", "BatchMode=yes", "-F"])
            .arg(file);
        if let Some(user) = user {
            ssh.args(["-l", user]);
        }
        let out = ssh.args([host, "true"]).output().unwrap();
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter_map(|l| l.strip_prefix("debug1: identity file "))
            .filter_map(|l| l.strip_suffix(" type -1"))
            .filter(|l| !l.ends_with("-cert"))
            .map(PathBuf::from)
            .collect()
    }

    #[test]
    fn identity_file_tokens_expand_as_openssh_expands_them() {
        let text = "Host web\n  HostName %h.example.org\n  User deploy\n  Port 2200\n\
                    IdentityFile /k/%h-%r-%%-%n-%p\n  IdentityFile /k/none\n";
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        std::fs::write(&file, text).unwrap();
        let mut c = SshConfig::default();
        c.add(&file, text).unwrap();
        let web = c.lookup("web").unwrap();
        let host = web.host_name.clone().unwrap();
        for (given, user) in [(None, "deploy"), (Some("other"), "other")] {
            let ours = web
                .identities(Tokens {
                    alias: "web",
                    host: &host,
                    user,
                    port: 2200,
                })
                .unwrap();
            assert_eq!(ours, openssh_identities(&file, "web", given), "{given:?}");
            assert_eq!(
                ours[0],
                PathBuf::from(format!("/k/web.example.org-{user}-%-web-2200"))
            );
        }
        let odd = config("Host q\n  IdentityFile /k/%x\n", "");
        let tokens = Tokens {
            alias: "q",
            host: "q",
            user: "root",
            port: 22,
        };
        let e = odd.lookup("q").unwrap().identities(tokens).unwrap_err();
        assert!(e.starts_with("user:2: IdentityFile \"/k/%x\": %x"), "{e}");
        let q5 = config("Host q5\n  Hostname %h.example.%%\n", "");
        assert_eq!(
            q5.lookup("q5").unwrap().host_name.as_deref(),
            Some("q5.example.%")
        );
    }

    /// What `ssh -G` says of these ServerAliveInterval values: seconds, or refused.
    #[test]
    fn time_values_are_read_and_bounded_as_openssh_does() {
        for (value, seconds) in [
            ("2147483647", Some(2147483647)),
            ("1h30m", Some(5400)),
            ("1M", Some(60)),
            ("0", Some(0)),
            ("9223372036854775807", None),
            ("2147483648", None),
            ("5x", None),
            ("-1", None),
            ("1w1w", Some(1209600)),
        ] {
            let c = config(&format!("Host x\n  ServerAliveInterval {value}\n"), "");
            let got = c.lookup("x").map(|h| h.server_alive_interval);
            match seconds {
                Some(s) => assert_eq!(got.unwrap(), Some(Duration::from_secs(s)), "{value}"),
                None => {
                    let e = got.unwrap_err().to_string();
                    assert!(e.starts_with("user:2: ") && e.contains("at most"), "{e}");
                }
            }
        }
        let c = config("Host x\n  ConnectTimeout 0\n", "");
        assert_eq!(c.lookup("x").unwrap().connect_timeout, None);
    }
}
