//! Renders an existing unit and the state it should be in, its name filled in and checked.

use crate::catalogue::ServiceDef;
use crate::wire::{ServiceSpec, Spec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for ServiceDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let sv = self;
        let unit = fill.text(&sv.unit);
        if !crate::catalogue::valid_unit(&unit) {
            return Err(RenderError::NotAService {
                module: fill.module.name.clone(),
                written: sv.unit.source_text(),
                unit,
            });
        }
        Ok((
            format!("{}:service:{unit}", fill.instance),
            Spec::from(ServiceSpec {
                unit,
                running: sv.running,
                enabled: sv.enabled,
                on_removal: sv.on_removal,
                ready: fill.ready(sv.ready.as_ref())?,
            }),
        ))
    }
}
