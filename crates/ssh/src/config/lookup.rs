//! Looking a host up: the lines that apply to it, the first value of each keyword winning, in
//! the two passes OpenSSH makes (the second only when a `Match final` or CanonicalizeHostname
//! `yes`/`always` asks for it, its `Host` patterns then taking the host name ssh connects to,
//! and what the first set staying).

use std::collections::BTreeSet;
use std::time::Duration;

use super::matching::Subject;
use super::values::{ValueError, percent, time, yes};
use super::{Block, ConfigError, HostConfig, KnownFiles, Reason, SshConfig, Written};
use super::{READ, hostkeys, keywords, matching, values};

impl SshConfig {
    /// What applies to `host` (the name as given, before any HostName), no user given with it.
    pub fn lookup(&self, host: &str) -> Result<HostConfig, ConfigError> {
        self.lookup_as(host, None)
    }

    /// What applies to `host` reached as `user` where one is given (it wins over User, and is
    /// what `Match user` takes, as with `ssh -l user`).
    ///
    /// As `ssh` does, every line of every file is checked, whether or not its block applies: a
    /// keyword OpenSSH does not know (unless an `IgnoreUnknown` that applies came before it), a
    /// keyword mesh reads given no value, more values than it takes, or a value OpenSSH refuses.
    pub fn lookup_as(&self, host: &str, user: Option<&str>) -> Result<HostConfig, ConfigError> {
        let mut lookup = Lookup {
            config: self,
            original: host,
            given_user: user,
            found: HostConfig {
                local: self.local.clone(),
                ..HostConfig::default()
            },
            seen: BTreeSet::new(),
            ignore_unknown: None,
        };
        lookup.pass(false)?;
        if self.final_pass || lookup.found.canonicalize == Some(true) {
            lookup.pass(true)?;
        }
        Ok(lookup.found)
    }
}

/// One lookup's state across its passes.
struct Lookup<'a> {
    config: &'a SshConfig,
    original: &'a str,
    given_user: Option<&'a str>,
    found: HostConfig,
    /// The keywords (slots) given a value already: the first wins.
    seen: BTreeSet<&'a str>,
    ignore_unknown: Option<Vec<String>>,
}

impl<'a> Lookup<'a> {
    /// Every block top to bottom, its conditions evaluated where their line is.
    fn pass(&mut self, final_pass: bool) -> Result<(), ConfigError> {
        // each Host/Match line is evaluated once a pass, with what is set where it is read
        let mut held: Vec<Option<bool>> = vec![None; self.config.conditions.len()];
        let name = match (final_pass, &self.found.host_name) {
            (true, Some(name)) => name.clone(),
            (true, None) => self.original.to_ascii_lowercase(),
            (false, _) => self.original.to_string(),
        };
        for block in &self.config.blocks {
            let applies = self.applies(block, &mut held, &name, final_pass)?;
            for (line, keyword, args) in &block.lines {
                self.line(block, *line, keyword, args, applies)?;
            }
        }
        Ok(())
    }

