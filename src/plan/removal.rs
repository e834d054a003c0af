//! What a removal does, in the words a plan shows: exactly what the machine's helper said undoing
//! the resource will do, and, where only the machine can tell at that moment (is a directory
//! empty?), the condition.

use crate::wire::Undo;

/// The clauses of one removal, in the order the helper acts; empty when it leaves the machine
/// as it is.
pub fn words(undo: &Undo) -> Vec<String> {
    let list = |paths: &[String]| paths.join(", ");
    let mut said = Vec::new();
    if !undo.stops.is_empty() {
        said.push(format!("stops {}", list(&undo.stops)));
    }
    if !undo.deletes.is_empty() {
        said.push(format!("deletes {}", list(&undo.deletes)));
    }
    if !undo.restores.is_empty() {
        said.push(format!(
            "restores {} as the host had it",
            list(&undo.restores)
        ));
    }
    if !undo.deletes_if_empty.is_empty() {
        said.push(format!(
            "deletes {} if it is empty then (kept while it holds anything)",
            list(&undo.deletes_if_empty)
        ));
    }
    if !undo.keeps.is_empty() {
        said.push(format!("keeps {}: it holds files", list(&undo.keeps)));
    }
    if !undo.reloads.is_empty() {
        said.push(format!("reloads {}", list(&undo.reloads)));
    }
    if !undo.restarts.is_empty() {
        said.push(format!("restarts {}", list(&undo.restarts)));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_promised_with_its_condition_and_readers_are_named() {
        let undo = Undo {
            deletes: vec!["/etc/kv.conf".into()],
            deletes_if_empty: vec!["/srv/mesh/kv/data".into()],
            restarts: vec!["kv.service".into()],
            ..Undo::default()
        };
        assert_eq!(
            words(&undo),
            vec![
                "deletes /etc/kv.conf",
                "deletes /srv/mesh/kv/data if it is empty then (kept while it holds anything)",
                "restarts kv.service",
            ]
        );
    }

    #[test]
    fn a_plan_names_the_units_a_removal_reloads_as_the_helper_said() {
        use crate::wire::{
            Cost, Costing, Declaration, FileSpec, Mode, Outcome, Report, Resource, Spec, State,
            VERSION,
        };
        let file = Resource {
            id: "m:file:/a".into(),
            instance: "m".into(),
            module: "m@1".into(),
            confirm: false,
            spec: Spec::File(FileSpec {
                path: "/a".into(),
                owner: "root".into(),
                group: "root".into(),
                mode: 0o644,
                content: "x".into(),
                validate: vec![],
                secret: false,
                sealed: None,
                effective: None,
                costing: Costing {
                    source: "s".into(),
                    settings: Default::default(),
                    cost: Cost::Reload,
                    units: vec!["read.service".into()],
                },
            }),
        };
        let decl = |resources| Declaration {
            version: VERSION,
            node: "n".into(),
            resources,
            expects_record: false,
            confirm_within: None,
            confirm_removals: Vec::new(),
        };
        let report = Report {
            version: VERSION,
            mode: Mode::Apply,
            hostname: "n".into(),
            resources: vec![Outcome {
                id: "m:file:/a".into(),
                state: State::Created,
                detail: String::new(),
                undo: Some(Undo {
                    restores: vec!["/a".into()],
                    reloads: vec!["read.service".into()],
                    ..Undo::default()
                }),
                seen: Vec::new(),
            }],
            units: vec![],
            adoption: None,
            awaiting: None,
            reverted: Vec::new(),
            pending: None,
        };
        let p = super::super::plan(&decl(vec![]), Some(&decl(vec![file])), Some(&report));
        let got: Vec<(&str, &str)> = p.units.iter().map(|u| (u.unit.as_str(), u.verb)).collect();
        assert_eq!(got, vec![("read.service", "reload")]);
        assert_eq!(p.units[0].because, vec!["m:file:/a"]);
    }
}
