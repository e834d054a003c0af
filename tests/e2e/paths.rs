//! One path rule, checked where a module is read, where it is rendered and on the machine (issue
//! 10): a module whose mount source, working directory, bundle file or file leaves its place, or
//! names the helper's own state, is refused by `mesh module check` or by `mesh plan`, naming the
//! file and the field, and nothing reaches a machine. The operator's side too: a template linked
//! out of its folder is refused, a broken module stops only what uses it, and a template's escape
//! sequences are shown, not sent to the terminal.

use std::path::{Path, PathBuf};

use crate::util::{Mesh, on, path_str};

/// A module definition around `resources`, with a data directory and two settings that can move
/// paths once rendered.
fn module(name: &str, resources: &str) -> String {
    format!(
        r#"{{"name": "{name}", "version": "1", "description": "Paths.",
        "settings": [
          {{"name": "sub", "type": "string", "meaning": "Where under its data.", "default": "ok"}},
          {{"name": "conf", "type": "string", "meaning": "Its configuration file.", "default": "/etc/{name}.conf"}}
        ],
        "requires": [{{"name": "data", "kind": "host", "directory": {{}}}}],
        "resources": [{resources}]}}"#
    )
}

/// Writes a module folder under `dir` (not the mesh's catalogue) and returns it.
fn folder(dir: &Path, name: &str, json: &str, files: &[(&str, &str)]) -> PathBuf {
    let m = dir.join(name);
    std::fs::create_dir_all(&m).unwrap();
    std::fs::write(m.join("module.json"), json).unwrap();
    for (f, text) in files {
        std::fs::write(m.join(f), text).unwrap();
    }
    m
}

#[test]
fn module_check_refuses_paths_that_leave_their_place_or_name_the_helpers_state() {
    let mesh = Mesh::new();
    let checks = mesh.dir.path().join("checks");
    let cases = [
        (
            r#"{"kind": "container", "image": "busybox", "mounts": [{"source": "${data.path}/../../etc", "target": "/data"}]}"#,
            "resources[0].mounts[0].source",
            "`..`",
        ),
        (
            r#"{"kind": "process", "description": "d", "command": ["/bin/true"], "working-directory": "${data.path}/../../etc"}"#,
            "resources[0].working-directory",
            "`..`",
        ),
        (
            r#"{"kind": "process", "description": "d", "command": ["/bin/true"], "bundle": [{"path": "../../../etc/cron.d/x", "template": "t"}]}"#,
            "resources[0].bundle[0].path",
            "`..`",
        ),
        (
            r#"{"kind": "file", "path": "${data.path}/../../etc/passwd", "template": "t"}"#,
            "resources[0].path",
            "`..`",
        ),
        (
            r#"{"kind": "file", "path": "/var/lib/mesh/record.json", "template": "t"}"#,
            "resources[0].path",
            "the helper's own state",
        ),
        (
            r#"{"kind": "keys", "path": "/var/lib/mesh/lock", "keys": {"a": 1}}"#,
            "resources[0].path",
            "the helper's own state",
        ),
        (
            r#"{"kind": "file", "path": "/usr/local/bin/x", "template": "t", "mode": "4777"}"#,
            "resources[0].mode",
            "setuid",
        ),
    ];
    for (n, (resource, field, why)) in cases.iter().enumerate() {
        let name = format!("bad{n}");
        let dir = folder(&checks, &name, &module(&name, resource), &[("t", "x\n")]);
        let run = mesh.run(&["module", "check", path_str(&dir)]).code(1);
        let file = format!("{}: {field}: ", dir.join("module.json").display());
        assert!(
            run.stderr.contains(&file) && run.stderr.contains(why),
            "{resource}: {}",
            run.stderr
        );
    }
    // the operator's own paths keep the rule too
    mesh.run(&["node", "add", "n1", "--address", "192.0.2.1"])
        .ok();
    let root = mesh
        .run(&[
            "node",
            "add",
            "n2",
            "--address",
            "192.0.2.2",
            "--root",
            "/var/lib/mesh",
        ])
        .code(1);
    assert!(
        root.stderr.contains("helper's own state"),
        "{}",
        root.stderr
    );
    let good = folder(
        &mesh.dir.path().join("catalogue"),
        "good",
        &module("good", ""),
        &[],
    );
    mesh.run(&["module", "check", path_str(&good)]).ok();
    mesh.run(&["assign", "good", "n1"]).ok();
    for placed in ["data=/var/lib/mesh/bundles", "data=/srv/../var/lib/mesh"] {
        let run = mesh.run(&["place", "good", "n1", placed]).code(1);
        assert!(
            run.stderr.contains("cannot be good's directory"),
            "{}",
            run.stderr
        );
    }
}

