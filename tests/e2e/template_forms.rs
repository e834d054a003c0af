//! Templates that say what they mean (issue 24, item 3): a list is written into text only in a
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
