//! The values of a configuration line: its words, patterns, numbers, times, yes/no and `%`
//! tokens, read as OpenSSH reads them.

use std::time::Duration;

use std::path::PathBuf;

use super::{Local, Tokens, Written};
use crate::local::TildeError;

/// Why a value of a configuration line is refused, as ssh says it, quoting what is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("a quote is not closed")]
    OpenQuote,
    #[error("Bad port {0:?}: 1 to 65535, or a service name of /etc/services")]
    Port(String),
    /// A service name, and why `/etc/services` could not be read.
    #[error("Bad port {text:?}: {why}")]
    Services { text: String, why: String },
    #[error("{0:?} is not a time OpenSSH accepts: seconds, or like 1h30m, at most {MAX_SECONDS}s")]
    Time(String),
    #[error("{0:?} is neither yes nor no")]
    YesNo(String),
    #[error("%{0} is not expanded here, or its value is unknown")]
    Token(char),
    #[error("ends with a lone %")]
    LonePercent,
    #[error("a ${{ is not closed")]
    OpenDollar,
    #[error("environment variable {0:?} is not set")]
    Unset(String),
    #[error(transparent)]
    Tilde(#[from] TildeError),
    #[error("{0} without a value")]
    NoValue(String),
    #[error("keyword {0} extra arguments at end of line")]
    Extra(String),
    #[error("unsupported option {0:?}")]
    Unsupported(String),
    /// HostName's `%h` expansion refused.
    #[error("HostName: {0}")]
    HostName(Box<ValueError>),
}

/// A path a keyword names (IdentityFile, UserKnownHostsFile) that cannot be expanded: where it
/// is written, the keyword, the path as written and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {keyword} {value:?}: {why}")]
pub struct ExpandError {
    pub at: String,
    pub keyword: String,
    pub value: String,
    pub why: ValueError,
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
pub(super) fn split(raw: &str) -> Result<Option<(String, Vec<String>)>, ValueError> {
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
        return Err(ValueError::OpenQuote);
    }
    if has {
        args.push(current);
    }
    Ok(Some((keyword, args)))
}

/// A port as OpenSSH's `a2port` reads it: 1 to 65535, or a TCP service name of
/// `/etc/services` (`ssh`, `http`).
pub(super) fn port(text: &str) -> Result<u16, ValueError> {
    let bad = || ValueError::Port(text.to_string());
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok().filter(|p| *p != 0).ok_or_else(bad);
    }
    let services =
        super::super::files::read_text(std::path::Path::new("/etc/services")).map_err(|e| {
            ValueError::Services {
                text: text.to_string(),
                why: e.reason(),
            }
        })?;
    service(&services, text).ok_or_else(bad)
}

/// The TCP port `/etc/services` gives `name` (or one of its aliases).
fn service(services: &str, name: &str) -> Option<u16> {
    services.lines().find_map(|line| {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let first = words.next()?;
        let (port, proto) = words.next()?.split_once('/')?;
        let named = first == name || words.any(|alias| alias == name);
        (named && proto == "tcp")
            .then(|| port.parse().ok())
            .flatten()
    })
}

/// The most seconds OpenSSH takes for a time value (`INT_MAX`); larger ones it refuses.
pub(super) const MAX_SECONDS: u64 = i32::MAX as u64;

/// A time as OpenSSH writes it (its `convtime`): seconds, or runs of a number and a unit
/// (`s`, `m`, `h`, `d`, `w`), as `1h30m`; at most [`MAX_SECONDS`] in all.
pub(super) fn time(text: &str) -> Result<Duration, ValueError> {
    let bad = || ValueError::Time(text.to_string());
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

pub(super) fn yes(text: &str) -> Result<bool, ValueError> {
    match text.to_ascii_lowercase().as_str() {
        "yes" | "true" => Ok(true),
        "no" | "false" => Ok(false),
        _ => Err(ValueError::YesNo(text.to_string())),
    }
}

/// `text` with each `%x` replaced by `token(x)` and `%%` by `%`; a token `token` does not know
/// is refused.
pub(super) fn percent(
    text: &str,
    token: impl Fn(char) -> Option<String>,
) -> Result<String, ValueError> {
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
                None => return Err(ValueError::Token(t)),
            },
            None => return Err(ValueError::LonePercent),
        }
    }
    Ok(out)
}

/// `text` with each `${NAME}` replaced by that environment variable, as OpenSSH expands
/// IdentityFile; one that is not set is refused, as ssh refuses it.
pub(super) fn dollar(text: &str) -> Result<String, ValueError> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(ValueError::OpenDollar)?;
        let name = &after[..end];
        let value = std::env::var(name).map_err(|_| ValueError::Unset(name.to_string()))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
/// Paths as written with `~/`, `~user/`, `${VAR}` and the `%` tokens of
/// [`HostConfig::identities`](super::HostConfig::identities) expanded for `local`; one that
/// cannot be is refused naming `keyword` and where it is written.
pub(super) fn expand_paths(
    keyword: &str,
    written: &[Written],
    tokens: Tokens<'_>,
    local: &Local,
) -> Result<Vec<PathBuf>, ExpandError> {
    let home = local
        .home
        .as_ref()
        .map(|h| h.to_string_lossy().into_owned());
    written
        .iter()
        .map(|written| {
            let fail = |why: ValueError| ExpandError {
                at: written.at.clone(),
                keyword: keyword.to_string(),
                value: written.value.clone(),
                why,
            };
            let path = local
                .tilde(&written.value)
                .map_err(|e| fail(ValueError::Tilde(e)))?;
            let path = dollar(&path).map_err(fail)?;
            percent(&path, |token| match token {
                'h' => Some(tokens.host.to_string()),
                'n' => Some(tokens.alias.to_string()),
                'p' => Some(tokens.port.to_string()),
                'r' => Some(tokens.user.to_string()),
                'd' => home.clone(),
                'u' => local.name.clone(),
                'i' => Some(local.uid.to_string()),
                _ => None,
            })
            .map(PathBuf::from)
            .map_err(fail)
        })
        .collect()
}
