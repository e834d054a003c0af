//! Renders a command run on a schedule: the timer and its service the mesh writes, named after its instance.

use crate::catalogue::TimerDef;
use crate::wire::{Spec, TimerSpec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for TimerDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let t = self;
        let instance = fill.instance;
        let name = match &t.name {
            Some(n) => format!("{instance}-{n}"),
            None => instance.to_string(),
        };
        Ok((
            format!("{instance}:timer:{name}.timer"),
            Spec::from(TimerSpec {
                name,
                description: format!("{} ({instance}, by mesh)", t.description),
                command: t.command.iter().map(|c| fill.text(c)).collect(),
                user: t.user.clone(),
                schedule: fill.text(&t.schedule),
            }),
        ))
    }
}
