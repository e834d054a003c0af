//! The command line against a real inventory file, no machines needed: refusals, settings layers
//! with their sources, history and reach.

use crate::util::{Mesh, path_str};

const DEMO: &str = r#"{
  "name": "demo", "version": "1", "description": "A module for tests.",
  "settings": [
    {"name": "size", "type": "string", "meaning": "How big.", "default": "10m", "cost": "restart"},
    {"name": "count", "type": "integer", "meaning": "How many.", "default": 3, "cost": "reload"},
    {"name": "flag", "type": "boolean", "meaning": "Whether.", "default": true, "cost": "none"},
    {"name": "names", "type": "list", "meaning": "Which.", "cost": "reload"}
  ],
  "resources": [{"kind": "file", "path": "/etc/demo.conf", "template": "demo.conf", "units": ["demo.service"]}]
}"#;
const TEMPLATE: &str = "size=${size}\ncount=${count}\nflag=${flag}\nnames=${names:join(\",\")}\n";

fn demo() -> Mesh {
    let mesh = Mesh::new();
    mesh.module("demo", DEMO, &[("demo.conf", TEMPLATE)]);
    for (n, address) in [("a", "127.0.0.1"), ("b", "127.0.0.2"), ("c", "127.0.0.3")] {
        mesh.run(&["node", "add", n, "--address", address]).ok();
    }
    mesh
}

#[test]
fn a_missing_inventory_says_to_run_init() {
    let mesh = Mesh::bare();
    let run = mesh.run(&["node", "list"]).code(1);
    assert!(
        run.stderr.contains("run `mesh init` first"),
        "{}",
        run.stderr
    );
}

#[test]
fn push_with_no_node_is_refused_unless_all() {
    let mesh = Mesh::new();
    let run = mesh.run(&["push"]).code(1);
    assert!(run.stderr.contains("--all"), "{}", run.stderr);
}

#[test]
fn an_undeclared_key_or_a_wrong_type_is_refused_when_set_and_nothing_is_stored() {
    let mesh = demo();
    let run = mesh.run(&["settings", "set", "demo", "colour=red"]).code(1);
    assert!(
        run.stderr
            .contains("declares no setting \"colour\" (declared: size, count, flag, names)"),
        "{}",
        run.stderr
    );
    let run = mesh.run(&["settings", "set", "demo", "count=many"]).code(1);
    assert!(
        run.stderr.contains("count takes an integer"),
        "{}",
        run.stderr
    );
    let show = mesh.run(&["settings", "show", "demo"]).ok();
    assert!(show.stdout.contains("not set"), "{}", show.stdout);
}

