//! Renders an apt repository and its key, filled in.

use crate::catalogue::AptRepositoryDef;
use crate::wire::{AptRepositorySpec, Spec};

use super::Filling;

/// The resource's id and what the node is sent.
pub(super) fn render(a: &AptRepositoryDef, fill: &Filling<'_>) -> Result<(String, Spec), String> {
    let name = fill.text(&a.name);
    Ok((
        format!("{}:apt-repository:{name}", fill.instance),
        Spec::AptRepository(AptRepositorySpec {
            name,
            uri: fill.text(&a.uri),
            suite: fill.text(&a.suite),
            components: fill
                .text(&a.components)
                .split_whitespace()
                .map(String::from)
                .collect(),
            key: fill.text(&a.key),
        }),
    ))
}
