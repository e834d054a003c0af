//! ProxyJump lists as OpenSSH writes them (`[user@]host[:port]`, `ssh://…`, `none`): parsed
//! and checked here, below the inventory that stores a node's `--jump` and the route that
//! follows one.

/// A jump list as written: `a,b`.
pub fn split(chain: &str) -> Vec<String> {
    chain
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .collect()
}

/// Why a jump list is refused, quoting the hop (`spec`, as written) it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JumpError {
    #[error("names no host")]
    NoHost,
    #[error("jump host {spec:?}: {why}; write it as [USER@]HOST[:PORT]")]
    Malformed { spec: String, why: HopFault },
    #[error(
        "jump host {spec:?}: the user is not a login name (lower-case letters, digits, '_' and '-')"
    )]
    User { spec: String },
    #[error("jump host {spec:?}: {host:?} is not a host name or an IP address")]
    Address { spec: String, host: String },
    #[error("jump host {spec:?} is {owner} itself: a node cannot be reached through itself")]
    Itself { spec: String, owner: String },
}

/// What is wrong with the shape of one `[user@]host[:port]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HopFault {
    #[error("an ssh:// hop takes no path")]
    Path,
    #[error("a '[' is not closed")]
    Bracket,
    #[error("the port is not a number")]
    Port,
    #[error("no host")]
    NoHost,
}

#[derive(Debug, Default, PartialEq)]
pub struct Hop {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

/// `[user@]host[:port]`, the host possibly an IPv6 address in brackets, or the same as
/// `ssh://[user@]host[:port]` (a `/` may end it, no path may follow), as OpenSSH's ProxyJump.
pub fn parse_hop(spec: &str) -> Result<Hop, JumpError> {
    let bad = |why| JumpError::Malformed {
        spec: spec.to_string(),
        why,
    };
    let spec = match spec.strip_prefix("ssh://") {
        Some(uri) => match uri.split_once('/') {
            Some((authority, "")) => authority,
            Some(_) => return Err(bad(HopFault::Path)),
            None => uri,
        },
        None => spec,
    };
    let (user, rest) = match spec.rsplit_once('@') {
        Some((u, r)) => (Some(u.to_string()), r),
        None => (None, spec),
    };
    let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or_else(|| bad(HopFault::Bracket))?;
        (host, after.strip_prefix(':'))
    } else if rest.matches(':').count() == 1 {
        let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
        (h, Some(p))
    } else {
        (rest, None)
    };
    let port = port
        .map(|p| p.parse::<u16>().map_err(|_| bad(HopFault::Port)))
        .transpose()?;
    if host.is_empty() || host.starts_with('-') || user.as_deref().is_some_and(str::is_empty) {
        return Err(bad(HopFault::NoHost));
    }
    Ok(Hop {
        user,
        host: host.to_string(),
        port,
    })
}

/// A node's `--jump none`: connect directly, ignoring the configuration's ProxyJump and
/// ProxyCommand, as `ssh -J none`.
pub fn is_direct(jump: &str) -> bool {
    jump.trim().eq_ignore_ascii_case("none")
}

/// Checks a `--jump` value as `node add`/`node set` store it.
pub fn check_jump(owner: &str, chain: &str) -> Result<(), JumpError> {
    if is_direct(chain) {
        return Ok(());
    }
    let hops = split(chain);
    if hops.is_empty() {
        return Err(JumpError::NoHost);
    }
    for spec in hops {
        let hop = parse_hop(&spec)?;
        if hop
            .user
            .as_deref()
            .is_some_and(|u| !mesh_wire::valid_user(u))
        {
            return Err(JumpError::User { spec });
        }
        if !mesh_wire::valid_address(&hop.host) {
            return Err(JumpError::Address {
                spec,
                host: hop.host,
            });
        }
        if hop.host == owner {
            return Err(JumpError::Itself {
                spec,
                owner: owner.to_string(),
            });
        }
    }
    Ok(())
}
