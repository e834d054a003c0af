//! The held move (seed 003, guard 3): a container that keeps a mount at the same path inside it
//! with a different directory of the machine behind it is its module's data moving, or about to
//! run on an empty directory. Such a node's push is held until the operator says `--move`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::wire::{ContainerSpec, Declaration};

/// One mount whose directory on the machine would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Move {
    /// The instance that declares the container (what `--move` names).
    pub instance: String,
    /// The module and its version.
    pub module: String,
    pub container: String,
    /// The path inside the container.
    pub target: String,
    /// The directory on the machine it has now.
    pub from: String,
    /// The directory it would have.
    pub to: String,
}

/// Every move in going from what was last sent to `next`. A first send, a new container, a mount
/// added or removed and a changed image are not moves.
pub fn moves(next: &Declaration, last: Option<&Declaration>) -> Vec<Move> {
    let Some(last) = last else {
        return Vec::new();
    };
    let before: BTreeMap<&str, _> = last
        .resources
        .iter()
        .filter_map(|r| Some((r.id.as_str(), r.spec.get::<ContainerSpec>()?)))
        .collect();
    let mut out = Vec::new();
    for r in &next.resources {
        let (Some(now), Some(was)) = (r.spec.get::<ContainerSpec>(), before.get(r.id.as_str()))
        else {
            continue;
        };
        for m in &now.mounts {
            if let Some(old) = was.mounts.iter().find(|o| o.target == m.target)
                && old.source != m.source
            {
                out.push(Move {
                    instance: r.instance.clone(),
                    module: r.module.clone(),
                    container: now.name.clone(),
                    target: m.target.clone(),
                    from: old.source.clone(),
                    to: m.source.clone(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::moves;
    use crate::wire::{ContainerSpec, Declaration, Mount, Resource, Spec, VERSION};

    fn decl(image: &str, mounts: &[(&str, &str)]) -> Declaration {
        Declaration {
            version: VERSION,
            node: "n".into(),
            expects_record: false,
            confirm_within: None,
            confirm_removals: Vec::new(),
            keep: Vec::new(),
            resources: vec![Resource {
                id: "web:container:web".into(),
                instance: "web".into(),
                module: "web@1".into(),
                confirm: false,
                spec: Spec::Container(ContainerSpec {
                    name: "web".into(),
                    image: image.into(),
                    command: vec![],
                    environment: BTreeMap::new(),
                    secret_environment: vec![],
                    sealed_environment: Default::default(),
                    mounts: mounts
                        .iter()
                        .map(|(s, t)| Mount {
                            source: (*s).into(),
                            target: (*t).into(),
                            read_only: false,
                        })
                        .collect(),
                    ports: vec![],
                    restart: "no".into(),
                    access: vec![],
                    ready: None,
                }),
            }],
            planned: None,
        }
    }

    #[test]
    fn a_mount_whose_source_changes_is_a_move_and_nothing_else_is() {
        let was = decl("a", &[("/srv/a", "/data")]);
        let moved = moves(&decl("a", &[("/srv/b", "/data")]), Some(&was));
        assert_eq!(moved.len(), 1);
        assert_eq!(
            (moved[0].from.as_str(), moved[0].to.as_str()),
            ("/srv/a", "/srv/b")
        );
        // first send, a new image, a mount added or removed: not moves
        assert!(moves(&was, None).is_empty());
        assert!(moves(&decl("b", &[("/srv/a", "/data")]), Some(&was)).is_empty());
        assert!(moves(&decl("a", &[("/srv/a", "/data"), ("/x", "/y")]), Some(&was)).is_empty());
        assert!(moves(&decl("a", &[]), Some(&was)).is_empty());
    }
}
