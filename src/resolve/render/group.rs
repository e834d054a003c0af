//! Renders a group, its name filled in and held to the helper's rule.

use crate::catalogue::GroupDef;
use crate::wire::{GroupSpec, Spec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for GroupDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let g = self;
        let name = fill.account(&fill.text(&g.name))?;
        Ok((
            format!("{}:group:{name}", fill.instance),
            Spec::from(GroupSpec {
                name,
                system: g.system,
                gid: g.gid,
            }),
        ))
    }
}
