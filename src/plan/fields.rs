//! Which fields of a resource differ between two sends, as a plan's line names them (`~ ...
//! (content, mode)`): one comparison per kind, then what every kind with units shares.

use std::collections::BTreeMap;

use crate::wire::{
    AptRepositorySpec, FileSpec, KeysSpec, ProcessSpec, Resource, Spec, TimerSpec, UserSpec,
};

/// The fields that differ between `old` and `new`, in the order a plan shows them; `source`
/// alone when nothing on the machine moves but what the resource is made from does.
pub(super) fn differing_fields(old: &Resource, new: &Resource) -> Vec<String> {
    let mut out = of_kind(&old.spec, &new.spec);
    if let (Some(a), Some(b)) = (old.spec.costing(), new.spec.costing())
        && (a.units != b.units || a.cost != b.cost)
    {
        out.push("units".to_string());
    }
    if out.is_empty() && (old.spec.costing() != new.spec.costing() || old.module != new.module) {
        // nothing on the machine moves, but what it is made from does: it is sent again
        out.push("source".to_string());
    }
    out
}

/// The names of `fields` that differ.
fn named(fields: &[(&str, bool)]) -> Vec<String> {
    fields
        .iter()
        .filter(|(_, differs)| *differs)
        .map(|(field, _)| field.to_string())
        .collect()
}

/// The fields of the kind's own spec that differ; `kind` when the kinds do.
fn of_kind(old: &Spec, new: &Spec) -> Vec<String> {
    match (old, new) {
        (Spec::File(a), Spec::File(b)) => file(a, b),
        (Spec::Keys(a), Spec::Keys(b)) => keys(a, b),
        (Spec::Service(a), Spec::Service(b)) => named(&[
            ("state", a.running != b.running),
            ("enabled", a.enabled != b.enabled),
        ]),
        (Spec::Directory(a), Spec::Directory(b)) => named(&[
            ("owner", a.owner != b.owner || a.group != b.group),
            ("mode", a.mode != b.mode),
        ]),
        (Spec::Process(a), Spec::Process(b)) => process(a, b),
        // the move itself, as the plan line shows it: `(1.2 -> 1.3)`, `(present -> absent)`
        (Spec::Package(a), Spec::Package(b)) if a.wanted() != b.wanted() => {
            vec![format!("{} -> {}", a.wanted(), b.wanted())]
        }
        (Spec::Package(_), Spec::Package(_)) => Vec::new(),
        (Spec::Timer(a), Spec::Timer(b)) => timer(a, b),
        (Spec::User(a), Spec::User(b)) => user(a, b),
        (Spec::Group(a), Spec::Group(b)) => {
            named(&[("system", a.system != b.system), ("gid", a.gid != b.gid)])
        }
        (Spec::AptRepository(a), Spec::AptRepository(b)) => apt_repository(a, b),
        (Spec::Sysctl(a), Spec::Sysctl(b)) => named(&[("value", a.value != b.value)]),
        (Spec::Symlink(a), Spec::Symlink(b)) => named(&[("target", a.target != b.target)]),
        (Spec::Container(a), Spec::Container(b)) => {
            b.differing(a).into_iter().map(String::from).collect()
        }
        _ => vec!["kind".to_string()],
    }
}

fn file(a: &FileSpec, b: &FileSpec) -> Vec<String> {
    named(&[
        ("content", a.content != b.content || a.sealed != b.sealed),
        ("owner", a.owner != b.owner || a.group != b.group),
        ("mode", a.mode != b.mode),
        ("validate", a.validate != b.validate),
    ])
}

/// Each key whose value moved, and each given back, by its dotted path.
fn keys(a: &KeysSpec, b: &KeysSpec) -> Vec<String> {
    let before: BTreeMap<String, &serde_json::Value> =
        a.keys.iter().map(|k| (k.dotted(), &k.value)).collect();
    let after: BTreeMap<String, &serde_json::Value> =
        b.keys.iter().map(|k| (k.dotted(), &k.value)).collect();
    let mut out = Vec::new();
    for (k, v) in &after {
        if before.get(k) != Some(v) {
            out.push(k.clone());
        }
    }
    for k in before.keys() {
        if !after.contains_key(k) {
            out.push(format!("{k} (given back)"));
        }
    }
    out
}

fn process(a: &ProcessSpec, b: &ProcessSpec) -> Vec<String> {
    let bundle_moved = !a
        .bundle
        .iter()
        .map(|f| (&f.path, &f.content, f.mode))
        .eq(b.bundle.iter().map(|f| (&f.path, &f.content, f.mode)));
    named(&[
        ("command", a.command != b.command),
        ("user", a.user != b.user),
        (
            "environment",
            a.environment != b.environment || a.sealed_environment != b.sealed_environment,
        ),
        (
            "working directory",
            a.working_directory != b.working_directory,
        ),
        ("restart", a.restart != b.restart),
        ("access", a.access != b.access),
        ("bundle", bundle_moved),
        ("description", a.description != b.description),
    ])
}

fn timer(a: &TimerSpec, b: &TimerSpec) -> Vec<String> {
    named(&[
        ("command", a.command != b.command),
        ("user", a.user != b.user),
        ("schedule", a.schedule != b.schedule),
        ("description", a.description != b.description),
    ])
}

fn user(a: &UserSpec, b: &UserSpec) -> Vec<String> {
    named(&[
        ("shell", a.shell != b.shell),
        ("groups", a.groups != b.groups),
        ("home", a.home != b.home),
        ("authorized-keys", a.authorized_keys != b.authorized_keys),
        ("remove-home", a.remove_home != b.remove_home),
        ("uid", a.uid != b.uid),
    ])
}

fn apt_repository(a: &AptRepositorySpec, b: &AptRepositorySpec) -> Vec<String> {
    named(&[
        ("uri", a.uri != b.uri),
        ("suite", a.suite != b.suite),
        ("components", a.components != b.components),
        ("key", a.key.trim() != b.key.trim()),
    ])
}