    /// Whether every condition of `block` holds, each evaluated the first time it is reached.
    fn applies(
        &self,
        block: &Block,
        held: &mut [Option<bool>],
        name: &str,
        final_pass: bool,
    ) -> Result<bool, ConfigError> {
        for &id in &block.conditions {
            let holds = match held[id] {
                Some(holds) => holds,
                None => {
                    let (path, line, condition) = &self.config.conditions[id];
                    let host_name = self.found.host_name.as_deref().unwrap_or(self.original);
                    let subject = Subject {
                        host: name,
                        host_name,
                        original: self.original,
                        user: self.given_user.or(self.found.user.as_deref()).or(self
                            .found
                            .local
                            .name
                            .as_deref()),
                        local: self.found.local.name.as_deref(),
                        final_pass,
                    };
                    let holds = condition.holds(&subject).map_err(|e| ConfigError {
                        path: path.clone(),
                        line: Some(*line),
                        reason: Box::new(e.into()),
                    })?;
                    held[id] = Some(holds);
                    holds
                }
            };
            if !holds {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// One line of a block: checked, and taken where the block applies.
    fn line(
        &mut self,
        block: &'a Block,
        line: usize,
        keyword: &'a str,
        args: &[String],
        applies: bool,
    ) -> Result<(), ConfigError> {
        let fail = |reason: Reason| ConfigError {
            path: block.path.clone(),
            line: Some(line),
            reason: Box::new(reason),
        };
        if !keywords::known(keyword) {
            if self
                .ignore_unknown
                .as_ref()
                .is_some_and(|patterns| matching::host_matches(patterns, keyword))
            {
                return Ok(());
            }
            return Err(fail(Reason::BadOption(keyword.to_string())));
        }
        if keyword == "ignoreunknown" && applies && self.ignore_unknown.is_none() {
            // matched against the keyword in lower case, as OpenSSH does
            self.ignore_unknown = Some(
                args.iter()
                    .flat_map(|a| a.split(','))
                    .map(str::to_ascii_lowercase)
                    .collect(),
            );
        }
        if !READ.contains(&keyword) {
            return Ok(());
        }
        let value = Value::read(keyword, args).map_err(|e| fail(e.into()))?;
        if !applies {
            return Ok(());
        }
        let at = || format!("{}:{line}", block.path.display());
        let found = &mut self.found;
        if let Value::IdentityFile(file) = value {
            // a file written twice (or read again in the final pass) is offered once
            let duplicate = found.identity_files.iter().any(|w| w.value == file);
            if !file.eq_ignore_ascii_case("none") && !duplicate {
                found.identity_files.push(Written {
                    value: file,
                    at: at(),
                });
            }
            return Ok(());
        }
        let slot = match keyword {
            "proxycommand" => "proxyjump",
            other => other,
        };
        if self.seen.insert(slot) {
            found
                .set(value, self.original, at())
                .map_err(|e| fail(e.into()))?;
            found.at.insert(slot.to_string(), at());
        }
        Ok(())
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
    /// CanonicalizeHostname: `yes`/`always` (true) or `no`.
    Canonicalize(bool),
}

impl Value {
    fn read(keyword: &str, args: &[String]) -> Result<Value, ValueError> {
        let Some(first) = args.first() else {
            return Err(ValueError::NoValue(keyword.to_string()));
        };
        // ProxyCommand is a command line; ProxyJump, as in OpenSSH, reads its first word only
        let many = [
            "proxycommand",
            "proxyjump",
            "userknownhostsfile",
            "globalknownhostsfile",
        ];
        if args.len() > 1 && !many.contains(&keyword) {
            return Err(ValueError::Extra(keyword.to_string()));
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
                hostkeys::strict(first)?;
                Value::Strict(first.clone())
            }
            "canonicalizehostname" => match first.to_ascii_lowercase().as_str() {
                "yes" | "true" | "always" => Value::Canonicalize(true),
                "no" | "false" => Value::Canonicalize(false),
                _ => return Err(ValueError::Unsupported(first.clone())),
            },
            _ => Value::ServerAliveInterval(time(first)?),
        })
    }
}

impl HostConfig {
    /// Takes the first value of a keyword for `host`, written at `at`.
    fn set(&mut self, value: Value, host: &str, at: String) -> Result<(), ValueError> {
        match value {
            Value::HostName(name) => {
                let name = percent(&name, |t| (t == 'h').then(|| host.to_ascii_lowercase()));
                // lowered after its tokens are expanded, as ssh lowers the name it connects to
                let name = name.map_err(|why| ValueError::HostName(Box::new(why)))?;
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
            Value::Canonicalize(on) => self.canonicalize = Some(on),
            Value::Strict(value) => {
                self.strict_host_key_checking = Some(Written {
                    value: value.to_ascii_lowercase(),
                    at,
                })
            }
            Value::IdentityFile(_) => {}
        }
        Ok(())
    }
}
