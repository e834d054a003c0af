//! Renders a container run with the machine's Docker: image, mounts and ports filled in.

use crate::catalogue::{ContainerDef, Template};
use crate::wire::{ContainerSpec, Mount, Port, Spec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for ContainerDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let c = self;
        let instance = fill.instance;
        let name = match &c.name {
            Some(n) => format!("{instance}-{n}"),
            None => instance.to_string(),
        };
        let text = |t: &Template| fill.text(t);
        Ok((
            format!("{instance}:container:{name}"),
            Spec::from(ContainerSpec {
                name,
                image: text(&c.image),
                command: c.command.iter().map(text).collect(),
                environment: c
                    .environment
                    .iter()
                    .map(|(k, v)| (k.clone(), text(v)))
                    .collect(),
                secret_environment: c.secret_environment.clone(),
                sealed_environment: Default::default(),
                mounts: c
                    .mounts
                    .iter()
                    .map(|(source, target, read_only)| Mount {
                        source: text(source),
                        target: target.clone(),
                        read_only: *read_only,
                    })
                    .collect(),
                ports: ports(c, fill)?,
                restart: c.restart.clone(),
                // the operator's data it reaches is added once answered (`with_access`)
                access: Vec::new(),
                ready: fill.ready(c.ready.as_ref())?,
            }),
        ))
    }
}

/// The container's published ports, each host port as its settings fill it in.
fn ports(c: &ContainerDef, fill: &Filling<'_>) -> Result<Vec<Port>, RenderError> {
    c.ports
        .iter()
        .map(|(host, container, protocol)| {
            let text = fill.text(host);
            Ok(Port {
                host: text.parse().map_err(|_| RenderError::HostPort {
                    written: host.source_text(),
                    text: text.clone(),
                })?,
                container: *container,
                protocol: protocol.clone(),
            })
        })
        .collect()
}
