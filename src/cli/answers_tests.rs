//! The shape of each `--json` answer, from fixed values: a snapshot that changes is a key or a
//! value an acceptance check or a script may read.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::resolve::Source;

fn problem() -> Problem {
    Problem::says("db: setting \"port\" (the operator's) has no default")
        .field("port")
        .fix("mesh settings set postgres port=VALUE")
}

#[test]
fn an_error_answer_names_its_kind_and_what_was_done_before_it() {
    let alone = ErrorAnswer {
        error: ErrorBody {
            kind: "refused",
            class: None,
            message: "no such node: n9",
        },
        done: vec![],
    };
    insta::assert_json_snapshot!("error_alone", alone);
    let after = ErrorAnswer {
        error: ErrorBody {
            kind: "inventory",
            class: Some("storage"),
            message: "locked",
        },
        done: vec![json!({"added": "n1"})],
    };
    insta::assert_json_snapshot!("error_after_done", after);
}

#[test]
fn an_inventory_error_says_whether_it_is_a_refusal_or_its_storage_failing() {
    let refused = ErrorAnswer {
        error: ErrorBody {
            kind: "inventory",
            class: Some("refusal"),
            message: "no node called \"nobody\" in the inventory (nodes: web1)",
        },
        done: vec![],
    };
    insta::assert_json_snapshot!("error_inventory_refusal", refused);
}

#[test]
fn a_refused_node_keeps_its_joined_reason_beside_each_problem() {
    let problems = vec![problem(), Problem::says("n1: two resources write /etc/x")];
    insta::assert_json_snapshot!(RefusedNode::new("n1", &problems));
}

#[test]
fn settings_shown_says_each_setting_and_each_problem() {
    let e = Effective {
        name: "port".into(),
        value: Some(json!(5432)),
        source: Source::Default,
        tag: None,
        conflict: vec![],
        wanted: None,
        fact: None,
    };
    let providers = BTreeMap::from([("db".to_string(), "pg@n2".to_string())]);
    let problems = vec![problem()];
    let shown = SettingsShown {
        instance: "app",
        module: "web",
        node: "n1",
        settings: vec![SettingRow::new(&e, None)],
        requirements: [("db.host".to_string(), json!("n2"))].into_iter().collect(),
        providers: &providers,
        unresolved: problems.iter().map(|p| p.reason.as_str()).collect(),
        problems: &problems,
    };
    insta::assert_json_snapshot!(shown);
}

#[test]
fn a_settings_change_says_what_it_reached() {
    let (added, none, keys) = (vec!["port".to_string()], vec![], vec!["port".to_string()]);
    let changed = SettingsChanged {
        module: "web",
        node: None,
        tag: Some("edge"),
        added: &added,
        changed: &none,
        removed: &none,
        reach: vec![Reached {
            instance: "web",
            node: "n1",
            settings: &keys,
        }],
    };
    insta::assert_json_snapshot!(changed);
}

#[test]
fn module_list_and_check_answers() {
    let list = vec![
        ModuleListed::Read {
            name: "web",
            version: "1.0",
            description: "a site",
            origin: "builtin",
        },
        ModuleListed::Broken {
            name: "bad",
            broken: "line 3: no name",
        },
    ];
    insta::assert_json_snapshot!("module_list", list);
    let checked = ModuleChecked {
        module: "web",
        version: "1.0",
        ok: true,
        settings: 2,
        resources: 3,
    };
    insta::assert_json_snapshot!("module_check", checked);
}

/// The command line's sources outside tests: each file's text up to its `#[cfg(test)]`.
fn sources(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.display().to_string();
        if path.is_dir() {
            sources(&path, out);
        } else if name.ends_with(".rs") && !name.ends_with("_tests.rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            out.push((name, code.to_string()));
        }
    }
}

#[test]
fn every_json_answer_of_the_command_line_comes_from_a_type() {
    let mut files = Vec::new();
    sources(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli"),
        &mut files,
    );
    assert!(files.len() > 20, "{} files", files.len());
    // a hand-built answer is a `json!` literal, or keys patched into a `Value` after the fact
    let built: Vec<String> = files
        .iter()
        .flat_map(|(name, code)| {
            code.lines()
                .enumerate()
                .filter(|(_, l)| {
                    let l = l.trim_start();
                    !l.starts_with("//")
                        && (l.contains("json!")
                            || l.contains("as_object_mut")
                            || l.contains("\"] = "))
                })
                .map(move |(n, l)| format!("{name}:{}: {}", n + 1, l.trim()))
        })
        .collect();
    assert!(
        built.is_empty(),
        "a --json answer built by hand; give it a type in cli/answers:\n{}",
        built.join("\n")
    );
}
