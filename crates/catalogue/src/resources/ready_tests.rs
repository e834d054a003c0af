//! What a `ready` probe may say in module.json, checked as `mesh module check` checks it, and
//! how a node's answers fill it in.

use std::collections::BTreeMap;

use serde_json::json;

use super::{ProbeError, ReadyDef, ResourceDef};
use crate::{CatalogueError, Module};
use mesh_wire::{Probe, Ready};

/// A module `demo` with settings `word` and `port` and this one resource.
fn parse(resource: &str) -> Result<Module, CatalogueError> {
    let json = format!(
        r#"{{"name":"demo","version":"1","description":"A demo.",
           "settings":[{{"name":"word","type":"string","meaning":"A word.","default":"hi","cost":"restart"}},
                       {{"name":"port","type":"integer","meaning":"A port.","default":8080,"cost":"restart"}}],
           "resources":[{resource}]}}"#
    );
    crate::module::parse(
        "demo/module.json",
        "demo",
        json.as_bytes(),
        &BTreeMap::new(),
        "test",
    )
}

fn process(ready: &str) -> String {
    format!(r#"{{"kind":"process","description":"d","command":["/bin/true"],"ready":{ready}}}"#)
}

/// The probe of the module's one resource.
fn ready_of(module: &Module) -> &ReadyDef {
    let ready = match &module.resources[0] {
        ResourceDef::Process(p) => p.ready.as_ref(),
        ResourceDef::Service(s) => s.ready.as_ref(),
        ResourceDef::Container(c) => c.ready.as_ref(),
        _ => None,
    };
    ready.unwrap_or_else(|| panic!("no ready read"))
}

#[test]
fn what_cannot_be_a_probe_is_refused_at_check_naming_the_module_resource_and_field() {
    let service = r#"{"kind":"service","unit":"x.service","state":"stopped","ready":{"tcp":80}}"#;
    for (resource, said) in [
        (
            process(r#"{"tcp":0}"#),
            "resources[0].ready.tcp: 0 is not a port",
        ),
        (
            process(r#"{"tcp":70000}"#),
            "resources[0].ready.tcp: 70000 is not a port",
        ),
        (
            process(r#"{"tcp":"0"}"#),
            "resources[0].ready.tcp: 0 is not a port",
        ),
        (
            process(r#"{"http":"http://localhost:80/"}"#),
            "resources[0].ready.http: \"http://localhost:80/\" is not a http://127.0.0.1:PORT/PATH URL",
        ),
        (
            process(r#"{"http":"http://${word}:80/"}"#),
            "resources[0].ready.http: \"http://${word}:80/\" is not a http://127.0.0.1:PORT/PATH URL",
        ),
        (
            process(r#"{"http":"http://127.0.0.1:80/","status":42}"#),
            "resources[0].ready.status: 42 is not an HTTP status",
        ),
        (
            process(r#"{"command":[]}"#),
            "resources[0].ready.command: empty",
        ),
        (
            process(r#"{"command":[""]}"#),
            "resources[0].ready.command: empty",
        ),
        (
            process(r#"{"tcp":80,"timeout":0}"#),
            "resources[0].ready.timeout: 0 is no time to answer",
        ),
        (
            process(r#"{"tcp":80,"http":"http://127.0.0.1:80/"}"#),
            "resources[0].ready: say exactly one of",
        ),
        (process(r#"{}"#), "resources[0].ready: say exactly one of"),
        (
            process(r#"{"tcp":80,"status":200}"#),
            "resources[0].ready.status: only an http probe answers a status",
        ),
        (
            process(r#"{"tcp":80,"every":1}"#),
            "resources[0].ready: unknown field `every`",
        ),
        (
            process(r#"{"tcp":"${nothing}"}"#),
            "resources[0].ready.tcp: ${nothing} reads ${nothing}, which the module does not declare",
        ),
        (
            service.to_string(),
            "resources[0].ready: a unit declared stopped serves nothing",
        ),
    ] {
        let e = parse(&resource)
            .err()
            .unwrap_or_else(|| panic!("accepted: {resource}"))
            .to_string();
        assert!(
            e.contains("demo/module.json") && e.contains(said),
            "{resource}\n{e}"
        );
    }
}

#[test]
fn a_probe_is_read_for_processes_services_and_containers_and_module_show_says_it() {
    let m = parse(&process(
        r#"{"http":"http://127.0.0.1:${port}/health","timeout":3}"#,
    ))
    .unwrap();
    assert_eq!(ready_of(&m).timeout, 3);
    assert!(
        m.resources[0].describe().ends_with(
            "; ready when http http://127.0.0.1:${port}/health answers 200 (within 3 s)"
        ),
        "{}",
        m.resources[0].describe()
    );
    let m =
        parse(r#"{"kind":"service","unit":"ssh.service","state":"running","ready":{"tcp":22}}"#)
            .unwrap();
    assert_eq!(ready_of(&m).timeout, 60);
    assert_eq!(
        m.resources[0].describe(),
        "ssh.service (running); ready when tcp 127.0.0.1:22 accepts (within 60 s)"
    );
    let m =
        parse(r#"{"kind":"container","image":"i","ready":{"command":["/bin/check","${word}"]}}"#)
            .unwrap();
    assert!(
        m.resources[0]
            .describe()
            .ends_with("; ready when command /bin/check ${word} exits 0 (within 60 s)"),
        "{}",
        m.resources[0].describe()
    );
}

#[test]
fn a_probe_is_filled_in_with_the_nodes_answers_and_checked_again() {
    let values = |port: serde_json::Value| {
        BTreeMap::from([
            ("port".to_string(), port),
            ("word".to_string(), json!("up")),
        ])
    };
    let m = parse(&process(r#"{"tcp":"${port}","timeout":5}"#)).unwrap();
    assert_eq!(
        ready_of(&m).render(&values(json!(6380))),
        Ok(Ready {
            probe: Probe::Tcp(6380),
            timeout: 5
        })
    );
    assert_eq!(
        ready_of(&m).render(&values(json!(0))),
        Err(ProbeError::NotAPort {
            template: "${port}".into(),
            text: "0".into()
        })
    );
    assert_eq!(
        ready_of(&m)
            .render(&values(json!(0)))
            .map_err(|e| e.to_string()),
        Err("ready.tcp ${port} reads as \"0\", not a port".to_string())
    );
    let m = parse(&process(
        r#"{"http":"http://127.0.0.1:${port}/","status":204}"#,
    ))
    .unwrap();
    assert_eq!(
        ready_of(&m).render(&values(json!(8080))).map(|r| r.probe),
        Ok(Probe::Http {
            url: "http://127.0.0.1:8080/".into(),
            status: 204
        })
    );
    assert!(
        ready_of(&m)
            .render(&values(json!("8080/x y")))
            .is_err_and(|e| e
                .to_string()
                .contains("not a http://127.0.0.1:PORT/PATH URL"))
    );
    let m = parse(&process(r#"{"command":["/bin/check","${word}"]}"#)).unwrap();
    assert_eq!(
        ready_of(&m).render(&values(json!(1))).map(|r| r.probe),
        Ok(Probe::Command(vec!["/bin/check".into(), "up".into()]))
    );
}
