//! What the wire crate's own tests build resources from.

use crate::{ContainerSpec, Mount};

/// A container that mounts `source` at /data, and nothing else.
pub(crate) fn container_mounting(source: &str) -> ContainerSpec {
    ContainerSpec {
        name: "c".into(),
        image: "i".into(),
        command: vec![],
        environment: Default::default(),
        secret_environment: vec![],
        sealed_environment: Default::default(),
        mounts: vec![Mount {
            source: source.into(),
            target: "/data".into(),
            read_only: false,
        }],
        ports: vec![],
        restart: "no".into(),
        access: vec![],
        ready: None,
    }
}
