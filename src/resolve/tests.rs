//! Resolution of one module's resources from layered settings.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::effective;
use super::render::resource;
use crate::catalogue::load_module;
use crate::inventory::Layer;
use crate::wire::{Cost, Spec};

const MODULE: &str = r#"{"name": "rt", "version": "1", "description": "A runtime.",
    "settings": [
      {"name": "size", "type": "string", "meaning": "Log size.", "default": "10m", "cost": "restart"},
      {"name": "files", "type": "integer", "meaning": "Log files.", "default": 3, "cost": "restart"},
      {"name": "live", "type": "boolean", "meaning": "Keep running.", "default": true, "cost": "reload"},
      {"name": "dns", "type": "list", "meaning": "Resolvers.", "default": [], "cost": "restart"}
    ],
    "resources": [
      {"kind": "keys", "path": "/etc/rt.json", "units": ["rt.service"],
       "keys": {"opts": {"size": "${size}", "files": "${files:text}"}, "live": "${live}", "dns": "${dns}"}},
      {"kind": "file", "path": "/etc/rt.conf", "template": "rt.conf"}
    ]}"#;

fn resources(mesh: Option<&Layer>) -> Vec<Spec> {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("rt");
    std::fs::create_dir(&m).unwrap();
    std::fs::write(m.join("module.json"), MODULE).unwrap();
    std::fs::write(
        m.join("rt.conf"),
        "size=${size} files=${files} live=${live}\n",
    )
    .unwrap();
    let module = load_module(&m).unwrap();
    let values = effective(
        &module,
        super::Layers {
            mesh,
            ..Default::default()
        },
    );
    let by_name: BTreeMap<String, Value> = values
        .into_iter()
        .filter_map(|e| e.value.map(|v| (e.name, v)))
        .collect();
    module
        .resources
        .iter()
        .map(|def| resource("rt", &module, def, &by_name).unwrap().spec)
        .collect()
}

#[test]
fn an_unset_tunable_takes_its_default_in_a_json_file_and_in_a_text_file() {
    let specs = resources(None);
    let Spec::Keys(keys) = &specs[0] else {
        panic!("not keys")
    };
    let got: Vec<(String, Value)> = keys
        .keys
        .iter()
        .map(|k| (k.dotted(), k.value.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("opts.size".to_string(), json!("10m")),
            // asked for as text: Docker wants "3", not 3
            ("opts.files".to_string(), json!("3")),
            ("live".to_string(), json!(true)),
            ("dns".to_string(), json!([])),
        ]
    );
    let Spec::File(file) = &specs[1] else {
        panic!("not a file")
    };
    assert_eq!(file.content, "size=10m files=3 live=true\n");
}

#[test]
fn each_resource_names_the_settings_it_reads_with_their_costs() {
    let before = resources(None);
    let mut layer = Layer::new();
    layer.insert("live".into(), json!(false));
    let after = resources(Some(&layer));
    let (Some(b), Some(a)) = (before[0].costing(), after[0].costing()) else {
        panic!("keys have a costing")
    };
    assert_eq!(a.settings["live"].cost, Cost::Reload);
    assert_ne!(a.settings["live"].digest, b.settings["live"].digest);
    assert_eq!(a.settings["size"], b.settings["size"]);
    // only a reload-cost key moved: the keys resource costs a reload
    assert_eq!(
        crate::wire::change_cost(Some((b.source.as_str(), &b.settings)), a, false),
        Cost::Reload
    );
}

#[test]
fn a_requirement_field_a_file_reads_costs_like_a_setting_at_the_files_own_cost() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("use");
    std::fs::create_dir(&m).unwrap();
    std::fs::write(
        m.join("module.json"),
        r#"{"name": "use", "version": "1", "description": "A consumer.",
            "requires": [{"name": "db", "kind": "module", "provision": "db",
                          "fields": {"host": {"type": "string"}}}],
            "resources": [{"kind": "file", "path": "/etc/use.conf", "template": "use.conf",
                           "cost": "restart", "units": ["use.service"]}]}"#,
    )
    .unwrap();
    std::fs::write(m.join("use.conf"), "server ${db.host}\n").unwrap();
    let module = load_module(&m).unwrap();
    let costing = |host: &str| {
        let values: BTreeMap<String, Value> = [("db.host".to_string(), json!(host))].into();
        let r = resource("use", &module, &module.resources[0], &values).unwrap();
        r.spec.costing().cloned().unwrap()
    };
    let (before, after) = (costing("10.0.0.1"), costing("10.0.0.2"));
    assert_eq!(after.settings["db.host"].cost, Cost::Restart);
    assert_ne!(
        after.settings["db.host"].digest,
        before.settings["db.host"].digest
    );
    // only the provider's address moved: the file's readers pay its cost
    assert_eq!(
        crate::wire::change_cost(
            Some((before.source.as_str(), &before.settings)),
            &after,
            false
        ),
        Cost::Restart
    );
}

