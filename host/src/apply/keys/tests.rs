//! Keys in a shared JSON file: taken, changed, given back, drift seen.

use std::collections::BTreeMap;

use mesh_wire::{Cost, Costing, Key, KeysSpec, Mode, Resource, Spec, State};
use serde_json::{Value, json};

use super::super::testkit::{decl, ids, run, sandbox, states};

fn keys(path: &std::path::Path, keys: &[(&str, Value)]) -> Resource {
    Resource {
        id: format!("t:keys:{}", path.display()),
        instance: "t".into(),
        module: "t@1".into(),
        confirm: false,
        spec: Spec::Keys(KeysSpec {
            path: path.display().to_string(),
            owner: ids().0.to_string(),
            group: ids().1.to_string(),
            mode: 0o644,
            keys: keys
                .iter()
                .map(|(k, v)| Key {
                    path: k.split('.').map(String::from).collect(),
                    value: v.clone(),
                })
                .collect(),
            costing: Costing {
                source: "s".into(),
                settings: BTreeMap::new(),
                cost: Cost::None,
                units: vec![],
            },
        }),
    }
}

fn read(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn keys_go_into_a_shared_file_and_come_back_out_leaving_the_rest() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("daemon.json");
    let theirs =
        r#"{"debug": true, "log-opts": {"tag": "x", "max-size": "1m"}, "dns": ["9.9.9.9"]}"#;
    std::fs::write(&target, theirs).unwrap();
    let ours = keys(
        &target,
        &[
            ("log-opts.max-size", json!("50m")),
            ("live-restore", json!(true)),
            ("dns", json!([])),
        ],
    );
    assert_eq!(
        states(&decl(vec![ours.clone()]), Mode::Apply, &paths),
        vec![State::Changed]
    );
    assert_eq!(
        read(&target),
        json!({"debug": true, "log-opts": {"tag": "x", "max-size": "50m"}, "dns": [], "live-restore": true})
    );
    // their keys keep their order: debug first
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.find("debug") < text.find("log-opts"), "{text}");
    assert_eq!(
        states(&decl(vec![ours]), Mode::Apply, &paths),
        vec![State::Unchanged]
    );

    // someone adds a key of their own meanwhile: it stays through the give-back
    let mut now = read(&target);
    now["registry-mirrors"] = json!(["https://m"]);
    std::fs::write(&target, now.to_string()).unwrap();

    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    assert_eq!(
        read(&target),
        json!({"debug": true, "log-opts": {"tag": "x", "max-size": "1m"}, "dns": ["9.9.9.9"], "registry-mirrors": ["https://m"]})
    );
}

#[test]
fn a_file_the_mesh_created_for_its_keys_goes_when_they_do() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("new.json");
    let ours = keys(&target, &[("log-opts.max-file", json!("3"))]);
    assert_eq!(
        states(&decl(vec![ours]), Mode::Apply, &paths),
        vec![State::Created]
    );
    assert_eq!(read(&target), json!({"log-opts": {"max-file": "3"}}));
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    assert!(!target.exists());
}

#[test]
fn a_key_dropped_from_the_declaration_is_given_back_alone() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("d.json");
    std::fs::write(&target, r#"{"a": 1}"#).unwrap();
    let both = keys(&target, &[("a", json!(2)), ("b", json!(3))]);
    states(&decl(vec![both]), Mode::Apply, &paths);
    assert_eq!(read(&target), json!({"a": 2, "b": 3}));
    let one = keys(&target, &[("b", json!(3))]);
    assert_eq!(
        states(&decl(vec![one]), Mode::Apply, &paths),
        vec![State::Changed]
    );
    assert_eq!(read(&target), json!({"a": 1, "b": 3}));
}

#[test]
fn a_file_that_is_not_a_json_object_is_left_alone() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("d.json");
    std::fs::write(&target, "not json").unwrap();
    let report = run(
        &decl(vec![keys(&target, &[("a", json!(1))])]),
        Mode::Apply,
        &paths,
    )
    .unwrap();
    assert_eq!(report.resources[0].state, State::Failed);
    assert!(report.resources[0].detail.contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "not json");
}
