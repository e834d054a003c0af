//! The cost rules and the format's round trips.

use std::collections::BTreeMap;

use super::*;

fn spec(source: &str, settings: &[(&str, &str, Cost)], cost: Cost) -> Costing {
    Costing {
        source: source.into(),
        settings: settings
            .iter()
            .map(|(n, d, c)| {
                (
                    (*n).to_string(),
                    SettingUse {
                        digest: (*d).to_string(),
                        cost: *c,
                    },
                )
            })
            .collect(),
        cost,
        units: vec![],
    }
}

#[test]
fn a_new_file_costs_its_declared_cost() {
    let next = spec("t1", &[("a", "1", Cost::Reload)], Cost::Restart);
    assert_eq!(change_cost(None, &next, false), Cost::Restart);
}

#[test]
fn the_strongest_moved_setting_wins() {
    let prev = spec(
        "t1",
        &[
            ("a", "1", Cost::Reload),
            ("b", "1", Cost::Restart),
            ("c", "1", Cost::None),
        ],
        Cost::Restart,
    );
    let only_reload = spec(
        "t1",
        &[
            ("a", "2", Cost::Reload),
            ("b", "1", Cost::Restart),
            ("c", "1", Cost::None),
        ],
        Cost::Restart,
    );
    let both = spec(
        "t1",
        &[
            ("a", "2", Cost::Reload),
            ("b", "2", Cost::Restart),
            ("c", "1", Cost::None),
        ],
        Cost::Restart,
    );
    let p = Some((prev.source.as_str(), &prev.settings));
    assert_eq!(change_cost(p, &only_reload, false), Cost::Reload);
    assert_eq!(change_cost(p, &both, false), Cost::Restart);
    assert_eq!(change_cost(p, &prev, false), Cost::None);
}

#[test]
fn drift_or_a_new_template_costs_the_declared_cost() {
    let prev = spec("t1", &[("a", "1", Cost::None)], Cost::Reload);
    let same = spec("t1", &[("a", "1", Cost::None)], Cost::Reload);
    let new_template = spec("t2", &[("a", "1", Cost::None)], Cost::Reload);
    let p = Some((prev.source.as_str(), &prev.settings));
    assert_eq!(change_cost(p, &same, true), Cost::Reload);
    assert_eq!(change_cost(p, &new_template, false), Cost::Reload);
}

#[test]
fn a_bundle_file_costs_what_moved_in_it_and_anything_else_restarts() {
    let made = spec(
        "t1",
        &[("quiet", "1", Cost::None), ("loud", "1", Cost::Restart)],
        Cost::Restart,
    );
    let file = |source: &str, quiet: &str, loud: &str, content: &str| BundleFile {
        path: "run.sh".into(),
        content: content.into(),
        mode: 0o755,
        source: source.into(),
        settings: spec(
            "",
            &[("quiet", quiet, Cost::None), ("loud", loud, Cost::Restart)],
            Cost::None,
        )
        .settings,
    };
    let was = Some((made.source.as_str(), &made.settings));
    assert_eq!(file("t1", "2", "1", "x").cost(was), Cost::None);
    assert_eq!(file("t1", "2", "2", "x").cost(was), Cost::Restart);
    assert_eq!(file("t2", "1", "1", "x").cost(was), Cost::Restart);
    assert_eq!(file("t1", "1", "1", "x").cost(None), Cost::Restart);

    let process = |bundle: BundleFile, command: &str| ProcessSpec {
        unit: "p.service".into(),
        description: "p".into(),
        command: vec![command.into()],
        user: "root".into(),
        environment: BTreeMap::new(),
        secret_environment: vec![],
        sealed_environment: Default::default(),
        working_directory: None,
        restart: "always".into(),
        bundle_dir: "/var/lib/mesh/bundles/p".into(),
        bundle: vec![bundle],
        access: vec![],
        ready: None,
    };
    let old = process(file("t1", "1", "1", "a"), "/bin/sh");
    assert_eq!(
        process(file("t1", "2", "1", "b"), "/bin/sh").change_cost(&old),
        Cost::None
    );
    assert_eq!(
        process(file("t1", "1", "2", "b"), "/bin/sh").change_cost(&old),
        Cost::Restart
    );
    // its command moved: a restart, whatever the bundle
    assert_eq!(
        process(file("t1", "1", "1", "a"), "/bin/bash").change_cost(&old),
        Cost::Restart
    );
    assert_eq!(old.change_cost(&old), Cost::None);
}

#[test]
fn cost_orders_none_reload_restart() {
    assert!(Cost::None < Cost::Reload && Cost::Reload < Cost::Restart);
}

#[test]
fn an_answer_without_step_times_reads_with_none_and_its_steps_read_back_in_order() {
    // a helper from before step times sends none; an operator from before them skips the field
    let old = r#"{"version": 1, "mode": "apply", "hostname": "h", "resources": []}"#;
    let report: Report = serde_json::from_str(old).unwrap();
    assert!(report.steps.is_empty());
    assert!(!serde_json::to_string(&report).unwrap().contains("steps"));
    let new = r#"{"version": 1, "mode": "apply", "hostname": "h", "resources": [],
        "steps": [{"step": "lock", "micros": 12}, {"step": "facts", "micros": 3}]}"#;
    let report: Report = serde_json::from_str(new).unwrap();
    let steps: Vec<(&str, u64)> = report
        .steps
        .iter()
        .map(|s| (s.step.as_str(), s.micros))
        .collect();
    assert_eq!(steps, [("lock", 12), ("facts", 3)]);
}
