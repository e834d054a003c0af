//! Renders a kernel setting, its value filled in.

use crate::catalogue::SysctlDef;
use crate::wire::{Spec, SysctlSpec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for SysctlDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let s = self;
        Ok((
            format!("{}:sysctl:{}", fill.instance, s.name),
            Spec::from(SysctlSpec {
                name: s.name.clone(),
                value: fill.text(&s.value),
            }),
        ))
    }
}
