//! Rollouts on six lab machines: a module whose process serves HTTP,
//! declares an HTTP readiness probe and `"rollout": {"max-unavailable": 2}`. A change that
//! restarts it goes in waves of at most 2 after a canary, each wave only once the one before
//! answered ready; a change that costs nothing goes in one wave; a change that makes the probe
//! fail (the process runs, and serves 500) fails the canary, stops the rollout with the others
//! untouched, `push --resume` refused once a setting fixed it (it sends only what the rollout
//! planned) and a new rollout finishes it; `--max-failed 1` stops after the
//! second failure; an operator killed in the third wave resumes with only what was not done; a
//! wave wider than `--parallel` is pushed that many at a time.
//!
//! The lab image has no python3 or busybox: the server is perl's (perl-base is in every Debian).

use crate::util::{Mesh, invocation, node_result, on};

const SVC: &str = r#"{
  "name": "svc", "version": "1", "description": "A process that serves HTTP and restarts when its mark moves.",
  "rollout": {"max-unavailable": 2},
  "settings": [
    {"name": "mark", "type": "string", "meaning": "What it says; read at start (bad: it serves 500).", "default": "a", "cost": "restart"},
    {"name": "note", "type": "string", "meaning": "A note nothing reads at start.", "default": "a", "cost": "none"}
  ],
  "resources": [
    {"kind": "process", "name": "worker", "description": "A worker that serves its mark",
     "command": ["/usr/bin/perl", "serve.pl"], "bundle": [{"path": "serve.pl", "template": "serve.pl", "mode": "0644"}],
     "ready": {"http": "http://127.0.0.1:8201/", "status": 200, "timeout": 5}}
  ]
}"#;

/// Notes when it started, warms up for a second (nothing listens: the probe is refused), then
/// notes when it is ready and serves 200, or 500 for ever when its mark is `bad`. The notes are
/// the host's one clock in nanoseconds (every lab machine shares it).
const SERVE_PL: &str = r#"# note: ${note}
use IO::Socket::INET;
my $mark = "${mark}";
system("date +%s%N >/run/svc-started");
select(undef, undef, undef, 1);
my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 8201, Listen => 5, ReuseAddr => 1)
    or die "cannot listen: $!\n";
my $status = "500 Broken";
if ($mark ne "bad") {
    system("echo $mark >/run/svc-mark; date +%s%N >/run/svc-ready");
    $status = "200 OK";
}
while (my $c = $s->accept) {
    my $line = <$c>;
    print $c "HTTP/1.0 $status\r\nContent-Length: 2\r\n\r\nok";
    close $c;
}
"#;

const UNIT: &str = "svc-worker.service";
const ID: &str = "svc:process:svc-worker.service";
const NODES: [&str; 6] = ["node1", "node2", "node3", "node4", "node5", "node6"];

