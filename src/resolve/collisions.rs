//! What must stay single on a machine: one instance per file, unit, container or directory,
//! one kind of resource per path, and each resource once.

use std::collections::{BTreeMap, BTreeSet};

use crate::wire::{Declaration, Resource};

/// What must stay single on a machine: two instances may not write one file, run one unit or one
/// container, or own one directory.
pub(super) fn collisions(resources: &[Resource]) -> Vec<String> {
    let mut seen: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    let mut out = Vec::new();
    for r in resources {
        // a package is installed once, whoever asks for it; a process or a timer is a unit too
        let Some(kind) = r.spec.single_as() else {
            continue;
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
    out.extend(repeated(resources));
    out
}

/// One instance's two resources that a node's settings bring to one path are one resource
/// declared twice: the helper would write it twice, the later undoing the earlier, and the
/// inventory keeps one copy per resource (before, the push applied and then could not be
/// recorded, and the next was refused as stale).
fn repeated(resources: &[Resource]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut said = BTreeSet::new();
    resources
        .iter()
        .filter(|r| !seen.insert(r.id.as_str()) && said.insert(r.id.as_str()))
        .map(|r| {
            format!(
                "{i} declares the {} {} twice: two of its resources come to it under this node's \
                 settings; give one of them another value there (`mesh config {i} --node NODE` \
                 shows what each setting comes to)",
                r.spec.kind(),
                r.spec.target(),
                i = r.instance,
            )
        })
        .collect()
}

/// Two kinds of resource on one path fight at every push (a whole file against keys merged into
/// it, a file where a directory is, a file where a process writes its unit): refused, whoever
/// declares them.
fn shared_paths(resources: &[Resource]) -> Vec<String> {
    let mut seen: BTreeMap<String, (&str, &str)> = BTreeMap::new();
    let mut out = Vec::new();
    let written = resources.iter().flat_map(|r| {
        let paths = r.spec.claims();
        paths.into_iter().map(move |(path, kind)| (r, path, kind))
    });
    for (r, path, kind) in written {
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

/// The operator's data is never made, owned or removed by the mesh: a path given as such may not
/// be what the mesh makes on the node now or made there before (a directory of another instance
/// it would remove when that instance goes, a file it would write).
pub(super) fn operators_data(
    resources: &[Resource],
    confirmed: Option<&Declaration>,
) -> Vec<String> {
    let made: Vec<(&str, &str, &str)> = resources
        .iter()
        .chain(
            confirmed
                .map(|c| c.resources.as_slice())
                .unwrap_or_default(),
        )
        .filter_map(|r| {
            let (path, kind) = r.spec.made()?;
            Some((path, kind, r.instance.as_str()))
        })
        .collect();
    let mut out = Vec::new();
    for r in resources {
        let access = r.spec.access();
        for a in access {
            let data = a.path.trim_end_matches('/');
            // what is only below or above it is left alone: a directory the mesh made is
            // removed only when empty, and what it makes inside the data is the module's to say
            let clash = made
                .iter()
                .find(|(path, _, _)| path.trim_end_matches('/') == data);
            if let Some((_, kind, instance)) = clash {
                let line = format!(
                    "{}: the operator's data {} at {data} is the {kind} the mesh makes for \
                     {instance} (and removes with it): place the data elsewhere with `mesh place \
                     {} NODE {}=PATH`",
                    r.instance, a.name, r.instance, a.name
                );
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
    }
    out
}