/// Rendered paths: each is well formed as written, and leaves its place only once a setting
/// fills it in.
const LEAKY: &str = r#"
  {"kind": "container", "image": "busybox", "mounts": [{"source": "${data.path}/${sub}", "target": "/data"}]},
  {"kind": "process", "description": "d", "command": ["/bin/sleep", "infinity"], "working-directory": "${data.path}/${sub}"},
  {"kind": "file", "path": "${conf}", "template": "t"}"#;

/// What the helper's state and the would-be file look like on node1.
fn machine_state() -> String {
    on(
        "node1",
        "stat -c '%i %Y %s %a' /var/lib/mesh/lock /var/lib/mesh/record.json; \
         sha256sum /var/lib/mesh/lock /var/lib/mesh/record.json; \
         ls /etc/leaky.conf /var/lib/mesh/bundles 2>&1; true",
    )
}

#[test]
fn a_rendered_path_that_leaves_its_place_is_refused_by_plan_and_nothing_reaches_the_machine() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // the machines as this inventory last left them: nothing of the mesh's on them
    mesh.run(&["push", "--all"]).ok();
    let cat = mesh.module("leaky", &module("leaky", LEAKY), &[("t", "x\n")]);
    mesh.run(&["module", "check", path_str(&cat.join("leaky"))])
        .ok();
    mesh.run(&["assign", "leaky", "node1"]).ok();
    let before = machine_state();

    mesh.run(&[
        "settings",
        "set",
        "leaky",
        "sub=../../../etc",
        "conf=/var/lib/mesh/lock",
    ])
    .ok();
    let plan = mesh.run(&["plan", "node1"]).code(1);
    let file = format!("{}", cat.join("leaky").join("module.json").display());
    for (field, rendered, why) in [
        (
            "resources[0].mounts[0].source",
            "/srv/mesh/leaky/data/../../../etc",
            "`..`",
        ),
        (
            "resources[1].working-directory",
            "/srv/mesh/leaky/data/../../../etc",
            "`..`",
        ),
        (
            "resources[2].path",
            "/var/lib/mesh/lock",
            "helper's own state",
        ),
    ] {
        let line = format!("leaky (leaky from {file}): {field} reads as {rendered:?}: ");
        assert!(
            plan.stderr.contains(&line) && plan.stderr.contains(why),
            "{line}\n{}",
            plan.stderr
        );
    }
    let push = mesh.run(&["push", "node1"]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    let check = mesh.run(&["check", "node1"]);
    assert_ne!(check.status, 0, "{}", check.stdout);
    assert_eq!(machine_state(), before, "the machine changed");
    assert!(
        before.contains("'/etc/leaky.conf': No such file"),
        "{before}"
    );

    // the state directory named through the file's setting alone, the rest kept
    mesh.run(&[
        "settings",
        "set",
        "leaky",
        "sub=ok",
        "conf=/var/lib/mesh/record.json",
        "--replace",
    ])
    .ok();
    let plan = mesh.run(&["plan", "node1"]).code(1);
    assert!(
        plan.stderr
            .contains("resources[2].path reads as \"/var/lib/mesh/record.json\""),
        "{}",
        plan.stderr
    );
    assert_ne!(mesh.run(&["push", "node1"]).status, 0);
    assert_eq!(machine_state(), before, "the machine changed");
    mesh.run(&["unassign", "leaky", "node1"]).ok();
    mesh.run(&["push", "--all"]).ok();
}

