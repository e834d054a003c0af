//! Renders an apt repository and its key, filled in.

use crate::catalogue::AptRepositoryDef;
use crate::wire::{AptRepositorySpec, Spec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for AptRepositoryDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let a = self;
        let name = fill.text(&a.name);
        Ok((
            format!("{}:apt-repository:{name}", fill.instance),
            Spec::from(AptRepositorySpec {
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
}
