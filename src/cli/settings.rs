//! `mesh settings …`: a module's layers read, replaced whole (saying what that
//! adds, changes and removes, and refusing a silent removal), and the reach of every change.

use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::Value;

mod unset;

use super::answers::commands::LayerShown;
use super::{Context, exit, print_json};
use crate::catalogue::Module;
use crate::inventory::catalogued::{declared, node_layer};
use crate::inventory::{Inventory, Layer, LayerOf};
use crate::resolve::{self, Layers};

#[derive(Subcommand, Debug)]
pub(crate) enum SettingsCommand {
    /// Read a layer: the mesh-wide one, a tag's with --tag, or a node's with --node.
    Show {
        /// The module (for a node's layer: the instance, if it was assigned --as another name).
        module: String,
        /// A node's layer [default: the mesh-wide layer].
        #[arg(long)]
        node: Option<String>,
        /// The layer for every node carrying TAG (between the mesh-wide layer and a node's).
        #[arg(long, conflicts_with = "node")]
        tag: Option<String>,
        /// Also every layer it replaced, oldest first.
        #[arg(long)]
        history: bool,
    },
    /// Replace a layer whole with KEY=VALUE pairs (values by the setting's type; JSON for lists
    /// and objects). Removing a key that is set needs --replace.
    Set {
        /// The module (for a node's layer: the instance, if it was assigned --as another name).
        module: String,
        /// A node's layer [default: the mesh-wide layer].
        #[arg(long)]
        node: Option<String>,
        /// The layer for every node carrying TAG (between the mesh-wide layer and a node's).
        #[arg(long, conflicts_with = "node")]
        tag: Option<String>,
        /// Allow the new layer to drop keys the old one set.
        #[arg(long)]
        replace: bool,
        /// The layer's values, each a setting the module declares.
        #[arg(required = true, value_name = "KEY=VALUE")]
        pairs: Vec<String>,
    },
    /// Remove keys from a layer, naming each (the rest of the layer stays; kept in the history).
    Unset {
        /// The module (for a node's layer: the instance, if it was assigned --as another name).
        module: String,
        /// A node's layer [default: the mesh-wide layer].
        #[arg(long)]
        node: Option<String>,
        /// The layer for every node carrying TAG (between the mesh-wide layer and a node's).
        #[arg(long, conflicts_with = "node")]
        tag: Option<String>,
        /// The keys to remove, each set in that layer.
        #[arg(required = true, value_name = "KEY")]
        keys: Vec<String>,
    },
    /// Remove a layer (it is kept in the history).
    Clear {
        /// The module (for a node's layer: the instance, if it was assigned --as another name).
        module: String,
        /// A node's layer [default: the mesh-wide layer].
        #[arg(long)]
        node: Option<String>,
        /// The layer for every node carrying TAG (between the mesh-wide layer and a node's).
        #[arg(long, conflicts_with = "node")]
        tag: Option<String>,
    },
}

/// The module a `settings` command is about, and whose layer: the mesh-wide layer is the
/// module's; a node's layer is the assignment's, named by its instance (the module's name unless
/// it was assigned `--as` another).
fn target(
    inv: &Inventory,
    cat: &crate::catalogue::Catalogue,
    name: &str,
    node: Option<&str>,
) -> Result<(Module, String)> {
    if let Some(n) = node {
        inv.node(n)?;
        let here: Vec<(String, String)> = inv
            .assignments(Some(n))?
            .into_iter()
            .map(|a| (a.instance, a.module))
            .collect();
        match node_layer(name, n, &here) {
            Ok(Some(module)) => return Ok((cat.module(module)?.clone(), name.to_string())),
            Ok(None) => {}
            Err(e) => bail!("{e}; nothing was stored"),
        }
    } else if cat.module(name).is_err()
        && let Some(a) = inv
            .assignments(None)?
            .into_iter()
            .find(|a| a.instance == name)
    {
        bail!(
            "{name} is an instance of {}; the mesh-wide layer is the module's (`mesh settings … {}`), \
             an instance's own is a node's (`--node NODE`)",
            a.module,
            a.module
        );
    }
    Ok((cat.module(name)?.clone(), name.to_string()))
}

