//! Renders a unit the mesh writes and runs, named after its instance, with its bundle of files.

use crate::catalogue::{ProcessDef, Template, digest};
use crate::wire::{self, BundleFile, Cost, ProcessSpec, Spec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for ProcessDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let p = self;
        let instance = fill.instance;
        let base = match &p.name {
            Some(n) => format!("{instance}-{n}"),
            None => instance.to_string(),
        };
        let unit = format!("{base}.service");
        let text = |t: &Template| fill.text(t);
        Ok((
            format!("{instance}:process:{unit}"),
            Spec::from(ProcessSpec {
                unit: unit.clone(),
                description: format!("{} ({instance}, by mesh)", p.description),
                command: p.command.iter().map(text).collect(),
                user: p.user.clone(),
                environment: p
                    .environment
                    .iter()
                    .map(|(k, v)| (k.clone(), text(v)))
                    .collect(),
                secret_environment: p.secret_environment.clone(),
                sealed_environment: Default::default(),
                working_directory: p.working_directory.as_ref().map(text),
                restart: p.restart.clone(),
                bundle_dir: format!("{}/bundles/{base}", wire::STATE_DIR),
                bundle: p
                    .bundle
                    .iter()
                    .map(|(path, t, mode)| BundleFile {
                        path: path.clone(),
                        content: text(t),
                        mode: *mode,
                        source: digest(&[t.source_text().as_bytes()]),
                        settings: fill.used(t.references(), Cost::Restart),
                    })
                    .collect(),
                // the operator's data: filled in by `compose` from the module's accesses
                access: vec![],
                ready: fill.ready(p.ready.as_ref())?,
            }),
        ))
    }
}
