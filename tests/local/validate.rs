//! A file's `validate` is rendered like every other string: a check command that names what it
//! checks from a setting is sent filled in, shown so in the plan, and run so on the machine.

use super::Mesh;

const CHECKED: &str = r#"{
  "name": "checked", "version": "1", "description": "A file checked by a command that reads a setting.",
  "settings": [{"name": "expect", "type": "line", "meaning": "What the check wants.", "default": "good", "cost": "none"},
               {"name": "word", "type": "line", "meaning": "What the file says.", "default": "good", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/checked.conf", "owner": "demo", "group": "demo", "mode": "0644",
                 "template": "checked.conf",
                 "validate": ["/bin/sh", "-c", "test \"$0\" = \"$1\"", "${expect}", "${word}"]}]
}"#;

#[test]
fn a_validate_command_reads_settings_and_runs_filled_in() {
    let mesh = Mesh::new();
    mesh.demo();
    let dir = mesh.dir.path().join("catalogue/checked");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("module.json"), CHECKED).unwrap();
    std::fs::write(dir.join("checked.conf"), "word ${word}\n").unwrap();
    let root = mesh.root("a");
    mesh.run(&["node", "add", "a", "--local", root.to_str().unwrap()])
        .ok();
    mesh.run(&["assign", "checked", "a"]).ok();
    let plan = mesh.run(&["plan", "a", "--diff"]).ok().stdout;
    assert!(plan.contains("test \"$0\" = \"$1\"' good good"), "{plan}");
    mesh.run(&["push", "a"]).ok();
    assert_eq!(
        std::fs::read_to_string(root.join("etc/checked.conf")).unwrap(),
        "word good\n"
    );
    // the check, filled in, refuses: nothing of the change stays
    mesh.run(&["settings", "set", "checked", "word=bad"]).ok();
    let refused = mesh.run(&["push", "a"]).code(2).stdout;
    assert!(
        refused.contains("checked:file:/etc/checked.conf"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("etc/checked.conf")).unwrap(),
        "word good\n"
    );
    mesh.run(&["settings", "set", "checked", "word=bad", "expect=bad"])
        .ok();
    mesh.run(&["push", "a"]).ok();
    assert_eq!(
        std::fs::read_to_string(root.join("etc/checked.conf")).unwrap(),
        "word bad\n"
    );
}