/// Whose layer the flags name; a tag must be one a node could carry.
fn scope<'a>(node: Option<&'a str>, tag: Option<&'a str>) -> Result<LayerOf<'a>> {
    match tag {
        Some(t) if !crate::inventory::nodes_valid_name(t) => bail!(
            "{t:?} cannot be a tag (letters, digits, `-`, `_`, `.`, starting with a letter); \
             nothing was stored"
        ),
        Some(t) => Ok(LayerOf::Tag(t)),
        None => Ok(LayerOf::of(node)),
    }
}

fn layer_name(module: &str, scope: LayerOf) -> String {
    match scope {
        LayerOf::Node(n) => format!("the {n} layer of {module}"),
        LayerOf::Tag(t) => format!("the layer of {module} for tag {t}"),
        LayerOf::Mesh => format!("the mesh-wide layer of {module}"),
    }
}

pub(crate) fn run(command: SettingsCommand, ctx: &Context) -> Result<u8> {
    let mut inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    match command {
        SettingsCommand::Show {
            module,
            node,
            tag,
            history,
        } => show(
            &inv,
            &cat,
            &module,
            node.as_deref(),
            tag.as_deref(),
            history,
            ctx,
        )?,
        SettingsCommand::Set {
            module,
            node,
            tag,
            replace,
            pairs,
        } => {
            let at = scope(node.as_deref(), tag.as_deref())?;
            let (m, key) = target(&inv, &cat, &module, node.as_deref())?;
            let new = parse_pairs(&m, &pairs)?;
            let old = inv.layer(&key, at)?.unwrap_or_default();
            let (added, changed, removed) = compare(&old, &new);
            refuse_removal(
                &format!(
                    "{} sets {}",
                    layer_name(&key, at),
                    list(&old.keys().cloned().collect::<Vec<_>>())
                ),
                &removed,
                &|them| format!("Repeat {them}"),
                replace,
            )?;
            let moved = reach(&inv, &cat, &m, &key, at, &new)?;
            inv.set_layer(&key, at, &new)?;
            answer(ctx, &key, at, &added, &changed, &removed, &moved)?;
        }
        SettingsCommand::Unset {
            module,
            node,
            tag,
            keys,
        } => unset::unset(
            &mut inv,
            &cat,
            &module,
            (node.as_deref(), tag.as_deref()),
            &keys,
            ctx,
        )?,
        SettingsCommand::Clear { module, node, tag } => {
            let at = scope(node.as_deref(), tag.as_deref())?;
            let (m, key) = target(&inv, &cat, &module, node.as_deref())?;
            let moved = reach(&inv, &cat, &m, &key, at, &Layer::new())?;
            let removed = inv.clear_layer(&key, at)?;
            let removed: Vec<String> = removed
                .map(|l| l.keys().cloned().collect())
                .unwrap_or_default();
            answer(ctx, &key, at, &[], &[], &removed, &moved)?;
        }
    }
    Ok(exit::OK)
}

/// `settings show`: a layer, and with `history` every layer it replaced.
fn show(
    inv: &Inventory,
    cat: &crate::catalogue::Catalogue,
    module: &str,
    node: Option<&str>,
    tag: Option<&str>,
    history: bool,
    ctx: &Context,
) -> Result<()> {
    let at = scope(node, tag)?;
    let (m, key) = target(inv, cat, module, node)?;
    let layer = inv.layer(&key, at)?;
    let past = if history {
        inv.layer_history(&key, at)?
    } else {
        Vec::new()
    };
    if ctx.json {
        return print_json(&LayerShown {
            module: &m.name,
            node,
            tag,
            layer: layer.as_ref(),
            history: &past,
        });
    }
    match &layer {
        None => out!("{}: not set", layer_name(&key, at)),
        Some(l) => {
            out!("{}:", layer_name(&key, at));
            for (k, v) in l {
                out!("  {k} = {v}");
            }
        }
    }
    if history {
        out!("history (oldest first):");
        for h in past {
            let was = h
                .replaced
                .map_or_else(|| "nothing".to_string(), |l| Value::Object(l).to_string());
            out!("  {} {}: replaced {was}", h.at, h.action);
        }
    }
    Ok(())
}

