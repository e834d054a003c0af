//! Renders a whole file from a shipped template, and what each setting it reads costs.

use crate::catalogue::{FileDef, Template};
use crate::wire::{Costing, FileSpec, Spec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for FileDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let f = self;
        let content = fill.text(&f.template);
        let path = fill.text(&f.path);
        let validate: Vec<String> = f.validate.iter().map(|w| fill.text(w)).collect();
        for word in &validate {
            crate::wire::unit::check_text("validate", word).map_err(|why| {
                RenderError::UnitValue {
                    kind: "file",
                    target: path.clone(),
                    why,
                }
            })?;
        }
        let refs = f
            .template
            .references()
            .into_iter()
            .chain(f.path.references())
            .chain(f.validate.iter().flat_map(Template::references));
        Ok((
            format!("{}:file:{path}", fill.instance),
            Spec::from(FileSpec {
                path,
                secret: f.secret,
                sealed: None,
                effective: f.effective.clone(),
                owner: f.owner.clone(),
                group: f.group.clone(),
                mode: f.mode,
                content,
                validate,
                costing: Costing {
                    source: f.source.clone(),
                    settings: fill.used(refs.collect(), f.cost),
                    cost: f.cost,
                    units: fill.units(&f.units)?,
                },
            }),
        ))
    }
}
