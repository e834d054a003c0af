//! Renders a kernel setting, its value filled in.

use crate::catalogue::SysctlDef;
use crate::wire::{Spec, SysctlSpec};

use super::Filling;

/// The resource's id and what the node is sent.
pub(super) fn render(s: &SysctlDef, fill: &Filling<'_>) -> Result<(String, Spec), String> {
    Ok((
        format!("{}:sysctl:{}", fill.instance, s.name),
        Spec::Sysctl(SysctlSpec {
            name: s.name.clone(),
            value: fill.text(&s.value),
        }),
    ))
}