/// Reads KEY=VALUE pairs into a layer, refusing an undeclared key or a value of the wrong type.
fn parse_pairs(m: &Module, pairs: &[String]) -> Result<Layer> {
    let mut layer = Layer::new();
    for pair in pairs {
        let Some((key, text)) = pair.split_once('=') else {
            bail!("{pair:?} is not KEY=VALUE; nothing was stored");
        };
        let setting = declared(m, key).map_err(|e| anyhow::anyhow!("{e}; nothing was stored"))?;
        let value = setting.parse_value(text).map_err(|expected| {
            anyhow::anyhow!(
                "{}: {key} takes {expected}, not {text:?}; nothing was stored",
                m.name
            )
        })?;
        if layer.insert(key.to_string(), value).is_some() {
            bail!("{key} is given twice; nothing was stored");
        }
    }
    Ok(layer)
}

fn compare(old: &Layer, new: &Layer) -> (Vec<String>, Vec<String>, Vec<String>) {
    let added = new
        .keys()
        .filter(|k| !old.contains_key(*k))
        .cloned()
        .collect();
    let changed = new
        .iter()
        .filter(|(k, v)| old.get(*k).is_some_and(|o| o != *v))
        .map(|(k, _)| k.clone())
        .collect();
    let removed = old
        .keys()
        .filter(|k| !new.contains_key(*k))
        .cloned()
        .collect();
    (added, changed, removed)
}

/// Every assignment of the module whose effective value would move if the layer were `new`, with
/// the settings that move. An assignment whose own node layer (or, for the mesh-wide layer, a tag
/// layer) overrides a key does not move when the layer under it changes it.
fn reach(
    inv: &Inventory,
    cat: &crate::catalogue::Catalogue,
    m: &Module,
    instance: &str,
    at: LayerOf,
    new: &Layer,
) -> Result<Vec<(String, String, Vec<String>)>> {
    let mesh_now = inv.layer(&m.name, LayerOf::Mesh)?;
    let mut moved = Vec::new();
    for a in inv
        .assignments(None)?
        .into_iter()
        .filter(|a| a.module == m.name)
    {
        let carried = inv.tags_of(&a.node)?;
        match at {
            LayerOf::Node(n) if n != a.node || a.instance != instance => continue,
            LayerOf::Tag(t) if !carried.iter().any(|c| c == t) => continue,
            _ => {}
        }
        let own_now = inv.layer(&a.instance, LayerOf::Node(&a.node))?;
        let tags_now = inv.tag_layers(&m.name, &carried)?;
        let now = Layers {
            mesh: mesh_now.as_ref(),
            tags: &tags_now,
            node: own_now.as_ref(),
        };
        let tags_then: Vec<(String, Layer)> = match at {
            LayerOf::Tag(t) => carried
                .iter()
                .filter_map(|c| {
                    let l = if c == t {
                        Some(new.clone())
                    } else {
                        inv.layer(&m.name, LayerOf::Tag(c)).ok()?
                    };
                    Some((c.clone(), l?))
                })
                .collect(),
            _ => tags_now.clone(),
        };
        let then = match at {
            LayerOf::Mesh => Layers {
                mesh: Some(new),
                ..now
            },
            LayerOf::Tag(_) => Layers {
                tags: &tags_then,
                ..now
            },
            LayerOf::Node(_) => Layers {
                node: Some(new),
                ..now
            },
        };
        let (mut before, mut after) = (resolve::effective(m, now), resolve::effective(m, then));
        resolve::wanted(inv, cat, m, &a.node, &mut before)?;
        resolve::wanted(inv, cat, m, &a.node, &mut after)?;
        if let LayerOf::Tag(t) = at {
            refuse_tags_disagreeing(&m.name, t, &a.node, &before, &after)?;
        }
        let keys: Vec<String> = before
            .iter()
            .zip(&after)
            .filter(|(b, a)| b.value != a.value)
            .map(|(b, _)| b.name.clone())
            .collect();
        if !keys.is_empty() {
            moved.push((a.instance, a.node, keys));
        }
    }
    Ok(moved)
}

