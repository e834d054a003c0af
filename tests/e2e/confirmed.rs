//! What a machine has is what its helper confirmed, and a push is recorded as it happens (issue
//! 11): a resource `validate` refused stays in the next plan; the operator killed mid-push leaves
//! the finished nodes recorded and the unfinished one shown as unconfirmed, and the next push
//! reconciles without a false restart; an inventory that cannot be written when the nodes answer
//! still gets every node's report printed and exit 2, and `check` reconciles afterwards.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::util::{Mesh, eventually, invocation, node_result, on, states};

const GUARDED: &str = r#"{
  "name": "guarded", "version": "1", "description": "A file its validate command refuses unless it is good.",
  "settings": [{"name": "value", "type": "string", "meaning": "What the file says.", "default": "good-1", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/mesh-guarded.conf", "template": "guarded.conf",
                 "validate": ["grep", "-q", "^good", "/etc/mesh-guarded.conf"]}]
}"#;

/// A process reading a file whose change costs a restart, checked slowly (argv, no shell).
const SLOW: &str = r#"{
  "name": "slow", "version": "1", "description": "A worker whose file takes its time to check.",
  "settings": [{"name": "level", "type": "string", "meaning": "The worker's level.", "default": "1", "cost": "restart"}],
  "resources": [
    {"kind": "process", "name": "worker", "description": "A worker that sleeps",
     "command": ["/bin/sh", "run.sh"], "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]},
    {"kind": "file", "path": "/etc/mesh-slow.conf", "template": "slow.conf", "cost": "restart",
     "units": ["slow-worker.service"], "validate": ["sleep", "8"]}
  ]
}"#;

const FAST: &str = r#"{
  "name": "fast", "version": "1", "description": "A file that costs nothing.",
  "settings": [{"name": "level", "type": "string", "meaning": "The level.", "default": "1", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/mesh-fast.conf", "template": "fast.conf"}]
}"#;

const PAUSED: &str = r#"{
  "name": "paused", "version": "1", "description": "A file checked slowly on every node.",
  "settings": [{"name": "level", "type": "string", "meaning": "The level.", "default": "1", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/mesh-paused.conf", "template": "paused.conf",
                 "validate": ["sleep", "3"]}]
}"#;

