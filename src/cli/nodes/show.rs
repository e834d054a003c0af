//! `mesh node show`: everything the inventory says of one machine, and how it is reached once
//! OpenSSH's configuration is applied.

use anyhow::Result;

use crate::cli::answers::nodes::{NodeShown, Reached, Resolved, ResolvedFields, Sourced};
use crate::cli::{Context, print_json, reach};
use crate::inventory::{Assignment, Inventory, Node};
use crate::plan::visible;

pub(super) fn show(inv: &Inventory, name: &str, ctx: &Context) -> Result<()> {
    let n = inv.node(name)?;
    let assignments = inv.assignments(Some(name))?;
    let tags = inv.tags_of(name)?;
    if ctx.json {
        let resolved = match reach::resolved(&n, &inv.nodes()?) {
            Ok(fields) => Resolved::Fields(ResolvedFields(fields)),
            Err(error) => Resolved::Error { error },
        };
        return print_json(&NodeShown {
            node: &n,
            tags: &tags,
            assignments: &assignments,
            resolved,
        });
    }
    match &n.local {
        Some(dir) => {
            out!("name:      {}", visible(&n.name));
            out!(
                "local:     on this machine, {} standing for its /",
                visible(&dir.display().to_string())
            );
            out!("tags:      {}", visible(&tags.join(", ")));
            out!("modules:   {}", modules(&assignments));
            out!("host key:  none: its helper runs here, not over SSH");
        }
        None => remote(inv, &n, &tags, &assignments)?,
    }
    Ok(())
}

/// A node reached over SSH, as text.
fn remote(inv: &Inventory, n: &Node, tags: &[String], assignments: &[Assignment]) -> Result<()> {
    out!("name:      {}", visible(&n.name));
    out!("address:   {}:{}", visible(&n.address), n.port);
    out!(
        "user:      {}{}",
        visible(&n.user),
        if n.sudo { " (sudo -n)" } else { "" }
    );
    out!(
        "identity:  {}",
        visible(
            &n.identity
                .as_ref()
                .map_or("ssh-agent, then ~/.ssh/id_*".into(), |p| p
                    .display()
                    .to_string())
        )
    );
    if let Some(jump) = &n.jump {
        out!("jump:      {}", visible(jump));
    }
    let all = inv.nodes()?;
    out!("reached:   {}", visible(&reach::describe(n, &all)));
    if let Ok(fields) = reach::resolved(n, &all) {
        for (key, v) in fields {
            for line in resolved_lines(key, &v) {
                out!("{}", visible(&line));
            }
        }
    }
    out!(
        "tags:      {}",
        if tags.is_empty() {
            "none".into()
        } else {
            visible(&tags.join(", ")).into_owned()
        }
    );
    out!(
        "host key:  {}",
        n.host_key
            .as_deref()
            .map(super::fingerprint_of)
            .unwrap_or_else(|| "not pinned".into())
    );
    out!("modules:   {}", modules(assignments));
    Ok(())
}

/// A node's assignments as `node show` lists them: `instance (module)` where the two differ.
fn modules(assignments: &[Assignment]) -> String {
    let list: Vec<String> = assignments
        .iter()
        .map(|a| {
            if a.instance == a.module {
                a.module.clone()
            } else {
                format!("{} ({})", a.instance, a.module)
            }
        })
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        visible(&list.join(", ")).into_owned()
    }
}

/// One resolved field as `node show` prints it, under `ssh -G`'s keyword, one line per value:
/// `port 2222 (ssh_config:F:3)`.
fn resolved_lines(key: &str, v: &Reached) -> Vec<String> {
    let keyword = key.replace('_', "");
    let keyword = keyword
        .strip_suffix('s')
        .filter(|_| key == "identity_files" || key == "known_hosts_files")
        .unwrap_or(&keyword);
    let one = |v: &Sourced| {
        let value = match &v.value {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) if a.is_empty() => "none".into(),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|h| h.as_str().unwrap_or_default().to_string())
                .collect::<Vec<_>>()
                .join(","),
            serde_json::Value::Null => "none".into(),
            other => other.to_string(),
        };
        format!("{keyword} {value} ({})", v.source)
    };
    match v {
        Reached::Many(list) if list.is_empty() => vec![format!("{keyword} none")],
        Reached::Many(list) => list.iter().map(one).collect(),
        Reached::One(v) => vec![one(v)],
    }
}
