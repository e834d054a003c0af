//! Renders keys merged into a shared JSON file, each value filled in.

use crate::catalogue::KeysDef;
use crate::wire::{Costing, Key, KeysSpec, Spec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for KeysDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let k = self;
        let lookup = |name: &str| fill.values.get(name).cloned();
        let keys = k
            .keys
            .iter()
            .map(|(path, value)| Key {
                path: path.clone(),
                value: value.render(&lookup),
            })
            .collect();
        let refs = k.keys.iter().flat_map(|(_, v)| v.references()).collect();
        Ok((
            format!("{}:keys:{}", fill.instance, k.path),
            Spec::from(KeysSpec {
                path: k.path.clone(),
                owner: k.owner.clone(),
                group: k.group.clone(),
                mode: k.mode,
                keys,
                costing: Costing {
                    source: k.source.clone(),
                    settings: fill.used(refs, k.cost),
                    cost: k.cost,
                    units: fill.units(&k.units)?,
                },
            }),
        ))
    }
}