/// Six machines running svc, pushed once.
fn fleet(mesh: &Mesh) {
    mesh.module("svc", SVC, &[("serve.pl", SERVE_PL)]);
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

/// A note the node's process wrote: nanoseconds on the clock every lab machine shares.
fn noted(node: &str, what: &str) -> u128 {
    let said = on(node, &format!("cat /run/svc-{what}"));
    said.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{node}: /run/svc-{what} says {said:?}"))
}

/// Each node's restart, from its process's start to its answering ready.
fn restarts(nodes: &[&str]) -> Vec<(u128, u128)> {
    nodes
        .iter()
        .map(|n| (noted(n, "started"), noted(n, "ready")))
        .collect()
}

/// The most restarts under way at once: at each restart's start, how many had started and were
/// not yet ready.
fn most_at_once(spans: &[(u128, u128)]) -> usize {
    spans
        .iter()
        .map(|(at, _)| {
            spans
                .iter()
                .filter(|(start, ready)| start <= at && at < ready)
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// Every restart of `later` started once every one of `earlier` answered ready.
fn after(earlier: &[(u128, u128)], later: &[(u128, u128)]) -> bool {
    let ready = earlier.iter().map(|(_, r)| *r).max().unwrap_or(0);
    later.iter().all(|(start, _)| *start > ready)
}

/// The outcome of svc's process in a `push --json` of `node`.
fn worker_outcome(push: &serde_json::Value, node: &str) -> serde_json::Value {
    node_result(push, node)["report"]["resources"]
        .as_array()
        .and_then(|all| all.iter().find(|o| o["id"] == ID))
        .cloned()
        .unwrap_or_else(|| panic!("no outcome for {ID} on {node} in {push}"))
}

#[test]
fn a_restart_goes_in_waves_of_max_unavailable_after_a_canary_and_a_free_change_in_one() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(6) else {
        return;
    };
    fleet(&mesh);
    let shown = mesh.run(&["module", "show", "svc"]).ok().stdout;
    assert!(
        shown.contains("rollout: at most 2 of its assignments restart at once"),
        "{shown}"
    );
    assert!(
        shown.contains("ready when http http://127.0.0.1:8201/ answers 200"),
        "{shown}"
    );

    // a change that costs nothing: one wave of six, planned and pushed so, nothing restarted
    let before: Vec<String> = NODES.iter().map(|n| invocation(n, UNIT)).collect();
    mesh.run(&["settings", "set", "svc", "note=b"]).ok();
    let one = expect(&NODES.map(|n| (n, 1)));
    assert_eq!(
        waves(&mesh.run(&["plan", "--all", "--json"]).ok().json()),
        one
    );
    let pushed = mesh.run(&["push", "--all", "--json"]).ok().json();
    assert_eq!(waves(&pushed), one);
    let after_free: Vec<String> = NODES.iter().map(|n| invocation(n, UNIT)).collect();
    assert_eq!(
        before, after_free,
        "a change that costs nothing restarted a process"
    );

    // a restart: a canary, then waves of at most 2
    mesh.run(&["settings", "set", "svc", "note=b", "mark=b"])
        .ok();
    let planned = mesh.run(&["plan", "--all", "--canary", "1"]).ok().stdout;
    assert!(planned.contains("wave 1 (canary): node1\n"), "{planned}");
    assert!(planned.contains("wave 2: node2 node3\n"), "{planned}");
    assert!(planned.contains("wave 3: node4 node5\n"), "{planned}");
    assert!(planned.contains("wave 4: node6\n"), "{planned}");
    assert!(
        planned.contains("a failure in wave 1 holds waves 2-4 (--max-failed 0, the default"),
        "the plan says what a failure holds: {planned}"
    );
    let four = expect(&[
        ("node1", 1),
        ("node2", 2),
        ("node3", 2),
        ("node4", 3),
        ("node5", 3),
        ("node6", 4),
    ]);
    let plan = mesh
        .run(&["plan", "--all", "--canary", "1", "--json"])
        .ok()
        .json();
    assert_eq!(waves(&plan), four);
    let pushed = mesh
        .run(&["push", "--all", "--canary", "1", "--json"])
        .ok()
        .json();
    assert_eq!(waves(&pushed), four, "push did not follow its plan");
    // each wave's processes started once every one of the wave before answered its probe: never
    // more than 2 restarting at once
    let spans = restarts(&NODES);
    assert!(after(&spans[0..1], &spans[1..3]), "{spans:?}");
    assert!(after(&spans[1..3], &spans[3..5]), "{spans:?}");
    assert!(after(&spans[3..5], &spans[5..6]), "{spans:?}");
    assert!(most_at_once(&spans) <= 2, "{spans:?}");
    for n in NODES {
        assert_eq!(on(n, "cat /run/svc-mark").trim(), "b", "{n}");
    }
}

#[test]
fn a_failed_canary_stops_the_rollout_the_others_untouched_and_resume_finishes_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(6) else {
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
    // systemd has the process running: the HTTP probe is what failed it
    let worker = worker_outcome(&stopped, "node1");
    assert_eq!(worker["state"], "failed", "{worker}");
    let detail = worker["detail"].as_str().unwrap_or_default();
    assert!(
        detail.ends_with(
            "not ready after 5 s: http http://127.0.0.1:8201/ (status 200): answered status 500"
        ),
        "{detail}"
    );
    assert_eq!(
        on("node1", &format!("systemctl is-active {UNIT}")).trim(),
        "active"
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
        plan.contains(
            "left: node1 (wave 1), node2 (wave 2), node3 (wave 2), node4 (wave 3), node5 (wave 3), node6 (wave 4)"
        ),
        "{plan}"
    );
    assert!(plan.contains("mesh push --resume"), "{plan}");

    // fixed by a setting: a resume sends only what the rollout planned, so it is refused naming
    // the nodes whose declaration changed, and nothing is sent
    mesh.run(&["settings", "set", "svc", "mark=c"]).ok();
    let refused = mesh.run(&["push", "--resume"]);
    assert_ne!(refused.status, 0, "{}", refused.stdout);
    assert!(
        refused
            .stderr
            .contains("the rollout planned other declarations for node1, node2")
            && refused.stderr.contains("starts a new rollout"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        invocation("node2", UNIT),
        before[1],
        "a refused resume sent node2"
    );
    // a new rollout, its canary first, sends today's
    let resumed = mesh
        .run(&["push", "--all", "--canary", "1", "--json"])
        .ok()
        .json();
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
    let Some(_machines) = mesh.with_lab_of(6) else {
        return;
    };
    fleet(&mesh);
    mesh.run(&["settings", "set", "svc", "mark=d"]).ok();
    for bad in ["node2", "node3"] {
        mesh.run(&["settings", "set", "svc", "--node", bad, "mark=bad"])
            .ok();
    }
    let untouched = ["node4", "node5", "node6"];
    let before: Vec<String> = untouched.iter().map(|n| invocation(n, UNIT)).collect();
    // one node at a time: node2 fails (within the budget), node3 fails (past it), node4 to
    // node6 are never sent
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
    for n in untouched {
        assert_eq!(node_result(&run, n)["kind"], "rollout-stopped", "{run}");
    }
    let after: Vec<String> = untouched.iter().map(|n| invocation(n, UNIT)).collect();
    assert_eq!(before, after, "a node past the budget was sent its change");
}

#[test]
fn the_operator_killed_in_the_third_wave_resumes_sending_only_what_was_not_done() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(6) else {
        return;
    };
    fleet(&mesh);
    mesh.run(&["settings", "set", "svc", "mark=e"]).ok();
    // a canary, then two a wave: killed as the third starts, the first two are done and recorded
    let (mut child, lines) = crate::confirmed::spawn(&mesh, &["push", "--all", "--canary", "1"]);
    let mut said = Vec::new();
    loop {
        match lines.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(line) if line.starts_with("wave 3 of 4") => break,
            Ok(line) => said.push(line),
            Err(e) => panic!("no third wave ({e}); said: {said:?}"),
        }
    }
    child.kill().expect("the operator kills mesh");
    child.wait().expect("mesh is gone");
    let done_nodes = ["node1", "node2", "node3"];
    let done: Vec<String> = done_nodes.iter().map(|n| invocation(n, UNIT)).collect();

    let plan = mesh.run(&["plan", "--all"]).ok().stdout;
    assert!(plan.contains("was cut short"), "{plan}");
    let resumed = mesh.run(&["push", "--resume", "--json"]).ok().json();
    let sent: Vec<&str> = resumed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["node"].as_str())
        .collect();
    assert_eq!(sent, ["node4", "node5", "node6"], "{resumed}");
    for n in NODES {
        assert_eq!(on(n, "cat /run/svc-mark").trim(), "e", "{n}");
    }
    let again: Vec<String> = done_nodes.iter().map(|n| invocation(n, UNIT)).collect();
    assert_eq!(
        done, again,
        "a node done before the kill was restarted again"
    );
}

#[test]
fn a_wave_wider_than_parallel_stays_one_wave_and_is_pushed_that_many_at_a_time() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(6) else {
        return;
    };
    fleet(&mesh);
    mesh.run(&["settings", "set", "svc", "mark=f"]).ok();
    let one = expect(&NODES.map(|n| (n, 1)));
    let plan = mesh
        .run(&["plan", "--all", "--max-unavailable", "100%", "--json"])
        .ok()
        .json();
    assert_eq!(waves(&plan), one);
    let pushed = mesh
        .run(&[
            "push",
            "--all",
            "--max-unavailable",
            "100%",
            "--parallel",
            "2",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(waves(&pushed), one, "push did not follow its plan");
    // all six restarted, never more than 2 between a process's start and its probe's answer
    let spans = restarts(&NODES);
    assert!(most_at_once(&spans) <= 2, "{spans:?}");
    for n in NODES {
        assert_eq!(on(n, "cat /run/svc-mark").trim(), "f", "{n}");
    }

    // after a canary, the wave of five says it goes two at a time, and does
    mesh.run(&["settings", "set", "svc", "mark=g"]).ok();
    let said = mesh
        .run(&[
            "push",
            "--all",
            "--canary",
            "1",
            "--max-unavailable",
            "100%",
            "--parallel",
            "2",
        ])
        .ok()
        .stdout;
    assert!(
        said.contains("wave 2 of 2: node2 node3 node4 node5 node6 (2 at a time: --parallel)"),
        "{said}"
    );
    let spans = restarts(&NODES);
    assert!(after(&spans[0..1], &spans[1..]), "{spans:?}");
    assert!(most_at_once(&spans[1..]) <= 2, "{spans:?}");
}
