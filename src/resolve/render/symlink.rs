//! Renders a symbolic link, its path and target filled in.

use crate::catalogue::SymlinkDef;
use crate::wire::{Spec, SymlinkSpec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for SymlinkDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let l = self;
        let path = fill.text(&l.path);
        Ok((
            format!("{}:symlink:{path}", fill.instance),
            Spec::from(SymlinkSpec {
                path,
                target: fill.text(&l.target),
            }),
        ))
    }
}