/// A tag layer that would set a key another tag of `node` sets otherwise (the node's own layer
/// not setting it) is refused as it is set, naming both tags: the node would be refused whole
/// at the next plan.
fn refuse_tags_disagreeing(
    module: &str,
    tag: &str,
    node: &str,
    before: &[resolve::Effective],
    after: &[resolve::Effective],
) -> Result<()> {
    let new = after
        .iter()
        .zip(before)
        .find(|(a, b)| !a.conflict.is_empty() && b.conflict.is_empty());
    let Some((e, _)) = new else {
        return Ok(());
    };
    let others: Vec<String> = e
        .conflict
        .iter()
        .filter(|(t, _)| t != tag)
        .map(|(t, v)| format!("tag {t} sets it to {v}"))
        .collect();
    bail!(
        "{module}'s {key} for tag {tag} would disagree with another tag of {node}: {}; a node's \
         tags must agree (its plan would be refused). Set it for {node} alone (`mesh settings \
         set {module} {key}=… --node {node}`), or in one tag only",
        others.join(", "),
        key = e.name
    )
}

/// Nothing is removed unseen (seed 003): a change that would drop what is there is refused,
/// naming what would go, unless the operator said `--replace`. `has` says what is there now;
/// `keep` says how to keep it, given "it" or "them".
pub(super) fn refuse_removal(
    has: &str,
    removed: &[String],
    keep: &dyn Fn(&str) -> String,
    replace: bool,
) -> Result<()> {
    if removed.is_empty() || replace {
        return Ok(());
    }
    let them = if removed.len() == 1 { "it" } else { "them" };
    bail!(
        "refused: {has} and this would remove {}; nothing was stored. {} to keep {them}, \
         or say --replace to remove {them}",
        list(removed),
        keep(them)
    )
}

fn list(keys: &[String]) -> String {
    if keys.is_empty() {
        "nothing".into()
    } else {
        keys.join(", ")
    }
}

fn answer(
    ctx: &Context,
    module: &str,
    at: LayerOf,
    added: &[String],
    changed: &[String],
    removed: &[String],
    moved: &[(String, String, Vec<String>)],
) -> Result<()> {
    if ctx.json {
        let reach = moved
            .iter()
            .map(|(instance, node, settings)| super::answers::Reached {
                instance,
                node,
                settings,
            })
            .collect();
        let (node, tag) = match at {
            LayerOf::Node(n) => (Some(n), None),
            LayerOf::Tag(t) => (None, Some(t)),
            LayerOf::Mesh => (None, None),
        };
        return print_json(&super::answers::SettingsChanged {
            module,
            node,
            tag,
            added,
            changed,
            removed,
            reach,
        });
    }
    out!(
        "{}: added {}; changed {}; removed {}",
        layer_name(module, at),
        list(added),
        list(changed),
        list(removed)
    );
    if moved.is_empty() {
        out!("reach: no assignment's effective value moves");
    } else {
        out!("reach: the next push moves");
        for (instance, node, keys) in moved {
            out!("  {instance} on {node}: {}", keys.join(", "));
        }
    }
    Ok(())
}
