//! Templates that say what they mean: a list is written into text only in a
//! form that says how (`:words`, `:join`, `:each`), refused at `module check` otherwise, naming
//! the file and line; what each form writes reaches the machine as the plan showed it.

use crate::util::{Mesh, on, path_str};

const GATE: &str = r#"{
  "name": "gate", "version": "1", "description": "Lets the listed users in.",
  "settings": [{"name": "users", "type": "list", "meaning": "Who may log in.", "default": ["ana", "bo"], "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/gate.conf", "template": "gate.conf"}]
}"#;

#[test]
fn a_list_in_text_needs_a_form_and_each_form_writes_what_it_says() {
    let mesh = Mesh::new();
    let cat = mesh.module(
        "gate",
        GATE,
        &[("gate.conf", "# who\nAllowUsers ${users}\n")],
    );
    let folder = cat.join("gate");
    let refused = mesh.run(&["module", "check", path_str(&folder)]).code(1);
    assert!(
        refused
            .stderr
            .contains("gate.conf, line 2: ${users} is a list")
            && refused.stderr.contains(":each("),
        "{}",
        refused.stderr
    );

    let text = "${users:each(\"AllowUsers {}\")}\nGroups ${users:join(\", \")}\nargs=${users:each(\"--allow={}\", \" \")}\n";
    mesh.module("gate", GATE, &[("gate.conf", text)]);
    mesh.run(&["module", "check", path_str(&folder)]).ok();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "gate", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on("node1", "cat /etc/gate.conf"),
        "AllowUsers ana\nAllowUsers bo\nGroups ana, bo\nargs=--allow=ana --allow=bo\n"
    );
    mesh.run(&["unassign", "gate", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

const LEVEL: &str = r#"{
  "name": "level", "version": "1", "description": "Logs at a level.",
  "settings": [{"name": "level", "type": "choice", "choices": ["debug", "info", "warn"], "default": "info", "meaning": "How much it logs.", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/level.conf", "template": "level.conf"}]
}"#;

#[test]
fn a_choice_setting_takes_only_its_choices_and_module_show_lists_them() {
    let mesh = Mesh::new();
    let cat = mesh.module("level", LEVEL, &[("level.conf", "level=${level}\n")]);
    let shown = mesh.run(&["module", "show", "level"]).ok().stdout;
    assert!(shown.contains("choice (debug, info, warn)"), "{shown}");
    let refused = mesh
        .run(&["settings", "set", "level", "level=loud"])
        .code(1);
    assert!(
        refused
            .stderr
            .contains("level takes one of debug, info, warn, not \"loud\"")
            && refused.stderr.contains("nothing was stored"),
        "{}",
        refused.stderr
    );
    mesh.run(&["settings", "set", "level", "level=warn"]).ok();

    for (bad, why) in [
        (
            LEVEL.replace("\"default\": \"info\"", "\"default\": \"loud\""),
            "\"loud\" is not one of debug, info, warn",
        ),
        (
            LEVEL.replace("\"choices\": [\"debug\", \"info\", \"warn\"], ", ""),
            "a choice setting lists its choices",
        ),
        (
            LEVEL.replace("\"type\": \"choice\"", "\"type\": \"string\""),
            "only a choice setting lists choices",
        ),
        (LEVEL.replace("\"warn\"]", "\"info\"]"), "listed twice"),
    ] {
        mesh.module("level", &bad, &[("level.conf", "level=${level}\n")]);
        let run = mesh
            .run(&["module", "check", path_str(&cat.join("level"))])
            .code(1);
        assert!(run.stderr.contains(why), "{why}: {}", run.stderr);
    }
}

#[test]
fn a_reference_in_a_field_that_is_never_rendered_is_refused_naming_the_field() {
    let mesh = Mesh::new();
    let worker = r#"{
  "name": "worker", "version": "1", "description": "Works.",
  "settings": [{"name": "queue", "type": "string", "meaning": "Which queue.", "default": "jobs", "cost": "restart"}],
  "resources": [{"kind": "process", "description": "works on ${queue}", "command": ["/bin/sleep", "1000"]}]
}"#;
    let cat = mesh.module("worker", worker, &[]);
    let run = mesh
        .run(&["module", "check", path_str(&cat.join("worker"))])
        .code(1);
    assert!(
        run.stderr.contains("resources[0].description")
            && run.stderr.contains("sent as written, not rendered"),
        "{}",
        run.stderr
    );
    let gate = GATE.replace(
        r#""template": "gate.conf""#,
        r#""template": "gate.conf", "validate": ["/bin/check", "${users}"]"#,
    );
    let cat = mesh.module("gate", &gate, &[("gate.conf", "${users:words}\n")]);
    let run = mesh
        .run(&["module", "check", path_str(&cat.join("gate"))])
        .code(1);
    assert!(
        run.stderr.contains("resources[0].validate[1]"),
        "{}",
        run.stderr
    );
}