#[test]
fn a_setting_that_would_break_a_unit_or_an_environment_is_refused_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("svc");
    std::fs::create_dir(&m).unwrap();
    std::fs::write(
        m.join("module.json"),
        r#"{"name": "svc", "version": "1", "description": "A service.",
            "settings": [{"name": "word", "type": "string", "meaning": "A word.", "default": "hi", "cost": "restart"}],
            "resources": [
              {"kind": "process", "description": "d", "command": ["/bin/echo", "${word}"],
               "environment": {"WORD": "${word}"}},
              {"kind": "container", "image": "x", "environment": {"WORD": "${word}"}}]}"#,
    )
    .unwrap();
    let module = load_module(&m).unwrap();
    let with = |word: &str| {
        let values: BTreeMap<String, Value> = [("word".to_string(), json!(word))].into();
        module
            .resources
            .iter()
            .map(|def| resource("svc", &module, def, &values).map(|_| ()))
            .collect::<Vec<_>>()
    };
    assert_eq!(with("fine"), vec![Ok(()), Ok(())]);
    let nul = with("a\0b");
    assert!(
        nul[0].as_ref().is_err_and(|e| e.to_string().contains(
            "process svc.service, as its settings fill it in: command[1] holds a control character (\\u{0})"
        )),
        "{nul:?}"
    );
    let lines = with("two\nlines");
    assert!(
        lines[0].as_ref().is_err_and(|e| e
            .to_string()
            .contains("command[1] holds a control character")),
        "{lines:?}"
    );
    assert!(
        lines[1].as_ref().is_err_and(|e| e.to_string().contains(
            "container svc, as its settings fill it in: environment.WORD spans several lines"
        )),
        "{lines:?}"
    );
}

#[test]
fn a_service_unit_and_the_new_kinds_strings_read_settings_and_requirements() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("named");
    std::fs::create_dir(&m).unwrap();
    std::fs::write(
        m.join("module.json"),
        r#"{"name": "named", "version": "1", "description": "Units named by settings.",
            "requires": [{"name": "me", "kind": "mesh"}],
            "settings": [{"name": "unit", "type": "string", "meaning": "A unit.", "default": "x.service"},
                         {"name": "when", "type": "string", "meaning": "When.", "default": "daily"}],
            "resources": [
              {"kind": "service", "unit": "${unit}", "state": "running"},
              {"kind": "service", "unit": "${me.instance}.timer"},
              {"kind": "timer", "name": "job", "description": "d", "command": ["/bin/true"], "schedule": "${when}"},
              {"kind": "symlink", "path": "/etc/${me.instance}", "target": "/srv/${me.instance}"},
              {"kind": "sysctl", "name": "net.ipv4.ip_forward", "value": "${me.instance}"}]}"#,
    )
    .unwrap();
    let module = load_module(&m).unwrap();
    let with = |when: &str| {
        let values: BTreeMap<String, Value> = [
            ("unit".to_string(), json!("web.service")),
            ("me.instance".to_string(), json!("blog")),
            ("when".to_string(), json!(when)),
        ]
        .into();
        module
            .resources
            .iter()
            .map(|def| resource("blog", &module, def, &values).map(|r| r.id))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        with("daily"),
        vec![
            Ok("blog:service:web.service".to_string()),
            Ok("blog:service:blog.timer".to_string()),
            Ok("blog:timer:blog-job.timer".to_string()),
            Ok("blog:symlink:/etc/blog".to_string()),
            Ok("blog:sysctl:net.ipv4.ip_forward".to_string()),
        ]
    );
    let broken = with("daily\n[Service]");
    assert!(
        broken[2].as_ref().is_err_and(|e| e.to_string().contains(
            "timer blog-job, as its settings fill it in: schedule holds a control character"
        )),
        "{broken:?}"
    );
}
