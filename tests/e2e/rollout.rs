//! Rollouts on five lab machines: a change that restarts a module's process goes in waves of at
//! most its `max-unavailable` (after a canary); a change that costs nothing in one wave; a
//! failed canary stops the rollout with the others untouched, and `push --resume` finishes it
//! once fixed; `--max-failed 1` stops after the second failure.

use crate::util::{Mesh, invocation, node_result, on};

const SVC: &str = r#"{
  "name": "svc", "version": "1", "description": "A process that restarts when its mark moves.",
  "rollout": {"max-unavailable": 2},
  "settings": [
    {"name": "mark", "type": "string", "meaning": "What it says; read at start (bad: it fails).", "default": "a", "cost": "restart"},
    {"name": "note", "type": "string", "meaning": "A note nothing reads at start.", "default": "a", "cost": "none"}
  ],
  "resources": [
    {"kind": "process", "name": "worker", "description": "A worker that says its mark",
     "command": ["/bin/sh", "run.sh"], "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

const RUN_SH: &str =
    "# ${note}\n[ ${mark} = bad ] && exit 1\necho ${mark} >/run/svc-mark\nexec sleep infinity\n";

const UNIT: &str = "svc-worker.service";
const NODES: [&str; 5] = ["node1", "node2", "node3", "node4", "node5"];

/// Five machines running svc, pushed once.
fn fleet(mesh: &Mesh) {
    mesh.module("svc", SVC, &[("run.sh", RUN_SH)]);
    let mut assign = vec!["assign", "svc"];
    assign.extend(NODES);
    mesh.run(&assign).ok();
    mesh.run(&["push", "--all"]).ok();
}

/// Each node's wave in a plan's or push's JSON.
fn waves(list: &serde_json::Value) -> Vec<(String, u64)> {
    NODES
        .iter()
        .map(|n| {
            let wave = node_result(list, n)["wave"].as_u64();
            (
                n.to_string(),
                wave.unwrap_or_else(|| panic!("{n} has no wave: {list}")),
            )
        })
        .collect()
}

fn expect(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
    pairs.iter().map(|(n, w)| (n.to_string(), *w)).collect()
}

/// When the unit's current process started, on the clock every lab machine shares.
fn started(node: &str) -> u64 {
    let said = on(
        node,
        &format!("systemctl show -p ExecMainStartTimestampMonotonic --value {UNIT}"),
    );
    said.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{node}: {said:?}"))
}

#[test]
fn a_restart_goes_in_waves_of_max_unavailable_after_a_canary_and_a_free_change_in_one() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(5) else {
        return;
    };
    fleet(&mesh);
    let shown = mesh.run(&["module", "show", "svc"]).ok().stdout;
    assert!(
        shown.contains("rollout: at most 2 of its assignments restart at once"),
        "{shown}"
    );

    // a change that costs nothing: one wave, planned and pushed so, nothing restarted
    let before: Vec<String> = NODES.iter().map(|n| invocation(n, UNIT)).collect();
    mesh.run(&["settings", "set", "svc", "note=b"]).ok();
    let one = expect(&[
        ("node1", 1),
        ("node2", 1),
        ("node3", 1),
        ("node4", 1),
        ("node5", 1),
    ]);
    assert_eq!(
        waves(&mesh.run(&["plan", "--all", "--json"]).ok().json()),
        one
    );
    let pushed = mesh.run(&["push", "--all", "--json"]).ok().json();
    assert_eq!(waves(&pushed), one);
    let after: Vec<String> = NODES.iter().map(|n| invocation(n, UNIT)).collect();
    assert_eq!(
        before, after,
        "a change that costs nothing restarted a process"
    );

    // a restart: a canary, then waves of at most 2
    mesh.run(&["settings", "set", "svc", "note=b", "mark=b"])
        .ok();
    let planned = mesh.run(&["plan", "--all", "--canary", "1"]).ok().stdout;
    assert!(planned.contains("wave 1 (canary): node1"), "{planned}");
    assert!(planned.contains("wave 2: node2 node3"), "{planned}");
    assert!(planned.contains("wave 3: node4 node5"), "{planned}");
    let three = expect(&[
        ("node1", 1),
        ("node2", 2),
        ("node3", 2),
        ("node4", 3),
        ("node5", 3),
    ]);
    let plan = mesh
        .run(&["plan", "--all", "--canary", "1", "--json"])
        .ok()
        .json();
    assert_eq!(waves(&plan), three);
    let pushed = mesh
        .run(&["push", "--all", "--canary", "1", "--json"])
        .ok()
        .json();
    assert_eq!(waves(&pushed), three, "push did not follow its plan");
    // each wave's processes started after every one of the wave before: never more than 2
    // restarting at once
    let at: Vec<u64> = NODES.iter().map(|n| started(n)).collect();
    assert!(at[0] < at[1].min(at[2]), "{at:?}");
    assert!(at[1].max(at[2]) < at[3].min(at[4]), "{at:?}");
    for n in NODES {
        assert_eq!(on(n, "cat /run/svc-mark").trim(), "b", "{n}");
    }
}

#[test]
fn a_failed_canary_stops_the_rollout_the_others_untouched_and_resume_finishes_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(5) else {
        return;
    };
    fleet(&mesh);
    let before: Vec<String> = NODES.iter().map(|n| invocation(n, UNIT)).collect();

    mesh.run(&["settings", "set", "svc", "mark=bad"]).ok();
    let stopped = mesh
        .run(&[
            "push",
            "--all",
            "--canary",
            "1",
            "--max-failed",
            "3",
            "--json",
        ])
        .code(2)
        .json();
    assert_eq!(
        node_result(&stopped, "node1")["outcome"],
        "failed",
        "{stopped}"
    );
    for (i, n) in NODES.iter().enumerate().skip(1) {
        let r = node_result(&stopped, n);
        assert_eq!(r["outcome"], "held", "{stopped}");
        assert_eq!(r["kind"], "rollout-stopped", "{stopped}");
        assert!(
            r["reason"]
                .as_str()
                .is_some_and(|w| w.contains("canary failed")),
            "{stopped}"
        );
        assert_eq!(invocation(n, UNIT), before[i], "{n} was restarted");
    }
    let plan = mesh.run(&["plan", "--all"]).ok().stdout;
    assert!(
        plan.contains("left: node1 (wave 1), node2 (wave 2)"),
        "{plan}"
    );
    assert!(plan.contains("mesh push --resume"), "{plan}");

    // fixed, the rollout goes on from where it stopped
    mesh.run(&["settings", "set", "svc", "mark=c"]).ok();
    let resumed = mesh.run(&["push", "--resume", "--json"]).ok().json();
    for n in NODES {
        assert_eq!(node_result(&resumed, n)["outcome"], "applied", "{resumed}");
        assert_eq!(on(n, "cat /run/svc-mark").trim(), "c", "{n}");
    }
    let again = mesh.run(&["push", "--resume"]).code(1);
    assert!(
        again.stderr.contains("no rollout to resume"),
        "{}",
        again.stderr
    );
}

