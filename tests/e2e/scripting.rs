//! The scripting contract: a usage error has its own exit status, every
//! command's `--json` is one JSON document (errors too), a closed pipe ends a command quietly, and
//! on the lab a no-op `mesh -q push --all` run as cron runs it prints nothing and exits 0, `check
//! --json` says it is a dry run, and `history show ID` prints a past push's report.

use std::io::Read as _;
use std::process::{Command, Stdio};

use crate::util::{Mesh, lab_id, node_result, path_str};

const DEMO: &str = r#"{
  "name": "demo", "version": "1", "description": "A module for tests.",
  "settings": [{"name": "size", "type": "string", "meaning": "How big.", "default": "10m", "cost": "restart"}],
  "resources": [{"kind": "file", "path": "/etc/demo.conf", "template": "demo.conf"}]
}"#;

#[test]
fn a_usage_error_exits_64_and_help_and_version_exit_0() {
    let mesh = Mesh::new();
    for args in [
        &["no-such-command"][..],
        &["push", "--no-such-option"],
        &["node", "add"],
        &["history", "show"],
    ] {
        let run = mesh.run(args).code(64);
        assert!(run.stderr.contains("Usage"), "{args:?}: {}", run.stderr);
    }
    let help = mesh.run(&["--help"]).ok();
    assert!(
        help.stdout.contains("Exit status:") && help.stdout.contains("64"),
        "{}",
        help.stdout
    );
    mesh.run(&["--version"]).ok();
    mesh.run(&["push", "--help"]).ok();
}

/// Runs `args` with --json; its stdout must be exactly one JSON document, whatever the status.
fn json(mesh: &Mesh, args: &[&str], status: i32) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    mesh.run(&all).code(status).json()
}

#[test]
fn every_command_answers_json_errors_included() {
    let mesh = Mesh::bare();
    let cat = mesh.module("demo", DEMO, &[("demo.conf", "size=${size}\n")]);
    let init = json(&mesh, &["init"], 0);
    assert_eq!(init["done"][0]["created"], "inventory", "{init}");
    let added = json(&mesh, &["node", "add", "a", "--address", "127.0.0.1"], 0);
    assert_eq!(added["done"][0]["added"], "a", "{added}");
    json(&mesh, &["node", "add", "b", "--address", "127.0.0.2"], 0);
    assert_eq!(json(&mesh, &["node", "list"], 0)[0]["name"], "a");
    json(&mesh, &["node", "show", "a"], 0);
    json(&mesh, &["module", "list"], 0);
    json(&mesh, &["module", "show", "demo"], 0);
    let checked = json(&mesh, &["module", "check", path_str(&cat.join("demo"))], 0);
    assert_eq!(checked["done"][0]["module"], "demo", "{checked}");
    let assigned = json(&mesh, &["assign", "demo", "a", "b"], 0);
    assert_eq!(
        assigned["done"].as_array().map(Vec::len),
        Some(2),
        "{assigned}"
    );
    assert_eq!(assigned["done"][1]["assigned"]["node"], "b", "{assigned}");
    json(&mesh, &["config", "demo", "--node", "a"], 0);
    json(&mesh, &["settings", "set", "demo", "size=20m"], 0);
    json(&mesh, &["settings", "show", "demo"], 0);
    json(&mesh, &["seat", "list"], 0);
    json(&mesh, &["history"], 0);

    // the plan carries each changed file's diff
    let plan = json(&mesh, &["plan", "a", "--diff"], 0);
    let change = &plan[0]["changes"][0];
    assert!(
        change["diff"]
            .as_str()
            .is_some_and(|d| d.contains("+size=20m")),
        "{plan}"
    );
    assert!(json(&mesh, &["plan", "a"], 0)[0]["changes"][0]["diff"].is_null());

    let unassigned = json(&mesh, &["unassign", "demo", "b"], 0);
    assert_eq!(unassigned["done"][0]["unassigned"]["node"], "b");
    let removed = json(&mesh, &["node", "remove", "b"], 0);
    assert_eq!(removed["done"][0]["removed"], "b");

    // errors: one document naming the kind (an inventory error its class too), and the status
    // unchanged
    for (args, status, kind, class) in [
        (&["no-such-command"][..], 64, "usage", None),
        (&["push", "--bogus"], 64, "usage", None),
        (&["push"], 1, "refused", None),
        (&["node", "show", "nobody"], 1, "inventory", Some("refusal")),
        (&["module", "show", "nothing"], 1, "catalogue", None),
        (&["history", "show", "999"], 1, "refused", None),
        (
            &["node", "add", "a", "--address", "127.0.0.1"],
            1,
            "inventory",
            Some("refusal"),
        ),
        (
            &["--inventory", "/nonexistent/inventory.db", "node", "list"],
            1,
            "inventory",
            Some("storage"),
        ),
    ] {
        let error = json(&mesh, args, status);
        assert_eq!(error["error"]["kind"], kind, "{args:?}: {error}");
        assert_eq!(
            error["error"].get("class").and_then(|c| c.as_str()),
            class,
            "{args:?}: {error}"
        );
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{args:?}: {error}"
        );
    }
}

/// Runs `args` with stdout a pipe whose reader is gone before mesh writes (what `| head -1`
/// does to the rest of the output); returns the exit status and what it said on stderr.
fn into_closed_pipe(mesh: &Mesh, args: &[&str]) -> (i32, String) {
    let mut child = mesh
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mesh runs");
    drop(child.stdout.take());
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut stderr).expect("stderr");
    }
    let status = child.wait().expect("mesh ends");
    (status.code().unwrap_or(-1), stderr)
}

