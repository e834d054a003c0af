//! `Host` and `Match` lines: what they say, and whether they take the host being looked up, as
//! OpenSSH 9.2's readconf.c decides (`match_cfg_line`) without a network.
//!
//! A `Match` line is evaluated where it is read, against what the lines above it have set so
//! far (the host name, the user): the lookup keeps each line's answer for the rest of its pass.
//! `host` and `originalhost` compare in lower case, `user` and `localuser` as written; each
//! takes a comma list of patterns, `!` excluding. `canonical` and `final` hold only in the
//! second pass ssh makes when a `Match final` is anywhere in the files or CanonicalizeHostname
//! `yes`/`always` applies (mesh rewrites no name with CanonicalDomains: that takes DNS). `exec` runs a command in ssh: mesh does not
//! run it, and refuses the line where ssh would run it (every criterion before it matched).

use super::values::wildcard;

/// A `Host` or `Match` line.
#[derive(Debug, Clone)]
pub(super) enum Condition {
    /// `Host` patterns, each a word (`!` to exclude).
    Host(Vec<String>),
    /// `Match` criteria, all of which must hold.
    Match(Vec<Criterion>),
}

/// One `Match` criterion, `!` negating it.
#[derive(Debug, Clone)]
pub(super) struct Criterion {
    negate: bool,
    test: Test,
}

#[derive(Debug, Clone)]
enum Test {
    All,
    /// `canonical` and `final` (`true`) alike: true in the final pass only; only `final` asks
    /// for that pass.
    Final(bool),
    Host(String),
    OriginalHost(String),
    User(String),
    LocalUser(String),
    Exec(String),
}

/// What a condition is put to: the lookup's state where its line is read.
pub(super) struct Subject<'a> {
    /// What `Host` patterns take: the name as given, or in the final pass the host name (as
    /// ssh re-reads its files with the name it will connect to).
    pub host: &'a str,
    /// `Match host`: the HostName set so far (its `%h` expanded), else the name as given.
    pub host_name: &'a str,
    /// `Match originalhost`: the name as given.
    pub original: &'a str,
    /// `Match user`: the one given with the node, else the User set so far, else the local one.
    pub user: Option<&'a str>,
    /// `Match localuser`: the passwd entry's name.
    pub local: Option<&'a str>,
    pub final_pass: bool,
}

/// Why a `Match` line's syntax is refused, as ssh says it, naming the word or attribute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    #[error("Bad Match condition: '{0}' cannot be combined with other Match attributes")]
    Combined(String),
    #[error("Bad Match condition: Missing Match criteria for {0}")]
    NoCriteria(String),
    #[error("Bad Match condition: Unsupported Match attribute {0}")]
    Unsupported(String),
    #[error("Bad Match condition: One or more attributes required for Match")]
    NoAttribute,
}

/// A `Match` line's criteria, or why ssh would refuse its syntax ("Bad Match condition").
pub(super) fn parse_match(args: &[String]) -> Result<Vec<Criterion>, MatchError> {
    // `host=web` is `host web` (ssh's strdelim splits at `=`); a `#` word starts a comment
    let mut words = args
        .iter()
        .take_while(|a| !a.starts_with('#'))
        .flat_map(|a| a.split('=').filter(|w| !w.is_empty()));
    let mut criteria = Vec::new();
    let mut attributes = 0;
    while let Some(word) = words.next() {
        let (negate, attribute) = match word.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, word),
        };
        let lower = attribute.to_ascii_lowercase();
        if lower == "all" {
            if attributes > 1 || words.next().is_some() {
                return Err(MatchError::Combined(word.to_string()));
            }
            criteria.push(Criterion {
                negate,
                test: Test::All,
            });
            return Ok(criteria);
        }
        attributes += 1;
        let test = if lower == "canonical" || lower == "final" {
            Test::Final(lower == "final")
        } else {
            let Some(arg) = words.next().map(str::to_string) else {
                return Err(MatchError::NoCriteria(attribute.to_string()));
            };
            match lower.as_str() {
                "host" => Test::Host(arg),
                "originalhost" => Test::OriginalHost(arg),
                "user" => Test::User(arg),
                "localuser" => Test::LocalUser(arg),
                "exec" => Test::Exec(arg),
                _ => return Err(MatchError::Unsupported(attribute.to_string())),
            }
        };
        criteria.push(Criterion { negate, test });
    }
    if attributes == 0 {
        return Err(MatchError::NoAttribute);
    }
    Ok(criteria)
}

/// Whether a `Match` line asks ssh for its second, final pass: it says `final` (or `!final`),
/// whether or not it applies, as ssh notes it while reading the line.
pub(super) fn wants_final(criteria: &[Criterion]) -> bool {
    criteria.iter().any(|c| matches!(c.test, Test::Final(true)))
}

impl Condition {
    /// Whether the line takes `s`; `Err` for a `Match exec` ssh would run here.
    pub(super) fn holds(&self, s: &Subject<'_>) -> Result<bool, ExecRefused> {
        let criteria = match self {
            Condition::Host(patterns) => return Ok(host_matches(patterns, s.host)),
            Condition::Match(criteria) => criteria,
        };
        let mut result = true;
        for c in criteria {
            let matched = match &c.test {
                // `all` comes last and alone, or after one criterion it then follows
                Test::All => return Ok(result && !c.negate),
                Test::Final(_) => s.final_pass,
                Test::Host(list) => list_matches(list, &s.host_name.to_ascii_lowercase(), true),
                Test::OriginalHost(list) => {
                    list_matches(list, &s.original.to_ascii_lowercase(), true)
                }
                Test::User(list) => s.user.is_some_and(|u| list_matches(list, u, false)),
                Test::LocalUser(list) => s.local.is_some_and(|u| list_matches(list, u, false)),
                // ssh skips the command once a criterion before it failed
                Test::Exec(_) if !result => continue,
                Test::Exec(command) => {
                    return Err(ExecRefused {
                        command: command.clone(),
                        original: s.original.to_string(),
                    });
                }
            };
            if matched == c.negate {
                result = false;
            }
        }
        Ok(result)
    }
}

/// A `Match exec` that would decide for the host `original`: ssh would run `command`, mesh does
/// not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Match exec \"{command}\": mesh does not run a command to decide which settings apply; write \
     the hosts it stands for as a `Match host` or `Host` pattern, or put a criterion before it \
     that does not match this host (`Match host !{original} exec …`)"
)]
pub struct ExecRefused {
    command: String,
    original: String,
}

/// Whether a pattern list takes `text`: one pattern must match, no `!` pattern may.
pub(super) fn host_matches(patterns: &[String], text: &str) -> bool {
    patterns_match(patterns.iter().map(String::as_str), text)
}

/// [`host_matches`] for a comma list, the patterns in lower case where `lower` (ssh's
/// `match_pattern_list`).
fn list_matches(list: &str, text: &str, lower: bool) -> bool {
    if lower {
        let list = list.to_ascii_lowercase();
        patterns_match(list.split(','), text)
    } else {
        patterns_match(list.split(','), text)
    }
}

fn patterns_match<'p>(patterns: impl Iterator<Item = &'p str>, text: &str) -> bool {
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
