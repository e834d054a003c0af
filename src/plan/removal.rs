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
        // a package's stop may undo more than the mesh did: what it runs is shown with it
        let stops: Vec<String> = undo
            .stops
            .iter()
            .map(|unit| match undo.stop_runs.get(unit) {
                Some(runs) if !runs.is_empty() => format!("{unit} (runs: {})", runs.join("; ")),
                _ => unit.clone(),
            })
            .collect();
        said.push(format!("stops {}", list(&stops)));
    }
    if !undo.leaves_running.is_empty() {
        said.push(format!(
            "leaves {} running (its module says on-removal: leave-running)",
            list(&undo.leaves_running)
        ));
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
    if !undo.owners.is_empty() {
        said.push(format!(
            "gives back the owner and mode of {}, as the host had them",
            list(&undo.owners)
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
    fn a_directory_given_back_names_the_owner_and_mode_it_gets_again() {
        let undo = Undo {
            owners: vec!["/srv/data (root (0):root (0) 0755)".into()],
            ..Undo::default()
        };
        assert_eq!(
            words(&undo),
            vec![
                "gives back the owner and mode of /srv/data (root (0):root (0) 0755), as the host had them"
            ]
        );
    }

    #[test]
    fn a_stop_says_what_it_runs_and_a_unit_left_running_is_said() {
        let undo = Undo {
            stops: vec!["nftables.service".into(), "plain.service".into()],
            stop_runs: [(
                "nftables.service".to_string(),
                vec!["/usr/sbin/nft flush ruleset".to_string()],
            )]
            .into(),
            leaves_running: vec!["docker.service".into()],
            ..Undo::default()
        };
        assert_eq!(
            words(&undo),
            vec![
                "stops nftables.service (runs: /usr/sbin/nft flush ruleset), plain.service",
                "leaves docker.service running (its module says on-removal: leave-running)",
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
            keep: Vec::new(),
            planned: None,
        };
        let report = Report {
            version: VERSION,
            mode: Mode::Apply,
            hostname: "n".into(),
            host_keys: Vec::new(),
            new_machine: false,
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
                micros: 0,
            }],
            units: vec![],
            adoption: None,
            awaiting: None,
            reverted: Vec::new(),
            pending: None,
            generation: None,
            facts: None,
            steps: Vec::new(),
            generation_not_kept: None,
        };
        let p = super::super::plan(&decl(vec![]), Some(&decl(vec![file])), Some(&report));
        let got: Vec<(&str, &str)> = p.units.iter().map(|u| (u.unit.as_str(), u.verb)).collect();
        assert_eq!(got, vec![("read.service", "reload")]);
        assert_eq!(p.units[0].because, vec!["m:file:/a"]);
    }
}