const GOOD: &str = r#"{"name": "good", "version": "1", "description": "A good one.",
  "resources": [{"kind": "file", "path": "/etc/good", "template": "t"}]}"#;

#[test]
fn a_template_linked_out_of_its_folder_is_refused_and_never_shown() {
    let mesh = Mesh::new();
    let secret = mesh.dir.path().join("operator-secret");
    std::fs::write(&secret, "the operator's private key\n").unwrap();
    let cat = mesh.module("good", GOOD, &[]);
    std::os::unix::fs::symlink(&secret, cat.join("good").join("t")).unwrap();
    let check = mesh
        .run(&["module", "check", path_str(&cat.join("good"))])
        .code(1);
    let link = format!(
        "{}: a symbolic link to",
        cat.join("good").join("t").display()
    );
    assert!(
        check.stderr.contains(&link) && check.stderr.contains("outside the module's folder"),
        "{}",
        check.stderr
    );
    mesh.run(&["node", "add", "n1", "--address", "192.0.2.1"])
        .ok();
    let assign = mesh.run(&["assign", "good", "n1"]).code(1);
    let plan = mesh.run(&["plan", "n1", "--diff"]);
    for run in [&check, &assign, &plan] {
        assert!(!run.stdout.contains("private key") && !run.stderr.contains("private key"));
    }
}

#[test]
fn a_broken_module_beside_a_good_one_stops_only_what_uses_it() {
    let mesh = Mesh::new();
    mesh.module("good", GOOD, &[("t", "good\n")]);
    let bad = r#"{"name": "bad", "version": "1", "description": "Broken.",
           "resources": [{"kind": "file", "path": "/etc/bad", "template": "t"}]}"#;
    let cat = mesh.module("bad", bad, &[("t", "fine for now\n")]);
    for (node, address) in [("n1", "192.0.2.1"), ("n2", "192.0.2.2")] {
        mesh.run(&["node", "add", node, "--address", address]).ok();
    }
    mesh.run(&["assign", "good", "n1"]).ok();
    mesh.run(&["assign", "bad", "n2"]).ok();
    // then its template goes missing
    std::fs::remove_file(cat.join("bad").join("t")).unwrap();
    let refused = mesh.run(&["plan", "n2"]).code(1);
    assert!(
        refused.stderr.contains("module bad is broken")
            && refused.stderr.contains("resources[0].template"),
        "{}",
        refused.stderr
    );
    assert_ne!(mesh.run(&["push", "n2"]).status, 0);
    let plan = mesh.run(&["plan", "n1"]).ok();
    assert!(
        plan.stdout.contains("+ good:file:/etc/good"),
        "{}",
        plan.stdout
    );
    assert_eq!(
        plan.stderr.matches("warning: module bad is broken").count(),
        1,
        "{}",
        plan.stderr
    );
    assert!(
        plan.stderr.contains("resources[0].template"),
        "{}",
        plan.stderr
    );
    let list = mesh.run(&["module", "list"]).ok();
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with("bad ") && l.contains("broken")),
        "{}",
        list.stdout
    );
    for args in [
        vec!["module", "show", "bad"],
        vec!["assign", "bad", "n1"],
        vec!["module", "check", path_str(&cat)],
    ] {
        let run = mesh.run(&args).code(1);
        assert!(
            run.stderr.contains("resources[0].template"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn a_template_with_an_escape_sequence_shows_escaped_in_plan_diff() {
    let mesh = Mesh::new();
    mesh.module(
        "good",
        GOOD,
        &[("t", "title\u{1b}]0;owned\u{7}\u{1b}[2J cleared\n")],
    );
    mesh.run(&["node", "add", "n1", "--address", "192.0.2.1"])
        .ok();
    mesh.run(&["assign", "good", "n1"]).ok();
    let plan = mesh.run(&["plan", "n1", "--diff"]).ok();
    assert!(
        !plan.stdout.contains('\u{1b}') && !plan.stdout.contains('\u{7}'),
        "{:?}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains(r"+title\u{1b}]0;owned\u{7}\u{1b}[2J cleared"),
        "{}",
        plan.stdout
    );
}
