//! A process's unit file as the helper writes it: quoting, escaping, nothing a setting can
//! turn into another directive.

use std::path::Path;

use mesh_wire::ProcessSpec;

use super::process::{quote, unit_file_text};

fn spec() -> ProcessSpec {
    ProcessSpec {
        unit: "app.service".into(),
        description: "the app (app, by mesh)".into(),
        command: vec!["/usr/bin/app".into(), "--port".into(), "80".into()],
        user: "daemon".into(),
        environment: [("DB_PASSWORD".to_string(), "s3cret-value".to_string())].into(),
        secret_environment: vec!["DB_PASSWORD".into()],
        sealed_environment: Default::default(),
        working_directory: None,
        restart: "on-failure".into(),
        bundle_dir: "/var/lib/mesh/bundles/app".into(),
        bundle: vec![],
        access: vec![],
        ready: None,
    }
}

#[test]
fn words_reach_the_process_as_they_are() {
    assert_eq!(quote("a b"), "\"a b\"");
    assert_eq!(quote("$HOME 100%"), "\"$$HOME 100%%\"");
    assert_eq!(quote("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
}

#[test]
fn the_unit_file_names_the_environment_file_and_holds_no_value() {
    let s = spec();
    let text = unit_file_text(
        &s,
        Some(Path::new("/var/lib/mesh/env/app.service.process.env")),
    );
    assert!(!text.contains("s3cret-value"), "{text}");
    assert!(!text.contains("Environment="), "{text}");
    assert!(
        text.contains("\nEnvironmentFile=/var/lib/mesh/env/app.service.process.env\n"),
        "{text}"
    );
    assert!(!unit_file_text(&s, None).contains("EnvironmentFile"));
}

#[test]
fn a_control_character_in_a_unit_field_is_refused_naming_the_field() {
    let injected = "x\nExecStartPre=/bin/sh -c evil";
    let mut cases: Vec<(ProcessSpec, &str)> = Vec::new();
    let mut s = spec();
    s.description = injected.into();
    cases.push((s, "description"));
    let mut s = spec();
    s.command[1] = "a\0b".into();
    cases.push((s, "command[1]"));
    let mut s = spec();
    s.user = "daemon\nUser=root".into();
    cases.push((s, "user"));
    let mut s = spec();
    s.working_directory = Some("/srv\r".into());
    cases.push((s, "working-directory"));
    let mut s = spec();
    s.environment.insert("BAD NAME".into(), "v".into());
    cases.push((s, "\"BAD NAME\" is not a name"));
    let mut s = spec();
    s.environment.insert("NUL".into(), "a\0b".into());
    cases.push((s, "environment.NUL"));
    let mut s = spec();
    s.restart = "sometimes".into();
    cases.push((s, "restart \"sometimes\""));
    for (s, field) in cases {
        let e = s.check().expect_err(field).to_string();
        assert!(e.contains(field), "{field}: {e}");
    }
    // a newline in a value is the environment file's business, not the unit file's
    let mut s = spec();
    s.environment.insert("MULTI".into(), "two\nlines".into());
    assert!(s.check().is_ok());
}

#[test]
fn a_user_the_machine_does_not_have_fails_the_process_before_its_unit_is_written() {
    use mesh_wire::{Mode, Resource, Spec, State};

    use crate::apply::testkit::{decl, run, sandbox};

    let (_dir, paths) = sandbox();
    let mut s = spec();
    s.unit = "mesh-test-no-such-user.service".into();
    s.user = "no-such-user-mesh".into();
    let d = decl(vec![Resource {
        id: "t:process:x".into(),
        instance: "t".into(),
        module: "t@1".into(),
        confirm: false,
        spec: Spec::Process(s),
    }]);
    let report = run(&d, Mode::Apply, &paths).unwrap();
    let outcome = &report.resources[0];
    assert_eq!(outcome.state, State::Failed);
    assert!(
        outcome
            .detail
            .contains("no user \"no-such-user-mesh\" on this machine"),
        "{}",
        outcome.detail
    );
    assert!(!Path::new("/etc/systemd/system/mesh-test-no-such-user.service").exists());
    assert!(!paths.root.join("env").exists());
}
