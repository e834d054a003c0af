//! `mesh settings unset`: keys taken out of one layer, each named, the rest of the layer kept.

use anyhow::{Result, bail};

use super::super::Context;
use super::{answer, compare, layer_name, list, reach, scope, target};
use crate::inventory::Inventory;

/// `settings unset`: `keys` taken out of the layer `(node, tag)` names, every one of them set
/// there (a key the layer does not set is refused, nothing removed); a layer left empty goes.
pub(super) fn unset(
    inv: &mut Inventory,
    cat: &crate::catalogue::Catalogue,
    module: &str,
    (node, tag): (Option<&str>, Option<&str>),
    keys: &[String],
    ctx: &Context,
) -> Result<()> {
    let at = scope(node, tag)?;
    let (m, key) = target(inv, cat, module, node)?;
    let old = inv.layer(&key, at)?.unwrap_or_default();
    let missing: Vec<String> = keys
        .iter()
        .filter(|k| !old.contains_key(*k))
        .cloned()
        .collect();
    if !missing.is_empty() {
        bail!(
            "{} does not set {} (it sets {}); nothing was removed",
            layer_name(&key, at),
            list(&missing),
            if old.is_empty() {
                "nothing".to_string()
            } else {
                list(&old.keys().cloned().collect::<Vec<_>>())
            }
        );
    }
    let mut new = old.clone();
    new.retain(|k, _| !keys.contains(k));
    let moved = reach(inv, cat, &m, &key, at, &new)?;
    if new.is_empty() {
        inv.clear_layer(&key, at)?;
    } else {
        inv.set_layer(&key, at, &new)?;
    }
    let (_, _, removed) = compare(&old, &new);
    answer(ctx, &key, at, &[], &[], &removed, &moved)
}
