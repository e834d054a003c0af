//! Renders a package from the machine's package manager, as declared.

use crate::catalogue::PackageDef;
use crate::wire::{PackageSpec, Spec};

use super::Filling;

/// The resource's id and what the node is sent.
pub(super) fn render(p: &PackageDef, fill: &Filling<'_>) -> Result<(String, Spec), String> {
    Ok((
        format!("{}:package:{}", fill.instance, p.name),
        Spec::Package(PackageSpec {
            name: p.name.clone(),
            version: p.version.clone(),
            absent: p.absent,
        }),
    ))
}
