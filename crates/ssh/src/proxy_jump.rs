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

#[derive(Debug, Default, PartialEq)]
pub struct Hop {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

/// `[user@]host[:port]`, the host possibly an IPv6 address in brackets, or the same as
/// `ssh://[user@]host[:port]` (a `/` may end it, no path may follow), as OpenSSH's ProxyJump.
pub fn parse_hop(spec: &str) -> Result<Hop, String> {
    let bad = |why: &str| format!("jump host {spec:?}: {why}; write it as [USER@]HOST[:PORT]");
    let spec = match spec.strip_prefix("ssh://") {
        Some(uri) => match uri.split_once('/') {
            Some((authority, "")) => authority,
            Some(_) => return Err(bad("an ssh:// hop takes no path")),
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
            .ok_or_else(|| bad("a '[' is not closed"))?;
        (host, after.strip_prefix(':'))
    } else if rest.matches(':').count() == 1 {
        let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
        (h, Some(p))
    } else {
        (rest, None)
    };
    let port = port
        .map(|p| {
            p.parse::<u16>()
                .map_err(|_| bad("the port is not a number"))
        })
        .transpose()?;
    if host.is_empty() || host.starts_with('-') || user.as_deref().is_some_and(str::is_empty) {
        return Err(bad("no host"));
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
pub fn check_jump(owner: &str, chain: &str) -> Result<(), String> {
    if is_direct(chain) {
        return Ok(());
    }
    let hops = split(chain);
    if hops.is_empty() {
        return Err("names no host".into());
    }
    for spec in &hops {
        let hop = parse_hop(spec)?;
        if hop
            .user
            .as_deref()
            .is_some_and(|u| !mesh_wire::valid_user(u))
        {
            return Err(format!(
                "jump host {spec:?}: the user is not a login name (lower-case letters, digits, '_' and '-')"
            ));
        }
        if !mesh_wire::valid_address(&hop.host) {
            return Err(format!(
                "jump host {spec:?}: {:?} is not a host name or an IP address",
                hop.host
            ));
        }
        if hop.host == owner {
            return Err(format!(
                "jump host {spec:?} is {owner} itself: a node cannot be reached through itself"
            ));
        }
    }
    Ok(())
}
