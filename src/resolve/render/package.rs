//! Renders a package from the machine's package manager, as declared.

use crate::catalogue::PackageDef;
use crate::wire::{PackageSpec, Spec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for PackageDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let p = self;
        Ok((
            format!("{}:package:{}", fill.instance, p.name),
            Spec::from(PackageSpec {
                name: p.name.clone(),
                version: p.version.clone(),
                absent: p.absent,
            }),
        ))
    }
}
