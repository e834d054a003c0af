//! Renders a symbolic link, its path and target filled in.

use crate::catalogue::SymlinkDef;
use crate::wire::{Spec, SymlinkSpec};

use super::Filling;

/// The resource's id and what the node is sent.
pub(super) fn render(l: &SymlinkDef, fill: &Filling<'_>) -> Result<(String, Spec), String> {
    let path = fill.text(&l.path);
    Ok((
        format!("{}:symlink:{path}", fill.instance),
        Spec::Symlink(SymlinkSpec {
            path,
            target: fill.text(&l.target),
        }),
    ))
}
