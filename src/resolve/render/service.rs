//! Renders an existing unit and the state it should be in, its name filled in and checked.

use crate::catalogue::ServiceDef;
use crate::wire::{ServiceSpec, Spec};

use super::{Filling, Render};

/// The resource's id and what the node is sent.
impl Render for ServiceDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), String> {
        let sv = self;
        let unit = fill.text(&sv.unit);
        if !crate::catalogue::valid_unit(&unit) {
            return Err(format!(
                "module {}: service unit {} reads as {unit:?}, which is not a systemd unit name",
                fill.module.name,
                sv.unit.source_text()
            ));
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
