//! Renders a group, its name filled in and held to the helper's rule.

use crate::catalogue::GroupDef;
use crate::wire::{GroupSpec, Spec};

use super::Filling;

/// The resource's id and what the node is sent.
pub(super) fn render(g: &GroupDef, fill: &Filling<'_>) -> Result<(String, Spec), String> {
    let name = fill.account(&fill.text(&g.name))?;
    Ok((
        format!("{}:group:{name}", fill.instance),
        Spec::Group(GroupSpec {
            name,
            system: g.system,
            gid: g.gid,
        }),
    ))
}