#[test]
fn max_failed_1_stops_after_the_second_failure_and_no_more() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(5) else {
        return;
    };
    fleet(&mesh);
    mesh.run(&["settings", "set", "svc", "mark=d"]).ok();
    for bad in ["node2", "node3"] {
        mesh.run(&["settings", "set", "svc", "--node", bad, "mark=bad"])
            .ok();
    }
    let before = invocation("node4", UNIT);
    // one node at a time: node2 fails (within the budget), node3 fails (past it), node4 and
    // node5 are never sent
    let run = mesh
        .run(&[
            "push",
            "--all",
            "--max-unavailable",
            "1",
            "--max-failed",
            "1",
            "--json",
        ])
        .code(2)
        .json();
    assert_eq!(node_result(&run, "node1")["outcome"], "applied", "{run}");
    assert_eq!(node_result(&run, "node2")["outcome"], "failed", "{run}");
    assert_eq!(node_result(&run, "node3")["outcome"], "failed", "{run}");
    for n in ["node4", "node5"] {
        assert_eq!(node_result(&run, n)["kind"], "rollout-stopped", "{run}");
    }
    assert_eq!(
        invocation("node4", UNIT),
        before,
        "node4 was sent its change"
    );
}

#[test]
fn the_operator_killed_in_the_third_wave_resumes_sending_only_what_was_not_done() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(5) else {
        return;
    };
    fleet(&mesh);
    mesh.run(&["settings", "set", "svc", "mark=e"]).ok();
    // one node a wave: killed as the third starts, the first two are done and recorded
    let (mut child, lines) =
        crate::confirmed::spawn(&mesh, &["push", "--all", "--max-unavailable", "1"]);
    let mut said = Vec::new();
    loop {
        match lines.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(line) if line.starts_with("wave 3 of 5") => break,
            Ok(line) => said.push(line),
            Err(e) => panic!("no third wave ({e}); said: {said:?}"),
        }
    }
    child.kill().expect("the operator kills mesh");
    child.wait().expect("mesh is gone");
    let done: Vec<String> = ["node1", "node2"]
        .iter()
        .map(|n| invocation(n, UNIT))
        .collect();

    let plan = mesh.run(&["plan", "--all"]).ok().stdout;
    assert!(plan.contains("was cut short"), "{plan}");
    let resumed = mesh.run(&["push", "--resume", "--json"]).ok().json();
    let sent: Vec<&str> = resumed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["node"].as_str())
        .collect();
    assert_eq!(sent, ["node3", "node4", "node5"], "{resumed}");
    for n in NODES {
        assert_eq!(on(n, "cat /run/svc-mark").trim(), "e", "{n}");
    }
    let again: Vec<String> = ["node1", "node2"]
        .iter()
        .map(|n| invocation(n, UNIT))
        .collect();
    assert_eq!(
        done, again,
        "a node done before the kill was restarted again"
    );
}
