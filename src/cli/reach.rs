//! For `node show`: how a node is reached (inventory, then OpenSSH's configuration), each field
//! that resolves to with where it came from. How a fan-out reaches its nodes is
//! [`crate::push::reach`].

use anyhow::Result;

use super::answers::nodes::{Reached, Sourced};

use crate::inventory::Node;
use crate::push::route;
use crate::ssh::Target;
use crate::ssh::config::SshConfig;
use crate::ssh::known_hosts::KnownHosts;

/// How `node` is reached once the ssh configuration is applied, as `node show` prints it:
/// `user@address:port via hop, hop`.
pub(crate) fn describe(node: &Node, all: &[Node]) -> String {
    let target = SshConfig::load()
        .map_err(|e| e.to_string())
        .and_then(|config| route::target(node, all, &config).map_err(|e| e.to_string()));
    match target {
        Err(e) => format!("cannot be worked out: {e}"),
        Ok(t) => {
            let at = |t: &Target| format!("{}@{}:{}", t.user, t.address, t.port);
            let hops: Vec<String> = t.jumps.iter().map(at).collect();
            if hops.is_empty() {
                at(&t)
            } else {
                format!("{} via {}", at(&t), hops.join(", "))
            }
        }
    }
}

/// One resolved field and where it came from: `inventory`, `ssh_config:FILE:LINE` or `default`.
fn field(value: serde_json::Value, source: String) -> Reached {
    Reached::One(sourced(value, source))
}

fn sourced(value: serde_json::Value, source: String) -> Sourced {
    Sourced { value, source }
}

/// Where a value of the ssh configuration was written, as a source.
fn from_config(at: Option<&String>) -> String {
    at.map_or_else(|| "default".to_string(), |at| format!("ssh_config:{at}"))
}

/// Every field mesh resolved to reach `node`, each with its source, in `ssh -G`'s order:
/// what `node show` prints. `Err` says why the route cannot be worked out.
pub(crate) fn resolved(node: &Node, all: &[Node]) -> Result<Vec<(&'static str, Reached)>, String> {
    let config = SshConfig::load().map_err(|e| e.to_string())?;
    let given = node.user_given.then_some(node.user.as_str());
    let cfg = config
        .lookup_as(&node.address, given)
        .map_err(|e| e.to_string())?;
    let t = route::target(node, all, &config).map_err(|e| e.to_string())?;
    let given = |yes: bool, keyword: &str| {
        if yes {
            "inventory".to_string()
        } else {
            from_config(cfg.at.get(keyword))
        }
    };
    let hostname = match cfg.at.get("hostname") {
        Some(at) => format!("ssh_config:{at}"),
        None => "inventory".into(),
    };
    let port = match (node.port_given, cfg.at.get("port")) {
        (false, Some(at)) => format!("ssh_config:{at}"),
        (false, None) if node.port == 22 => "default".into(),
        _ => "inventory".into(),
    };
    let user = match (node.user_given, cfg.at.get("user")) {
        (false, Some(at)) => format!("ssh_config:{at}"),
        (false, None) if node.user == "root" => "default".into(),
        _ => "inventory".into(),
    };
    let identities = identity_fields(node, &cfg, &t);
    let hops: Vec<String> = t
        .jumps
        .iter()
        .map(|h| format!("{}@{}:{}", h.user, h.address, h.port))
        .collect();
    let secs = |d: Option<std::time::Duration>| d.map(|d| d.as_secs());
    let keepalive = secs(t.keepalive).unwrap_or(crate::ssh::KEEPALIVE.as_secs());
    let known_hosts = known_hosts_field(node, &t).map_err(|e| e.to_string())?;
    Ok(vec![
        ("hostname", field(t.address.clone().into(), hostname)),
        ("port", field(t.port.into(), port)),
        ("user", field(t.user.clone().into(), user)),
        ("identity_files", Reached::Many(identities)),
        (
            "identities_only",
            field(t.identities_only.into(), given(false, "identitiesonly")),
        ),
        (
            "proxy_jump",
            field(hops.into(), given(node.jump.is_some(), "proxyjump")),
        ),
        (
            "connect_timeout",
            field(
                secs(t.connect_timeout).into(),
                given(false, "connecttimeout"),
            ),
        ),
        (
            "server_alive_interval",
            field(keepalive.into(), given(false, "serveraliveinterval")),
        ),
        ("known_hosts", known_hosts),
        ("known_hosts_files", Reached::Many(known_hosts_files(&t))),
        (
            "host_key_alias",
            field(
                t.host_key_alias.clone().into(),
                given(false, "hostkeyalias"),
            ),
        ),
    ])
}

/// The key files in the order they are offered, each with where it came from.
fn identity_fields(node: &Node, cfg: &crate::ssh::config::HostConfig, t: &Target) -> Vec<Sourced> {
    match &node.identity {
        Some(own) => vec![sourced(
            own.display().to_string().into(),
            "inventory".into(),
        )],
        None if cfg.identity_files.is_empty() => t
            .identities
            .iter()
            .map(|p| sourced(p.display().to_string().into(), "default".into()))
            .collect(),
        None => t
            .identities
            .iter()
            .zip(&cfg.identity_files)
            .map(|(p, w)| {
                sourced(
                    p.display().to_string().into(),
                    format!("ssh_config:{}", w.at),
                )
            })
            .collect(),
    }
}

/// Where the host key is checked against: the inventory's pin, else the known_hosts line.
fn known_hosts_field(node: &Node, t: &Target) -> Result<Reached, crate::ssh::files::FileError> {
    Ok(match &node.host_key {
        Some(_) => field("pinned in the inventory".into(), "inventory".into()),
        None => {
            let (name, port) = t.key_name();
            let places = match &t.known_hosts {
                Some(known) => known.places_for(name, port),
                None => KnownHosts::load()?.places_for(name, port),
            };
            match places.first() {
                Some(place) => field(place.clone().into(), "known_hosts".into()),
                None => field(serde_json::Value::Null, "default".into()),
            }
        }
    })
}

/// The known_hosts files read for the node, in order, each with what named it.
fn known_hosts_files(t: &Target) -> Vec<Sourced> {
    t.known_hosts_files
        .iter()
        .map(|(path, at)| {
            let source = match at.as_str() {
                "default" => "default".to_string(),
                at => format!("ssh_config:{at}"),
            };
            sourced(path.display().to_string().into(), source)
        })
        .collect()
}