#[test]
fn config_names_the_source_of_every_value() {
    let mesh = demo();
    mesh.run(&["assign", "demo", "a"]).ok();
    mesh.run(&["settings", "set", "demo", "count=5", r#"names=["x"]"#])
        .ok();
    mesh.run(&["settings", "set", "demo", "--node", "a", "flag=false"])
        .ok();
    let run = mesh.run(&["--json", "config", "demo", "--node", "a"]).ok();
    let rows = run.json()["settings"].clone();
    let got: Vec<(String, String, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().into(),
                r["value"].to_string(),
                r["source"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("size".into(), "\"10m\"".into(), "default".into()),
            ("count".into(), "5".into(), "mesh".into()),
            ("flag".into(), "false".into(), "node".into()),
            ("names".into(), "[\"x\"]".into(), "mesh".into()),
        ]
    );
}

#[test]
fn a_setting_without_a_default_is_refused_by_name_for_every_node_at_once() {
    let mesh = demo();
    mesh.run(&["assign", "demo", "a", "b"]).ok();
    // the nodes that cannot be planned are refused, all at once; nothing can go ahead
    let run = mesh.run(&["plan", "a", "b"]).code(1);
    for n in ["a cannot be planned:", "b cannot be planned:"] {
        assert!(run.stderr.contains(n), "{}", run.stderr);
    }
    assert_eq!(
        run.stderr
            .matches("setting \"names\" (the operator's) has no default")
            .count(),
        2,
        "{}",
        run.stderr
    );
    // beside a node that can, each fails alone, every problem said, and c is planned
    let run = mesh.run(&["plan", "--all"]).code(2);
    for n in [
        "a: FAILED (refused)",
        "b: FAILED (refused)",
        "c: no changes",
    ] {
        assert!(run.stdout.contains(n), "{}", run.stdout);
    }
    assert_eq!(
        run.stdout
            .matches("setting \"names\" (the operator's) has no default")
            .count(),
        2,
        "{}",
        run.stdout
    );
    // unset tunables take their defaults in the file
    mesh.run(&["settings", "set", "demo", r#"names=["x","y"]"#])
        .ok();
    let plan = mesh.run(&["plan", "a", "--diff"]).ok();
    assert!(
        plan.stdout.contains("+size=10m")
            && plan.stdout.contains("+count=3")
            && plan.stdout.contains("+names=x,y"),
        "{}",
        plan.stdout
    );
}

#[test]
fn a_set_that_drops_a_key_needs_replace_and_the_history_keeps_the_old_layer() {
    let mesh = demo();
    mesh.run(&["settings", "set", "demo", "size=50m", "count=4"])
        .ok();
    let refused = mesh.run(&["settings", "set", "demo", "size=60m"]).code(1);
    assert!(
        refused.stderr.contains("would remove count"),
        "{}",
        refused.stderr
    );
    let show = mesh.run(&["settings", "show", "demo"]).ok();
    assert!(
        show.stdout.contains("size = \"50m\"") && show.stdout.contains("count = 4"),
        "{}",
        show.stdout
    );

    let replaced = mesh
        .run(&["settings", "set", "demo", "size=60m", "--replace"])
        .ok();
    assert!(
        replaced.stdout.contains("changed size; removed count"),
        "{}",
        replaced.stdout
    );
    let history = mesh
        .run(&["--json", "settings", "show", "demo", "--history"])
        .ok()
        .json();
    let last = &history["history"].as_array().unwrap().last().unwrap()["replaced"];
    assert_eq!(last, &serde_json::json!({"size": "50m", "count": 4}));
}

#[test]
fn a_mesh_wide_change_reaches_every_assignment_that_moves_and_no_other() {
    let mesh = demo();
    mesh.run(&["assign", "demo", "a", "b", "c"]).ok();
    mesh.run(&["settings", "set", "demo", "--node", "b", "size=1g"])
        .ok();
    let run = mesh
        .run(&["--json", "settings", "set", "demo", "size=50m"])
        .ok()
        .json();
    let nodes: Vec<&str> = run["reach"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["node"].as_str().unwrap())
        .collect();
    assert_eq!(
        nodes,
        vec!["a", "c"],
        "b overrides size in its own layer and does not move"
    );
}

#[test]
fn a_bad_module_is_refused_naming_the_file_and_the_field() {
    let mesh = Mesh::new();
    let cat = mesh.module(
        "demo",
        &DEMO.replace(r#""meaning": "How many.", "#, ""),
        &[("demo.conf", TEMPLATE)],
    );
    // a broken module is reported, and refuses only what uses it
    let run = mesh.run(&["module", "list"]).ok();
    assert!(
        run.stderr
            .contains("demo/module.json: settings[1] (count).meaning: missing"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("demo") && run.stdout.contains("broken"));
    let show = mesh.run(&["module", "show", "demo"]).code(1);
    assert!(show.stderr.contains("(count).meaning"), "{}", show.stderr);
    let check = mesh
        .run(&["module", "check", path_str(&cat.join("demo"))])
        .code(1);
    assert!(check.stderr.contains("(count).meaning"), "{}", check.stderr);
}

#[test]
fn module_show_reads_the_settings_as_a_form() {
    let mesh = Mesh::new();
    let run = mesh.run(&["module", "show", "motd"]).ok();
    assert!(
        run.stdout.contains("banner")
            && run.stdout.contains("string")
            && run.stdout.contains("none"),
        "{}",
        run.stdout
    );
}

#[test]
fn an_encrypted_key_without_a_terminal_fails_that_node_clearly() {
    let mesh = Mesh::new();
    let key = mesh.dir.path().join("locked");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "a passphrase", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(made.success());
    mesh.run(&[
        "node",
        "add",
        "locked",
        "--address",
        "127.0.0.1",
        "--identity",
        path_str(&key),
    ])
    .ok();
    mesh.run(&["assign", "motd", "locked"]).ok();
    let run = mesh.run(&["push", "locked", "--json"]).code(2);
    let result = &run.json()[0];
    assert_eq!(result["kind"], "auth", "{result}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("is encrypted and there is no terminal to ask its passphrase on"),
        "{result}"
    );
}

/// A `validate` check is a command the helper runs as root: the plan shows it whenever it is new
/// or changed, so a module cannot run one unseen.
#[test]
fn the_plan_shows_every_check_a_push_would_run_as_root() {
    let mesh = Mesh::new();
    mesh.run(&["node", "add", "web", "--address", "127.0.0.1"])
        .ok();
    let module = |check: &str| {
        format!(
            r#"{{"name": "tidy", "version": "1", "description": "A checked file.",
              "resources": [{{"kind": "file", "path": "/etc/tidy.conf", "template": "t",
                "validate": ["/bin/sh", "-c", "{check}"]}}]}}"#
        )
    };
    mesh.module("tidy", &module("true"), &[("t", "x\n")]);
    mesh.run(&["assign", "tidy", "web"]).ok();
    let plan = mesh.run(&["plan", "web"]).ok().stdout;
    assert!(
        plan.contains("checked as root with: /bin/sh -c true"),
        "{plan}"
    );
    // a new version that changes only the check still shows it
    mesh.module(
        "tidy",
        &module("install -m 4755 /bin/bash /usr/local/bin/t"),
        &[("t", "x\n")],
    );
    let plan = mesh.run(&["plan", "web"]).ok().stdout;
    assert!(
        plan.contains(
            "checked as root with: /bin/sh -c 'install -m 4755 /bin/bash /usr/local/bin/t'"
        ),
        "{plan}"
    );
}

#[test]
fn an_error_says_its_cause_once() {
    let mesh = Mesh::new();
    let run = mesh
        .run(&["module", "check", "/nonexistent-module-folder"])
        .code(1);
    let cause = "No such file or directory";
    assert_eq!(run.stderr.matches(cause).count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("/nonexistent-module-folder"),
        "{}",
        run.stderr
    );
}

#[test]
fn lab_help_says_its_environment_and_that_machines_have_no_route_out() {
    let run = Mesh::bare().run(&["lab", "--help"]).ok();
    // as read, whatever the width the help is wrapped at
    let text = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "MESH_LAB_ID",
        "MESH_LAB_CACHE",
        "MESH_LAB_PACKAGES",
        "MESH_LAB_RELEASE",
        "no route out",
    ] {
        assert!(text.contains(said), "{said}:\n{}", run.stdout);
    }
}

#[test]
fn usage_lines_do_not_show_inventory_or_catalogue_set_in_the_environment_as_required() {
    // with MESH_INVENTORY and MESH_CATALOGUE set (Mesh::command sets both), clap
    // printed `--inventory <PATH> --catalogue <DIR>` in usage lines as if they were required
    let mesh = Mesh::new();
    mesh.module("demo", DEMO, &[("demo.conf", TEMPLATE)]);
    for args in [
        &["module", "show"][..],
        &["node", "add"][..],
        &["plan", "--bogus"][..],
        &["push", "--bogus"][..],
        &["check", "--bogus"][..],
        &["rollback"][..],
    ] {
        let run = mesh.run(args).code(64);
        let usage = run.stderr.lines().find(|l| l.starts_with("Usage:"));
        let usage = usage.unwrap_or_else(|| panic!("no usage line:\n{}", run.stderr));
        assert!(
            !usage.contains("--inventory") && !usage.contains("--catalogue"),
            "{usage}"
        );
    }
    // no selector is mesh's own refusal, which names no global option either
    let run = mesh.run(&["push"]).code(1);
    assert!(
        run.stderr.contains("name the nodes to push") && !run.stderr.contains("--inventory"),
        "{}",
        run.stderr
    );
    let help = mesh.run(&["plan", "--help"]).ok();
    assert!(help.stdout.contains("$MESH_INVENTORY"), "{}", help.stdout);
    assert!(help.stdout.contains("$MESH_CATALOGUE"), "{}", help.stdout);
    // the environment is still read: the module from MESH_CATALOGUE is shown
    let run = mesh.run(&["module", "show", "demo"]).ok();
    assert!(run.stdout.contains("demo"), "{}", run.stdout);
}

#[test]
fn check_says_every_node_in_the_order_of_its_name_refused_or_not_and_its_json_too() {
    // `check --all` said the nodes in the order they answered; the refused ones (a
    // module that cannot be planned for them) came first in the text and last in --json
    let mesh = Mesh::new();
    mesh.module("demo", DEMO, &[("demo.conf", TEMPLATE)]);
    for (n, address) in [
        ("a", "127.0.0.1"),
        ("b", "127.0.0.2"),
        ("c", "127.0.0.3"),
        ("d", "127.0.0.4"),
    ] {
        mesh.run(&["node", "add", n, "--address", address, "--port", "1"])
            .ok();
    }
    // a and c are refused (a setting without a default); b and d cannot be reached
    mesh.run(&["assign", "demo", "a", "c"]).ok();
    let check = ["check", "--all", "--connect-timeout", "1"];
    let text = mesh.run(&check).code(2);
    let said: Vec<&str> = text
        .stdout
        .lines()
        .filter_map(|l| l.split_once(": FAILED").map(|(n, _)| n))
        .collect();
    assert_eq!(said, ["a", "b", "c", "d"], "{}", text.stdout);
    let json = mesh.run(&[&check[..], &["--json"]].concat()).code(2).json();
    let said: Vec<&str> = json
        .as_array()
        .expect("a list of nodes")
        .iter()
        .filter_map(|r| r["node"].as_str())
        .collect();
    assert_eq!(said, ["a", "b", "c", "d"], "{json}");
}

#[test]
fn module_check_passes_every_built_in_module_folder() {
    // what the guide tells an author to run passes on the modules the mesh ships
    let catalogue = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue");
    let mut folders: Vec<_> = std::fs::read_dir(&catalogue)
        .expect("the built-in catalogue")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.join("module.json").is_file())
        .collect();
    folders.sort();
    let names: Vec<String> = folders
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
        .collect();
    for module in [
        "users",
        "node-exporter",
        "firewall",
        "apt-repo",
        "sysctl",
        "backup",
    ] {
        assert!(names.iter().any(|n| n == module), "{module} in {names:?}");
    }
    let mesh = Mesh::bare();
    for (folder, name) in folders.iter().zip(&names) {
        let run = mesh.run(&["module", "check", path_str(folder)]).ok();
        assert!(
            run.stdout.starts_with(&format!("{name} ")) && run.stdout.contains(": ok ("),
            "{name}: {}",
            run.stdout
        );
    }
}

/// Found by an attacker: an import into a new inventory listed only `+ node a`, not its hold;
/// `node remove` dropped a hold without a word; a hold at generation 0 was taken.
#[test]
fn an_imported_hold_is_listed_refused_at_generation_zero_and_its_removal_is_said() {
    let a = Mesh::new();
    a.run(&["node", "add", "a", "--address", "127.0.0.1"]).ok();
    let mut doc: serde_json::Value =
        serde_json::from_str(&a.run(&["inventory", "export"]).ok().stdout).unwrap();
    let file = a.dir.path().join("a.json");
    let write = |doc: &serde_json::Value| std::fs::write(&file, doc.to_string()).unwrap();
    doc["nodes"][0]["held-at"] =
        serde_json::json!({"generation": 0, "since": "2026-12-03 10:00:00"});
    write(&doc);
    let b = Mesh::new();
    let refused = b.run(&["inventory", "import", path_str(&file)]).code(1);
    assert!(
        refused
            .stderr
            .contains("nodes[0].held-at.generation: 0 is no generation"),
        "{}",
        refused.stderr
    );
    doc["nodes"][0]["held-at"]["generation"] = serde_json::json!(3);
    write(&doc);
    let imported = b.run(&["inventory", "import", path_str(&file)]).ok();
    assert!(
        imported.stdout.contains("+ node a")
            && imported
                .stdout
                .contains("node a: held at generation 3 by rollback"),
        "{}",
        imported.stdout
    );
    let removed = b.run(&["node", "remove", "a"]).ok();
    assert!(
        removed
            .stdout
            .contains("removed a from the inventory; it was held at generation 3 by rollback: the hold is dropped with it"),
        "{}",
        removed.stdout
    );
}