/// `mesh push` started in the background, its stdout read line by line as it comes.
pub(crate) fn spawn(mesh: &Mesh, args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = mesh
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mesh starts");
    let stdout = child.stdout.take().expect("its stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits until `done` holds, for at most `limit`.
fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    eventually(limit, what, || done().then_some(()));
}

/// The plan's one change of `id`, as `plan --json` says it.
fn planned(mesh: &Mesh, node: &str, id: &str) -> Option<serde_json::Value> {
    let plans = mesh.run(&["plan", node, "--json"]).ok().json();
    plans[0]["changes"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .cloned()
}

#[test]
fn a_resource_validate_refused_stays_in_the_plan_and_plan_equals_check() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.module("guarded", GUARDED, &[("guarded.conf", "${value}\n")]);
    mesh.run(&["assign", "guarded", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let id = "guarded:file:/etc/mesh-guarded.conf";

    mesh.run(&["settings", "set", "guarded", "value=bad"]).ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    assert!(
        states(node_result(&push, "node1")).contains(&(id.into(), "failed".into())),
        "{push}"
    );
    assert_eq!(on("node1", "cat /etc/mesh-guarded.conf"), "good-1\n");

    // the refused change was never the machine's: the plan still shows it, as check does
    let change = planned(&mesh, "node1", id).expect("the refused file is still planned");
    assert_eq!(change["action"], "changed", "{change}");
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(plan.contains(&format!("~ {id} (content")), "{plan}");
    let check = mesh.run(&["check", "node1", "--json"]).code(4).json();
    assert!(
        states(node_result(&check, "node1")).contains(&(id.into(), "changed".into())),
        "{check}"
    );

    // back to what the machine has: plan and check agree that nothing would change
    mesh.run(&["settings", "set", "guarded", "value=good-1"])
        .ok();
    assert_eq!(planned(&mesh, "node1", id), None);
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(plan.contains("node1: no changes"), "{plan}");
    mesh.run(&["check", "node1"]).ok();

    mesh.run(&["settings", "set", "guarded", "value=good-2"])
        .ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(planned(&mesh, "node1", id), None);
    mesh.run(&["unassign", "guarded", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

#[test]
fn the_operator_killed_mid_push_leaves_the_node_unconfirmed_and_the_next_push_reconciles() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.module(
        "slow",
        SLOW,
        &[
            ("run.sh", "exec sleep infinity\n"),
            ("slow.conf", "level ${level}\n"),
        ],
    );
    mesh.module("fast", FAST, &[("fast.conf", "level ${level}\n")]);
    mesh.run(&["assign", "slow", "node1"]).ok();
    mesh.run(&["assign", "fast", "node2", "node3"]).ok();
    mesh.run(&["push", "--all"]).ok();
    let first = invocation("node1", "slow-worker.service");

    mesh.run(&["settings", "set", "slow", "level=2"]).ok();
    mesh.run(&["settings", "set", "fast", "level=2"]).ok();
    let (mut child, lines) = spawn(&mesh, &["push", "--all"]);
    // each node's line comes as it finishes: the fast ones while node1 is still checking
    let mut finished = Vec::new();
    while !(finished
        .iter()
        .any(|l: &String| l.starts_with("node2: applied"))
        && finished
            .iter()
            .any(|l: &String| l.starts_with("node3: applied")))
    {
        match lines.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => finished.push(line),
            Err(e) => panic!("the fast nodes did not finish ({e}); said: {finished:?}"),
        }
    }
    assert!(
        !finished.iter().any(|l| l.starts_with("node1:")),
        "node1 finished before the kill: {finished:?}"
    );
    child.kill().expect("the operator kills mesh");
    child.wait().expect("mesh is gone");

    // the helper on node1 goes on without mesh: the file is written and the worker restarted
    wait_for(Duration::from_secs(40), "node1's helper to finish", || {
        on("node1", "cat /etc/mesh-slow.conf") == "level 2\n"
            && invocation("node1", "slow-worker.service") != first
            && on("node1", "pgrep -f '[m]esh-host-' || true")
                .trim()
                .is_empty()
    });
    let restarted = invocation("node1", "slow-worker.service");

    let plan = mesh.run(&["plan", "--all"]).ok().stdout;
    assert!(
        plan.contains(
            "node1: unconfirmed: the last push was interrupted; the next push or check asks the machine"
        ),
        "{plan}"
    );
    // planned against what node1 last confirmed; the finished nodes were recorded
    assert!(plan.contains("~ slow:file:/etc/mesh-slow.conf"), "{plan}");
    assert!(plan.contains("node2: no changes"), "{plan}");
    assert!(plan.contains("node3: no changes"), "{plan}");

    // the next push asks the machine: what is already there is unchanged, nothing is paid again
    let push = mesh.run(&["push", "--all", "--json"]).ok().json();
    let node1 = node_result(&push, "node1");
    assert!(
        states(node1).contains(&("slow:file:/etc/mesh-slow.conf".into(), "unchanged".into())),
        "{node1}"
    );
    assert_eq!(node1["report"]["units"], serde_json::json!([]), "{node1}");
    assert_eq!(
        invocation("node1", "slow-worker.service"),
        restarted,
        "no false restart"
    );
    let plan = mesh.run(&["plan", "--all"]).ok().stdout;
    assert!(!plan.contains("unconfirmed"), "{plan}");
    assert!(plan.contains("node1: no changes"), "{plan}");
    let history = mesh.run(&["history", "node1"]).ok().stdout;
    assert!(history.contains("interrupted"), "{history}");

    mesh.run(&["unassign", "slow", "node1"]).ok();
    mesh.run(&["unassign", "fast", "node2"]).ok();
    mesh.run(&["unassign", "fast", "node3"]).ok();
    mesh.run(&["push", "--all"]).ok();
}

#[test]
fn an_inventory_that_cannot_be_written_still_gets_every_report_printed_and_exit_2() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.module("paused", PAUSED, &[("paused.conf", "level ${level}\n")]);
    for node in ["node1", "node2", "node3"] {
        mesh.run(&["assign", "paused", node]).ok();
    }
    let child = mesh
        .command(&["push", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mesh starts");
    // once every node is in flight, another process holds the inventory until mesh is done
    let db = rusqlite::Connection::open(mesh.inventory()).expect("the inventory");
    db.busy_timeout(Duration::from_secs(10)).expect("a timeout");
    wait_for(Duration::from_secs(20), "every node in flight", || {
        db.query_row(
            "SELECT count(*) FROM pushes WHERE outcome = 'in-flight'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap_or(0)
            == 3
    });
    db.execute_batch("BEGIN EXCLUSIVE")
        .expect("the inventory locked");
    let out = child.wait_with_output().expect("mesh ends");
    db.execute_batch("ROLLBACK").expect("the lock released");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    for node in ["node1", "node2", "node3"] {
        assert!(
            stdout.contains(&format!("{node}: applied: 1 created")),
            "{stdout}"
        );
        assert!(
            stderr.contains(&format!(
                "{node}: the push ran (its report is above) and the machine may have changed, but the inventory"
            )),
            "{stderr}"
        );
    }
    for said in ["database is locked", "`mesh check node1 node2 node3`"] {
        assert!(stderr.contains(said), "{said:?} not in {stderr}");
    }
    assert_eq!(on("node2", "cat /etc/mesh-paused.conf"), "level 1\n");

    let plan = mesh.run(&["plan", "--all"]).ok().stdout;
    assert!(
        plan.contains("node2: unconfirmed: the last push was interrupted"),
        "{plan}"
    );
    // check asks the machines and records what they have: nothing was left to do
    mesh.run(&["check", "--all"]).ok();
    let plan = mesh.run(&["plan", "--all"]).ok().stdout;
    assert!(!plan.contains("unconfirmed"), "{plan}");
    assert!(plan.contains("node2: no changes"), "{plan}");

    for node in ["node1", "node2", "node3"] {
        mesh.run(&["unassign", "paused", node]).ok();
    }
    mesh.run(&["push", "--all"]).ok();
}