#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    let mesh = Mesh::new();
    // the output stops; the command's own status stands
    for (args, want) in [
        (&["history"][..], 0),
        (&["module", "list"], 0),
        (&["--json", "history"], 0),
        (&["node", "add", "a", "--address", "127.0.0.1"], 0),
        (&["--json", "node", "add", "a", "--address", "127.0.0.1"], 1),
        (&["--json", "push"], 1),
    ] {
        let (status, stderr) = into_closed_pipe(&mesh, args);
        assert_eq!(status, want, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// `mesh ARGS` as cron runs it: no terminal, stdin closed, and only PATH, HOME and mesh's own
/// variables in the environment.
fn as_cron(mesh: &Mesh, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mesh"))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", mesh.dir.path())
        .env("MESH_INVENTORY", mesh.inventory())
        .env("MESH_LAB_ID", lab_id())
        .stdin(Stdio::null())
        .output()
        .expect("mesh runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_no_op_quiet_push_from_cron_prints_nothing_and_a_past_push_can_be_read_back() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1", "node2"]).ok();

    // a push with changes under -q shows what changed, and no summary (a contact no earlier
    // run wrote, so /etc/motd changes whatever the machine has)
    let contact = format!("contact=ops-{}@example.org", std::process::id());
    mesh.run(&["settings", "set", "motd", &contact]).ok();
    let (status, stdout, stderr) = as_cron(&mesh, &["-q", "push", "--all"]);
    assert_eq!(status, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("node1: applied") && stdout.contains("/etc/motd"),
        "{stdout}"
    );
    assert!(!stdout.contains(" nodes: "), "{stdout}");

    let (status, stdout, stderr) = as_cron(&mesh, &["-q", "push", "--all"]);
    assert_eq!(
        (status, stdout.as_str(), stderr.as_str()),
        (0, "", ""),
        "a no-op push printed"
    );
    let (status, stdout, stderr) = as_cron(&mesh, &["-q", "check", "--all"]);
    assert_eq!((status, stdout.as_str(), stderr.as_str()), (0, "", ""));
    let (status, stdout, _) = as_cron(&mesh, &["-q", "push", "--all", "--behind"]);
    assert_eq!((status, stdout.as_str()), (0, ""));
    let behind = mesh
        .run(&["--json", "push", "--all", "--behind"])
        .ok()
        .json();
    assert_eq!(behind, serde_json::json!([]));

    // check --json says it is a dry run
    let check = mesh.run(&["--json", "check", "node1"]).ok().json();
    let r = node_result(&check, "node1");
    assert_eq!(
        (&r["mode"], &r["outcome"]),
        (&"dry-run".into(), &"checked".into()),
        "{r}"
    );
    let push = mesh.run(&["--json", "push", "node1"]).ok().json();
    let r = node_result(&push, "node1");
    assert_eq!(
        (&r["mode"], &r["outcome"]),
        (&"apply".into(), &"applied".into()),
        "{r}"
    );

    // -v says per node what happens, with timings, on stderr, and the helper's own time on
    // each step of its run, sent back over SSH in its answer
    let verbose = mesh.run(&["-v", "push", "node2"]).ok();
    assert!(
        verbose.stderr.contains("node2: connecting (at ")
            && verbose.stderr.contains("node2: done (at ")
            && verbose.stderr.contains(" ms  helper step: lock")
            && verbose.stderr.contains(" ms  helper step: facts")
            && verbose.stderr.contains(" ms  the helper's run, of "),
        "{}",
        verbose.stderr
    );

    // the first push's report, read back by its id
    let history = mesh.run(&["--json", "history", "node1"]).ok().json();
    let first = history
        .as_array()
        .and_then(|h| h.last())
        .and_then(|r| r["id"].as_i64())
        .expect("node1's first push in the history");
    let shown = mesh
        .run(&["history", "show", &first.to_string()])
        .ok()
        .stdout;
    assert!(
        shown.contains(&format!("push #{first} to node1"))
            && shown.contains("outcome:  applied")
            && shown.contains("node1: applied: ")
            && shown.contains("/etc/motd"),
        "{shown}"
    );
    let as_json = mesh
        .run(&["--json", "history", "show", &format!("#{first}")])
        .ok()
        .json();
    assert_eq!(as_json["push"]["node"], "node1", "{as_json}");
    assert!(as_json["report"]["resources"].is_array(), "{as_json}");

    // the lab and trust answer in JSON too, a refusal included
    let up = mesh.run(&["--json", "lab", "up", "3"]).ok().json();
    assert_eq!(up["done"].as_array().map(Vec::len), Some(3), "{up}");
    let status = mesh.run(&["--json", "lab", "status"]).ok().json();
    // other tests may have booted more machines in the same lab (the rollouts take five)
    assert!(status.as_array().is_some_and(|s| s.len() >= 3), "{status}");
    let refused = mesh
        .run(&[
            "--json",
            "node",
            "trust",
            "node1",
            "--fingerprint",
            "SHA256:none",
        ])
        .code(1)
        .json();
    assert_eq!(refused["error"]["kind"], "refused", "{refused}");

    // the machines as they were found, for the tests after this one
    mesh.run(&["unassign", "motd", "node1", "node2"]).ok();
    mesh.run(&["push", "node1", "node2"]).ok();
}
