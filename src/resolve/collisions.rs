//! What must stay single on a machine: one instance per file, unit, container or directory,
//! and one kind of resource per path.

use std::collections::BTreeMap;

use crate::wire::{Resource, Spec};

/// What must stay single on a machine: two instances may not write one file, run one unit or one
/// container, or own one directory.
pub(super) fn collisions(resources: &[Resource]) -> Vec<String> {
    let mut seen: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    let mut out = Vec::new();
    for r in resources {
        let kind = match &r.spec {
            // a package is installed once, whoever asks for it, and never removed
            Spec::Package(_) => continue,
            // a process is a unit too: it may not be another's service
            Spec::Process(_) => "service",
            other => other.kind(),
        };
        if let Some(first) = seen.insert((kind, r.spec.target()), &r.instance)
            && first != r.instance
        {
            out.push(format!(
                "{} and {} both declare the {kind} {}; run the second under settings that move it, or not on this node",
                first,
                r.instance,
                r.spec.target()
            ));
        }
    }
    out.extend(shared_paths(resources));
    out
}

/// Two kinds of resource on one path fight at every push (a whole file against keys merged into
/// it, a file where a directory is, a file where a process writes its unit): refused, whoever
/// declares them.
fn shared_paths(resources: &[Resource]) -> Vec<String> {
    let mut seen: BTreeMap<String, (&str, &str)> = BTreeMap::new();
    let mut out = Vec::new();
    for r in resources {
        let (path, kind) = match &r.spec {
            Spec::File(f) => (f.path.clone(), "file"),
            Spec::Keys(k) => (k.path.clone(), "keys"),
            Spec::Directory(d) => (d.path.clone(), "directory"),
            Spec::Process(p) => (
                format!("/etc/systemd/system/{}", p.unit),
                "process unit file",
            ),
            _ => continue,
        };
        let path = path.trim_end_matches('/').to_string();
        match seen.get(&path) {
            Some(&(first_kind, first)) if first_kind != kind => out.push(format!(
                "{first} declares the {first_kind} {path} and {} the {kind} {path}: \
                 one would undo the other at every push; move one of them",
                r.instance
            )),
            // the same kind twice is the rule above's
            Some(_) => {}
            None => {
                seen.insert(path, (kind, &r.instance));
            }
        }
    }
    out
}
