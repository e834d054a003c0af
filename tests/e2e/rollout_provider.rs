//! A consumer waits until its provider is ready, not only applied: a provider whose
//! process takes seconds after it starts before its probe passes, and a consumer on another
//! node; the consumer's process starts only once the provider's probe could answer ready, on a
//! first push and on a push that restarts both.
//!
//! A provider that does not answer ready at all (its push fails, within `--max-failed`) holds
//! its consumer: it is sent nothing, and goes once the provider is fixed.
//!
//! Both processes note the host's one clock (every lab machine shares it) in nanoseconds: the
//! provider when it starts to listen (its probe is refused until then), the consumer when it
//! starts.

use crate::util::{Mesh, invocation, node_result, on};

const SLOW: &str = r#"{
  "name": "slow", "version": "1", "description": "Provides a greeting, seconds after it starts.",
  "settings": [
    {"name": "round", "type": "integer", "meaning": "Read at start.", "default": 1, "cost": "restart"},
    {"name": "probe-port", "type": "integer", "meaning": "Where its probe asks.", "default": 8202, "cost": "restart"}
  ],
  "requires": [{"name": "machine", "kind": "host", "fact": {}}],
  "provides": [{"name": "greeting", "fields": {"host": {"type": "string", "value": "${machine.address}"}}}],
  "resources": [
    {"kind": "process", "description": "Serves once warm", "command": ["/usr/bin/perl", "slow.pl"],
     "bundle": [{"path": "slow.pl", "template": "slow.pl", "mode": "0644"}],
     "ready": {"http": "http://127.0.0.1:${probe-port}/", "status": 200, "timeout": 10}}
  ]
}"#;

/// Listens only 3 s after it starts, and notes when it does.
const SLOW_PL: &str = r#"# round ${round}, probed on ${probe-port}
use IO::Socket::INET;
sleep 3;
my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 8202, Listen => 5, ReuseAddr => 1)
    or die "cannot listen: $!\n";
system("date +%s%N >/run/slow-ready");
while (my $c = $s->accept) {
    my $line = <$c>;
    print $c "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
    close $c;
}
"#;

const GREETER: &str = r#"{
  "name": "greeter", "version": "1", "description": "Greets from its provider's host.",
  "settings": [{"name": "round", "type": "integer", "meaning": "Read at start.", "default": 1, "cost": "restart"}],
  "requires": [{"name": "greeting", "kind": "module", "provision": "greeting", "fields": {"host": {"type": "string"}}}],
  "resources": [
    {"kind": "process", "description": "Notes when it starts", "command": ["/bin/sh", "run.sh"],
     "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

const RUN_SH: &str = "# round ${round}, from ${greeting.host}\ndate +%s%N >/run/greeter-started\nexec sleep infinity\n";

fn noted(node: &str, file: &str) -> u128 {
    let said = on(node, &format!("cat /run/{file}"));
    said.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{node}: /run/{file} says {said:?}"))
}

/// The provider on node1 answered ready before the consumer on node2 started.
fn consumer_started_after_provider_ready(when: &str) {
    let ready = noted("node1", "slow-ready");
    let started = noted("node2", "greeter-started");
    assert!(
        started > ready,
        "{when}: the consumer started at {started}, before its provider was ready at {ready}"
    );
}

#[test]
fn a_consumer_on_another_node_starts_only_once_its_provider_answers_ready() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("slow", SLOW, &[("slow.pl", SLOW_PL)]);
    mesh.module("greeter", GREETER, &[("run.sh", RUN_SH)]);
    mesh.run(&["assign", "slow", "node1"]).ok();
    mesh.run(&["assign", "greeter", "node2"]).ok();
    on("node1", "rm -f /run/slow-ready");
    on("node2", "rm -f /run/greeter-started");

    // the provider's wave, then the consumer's
    let plan = mesh.run(&["plan", "node1", "node2"]).ok().stdout;
    assert!(plan.contains("wave 1: node1\n"), "{plan}");
    assert!(plan.contains("wave 2: node2\n"), "{plan}");
    let pushed = mesh.run(&["push", "node1", "node2", "--json"]).ok().json();
    assert_eq!(node_result(&pushed, "node1")["wave"], 1, "{pushed}");
    assert_eq!(node_result(&pushed, "node2")["wave"], 2, "{pushed}");
    consumer_started_after_provider_ready("first push");

    // both restarted in one push: the consumer again waits for its provider's probe
    mesh.run(&["settings", "set", "slow", "round=2"]).ok();
    mesh.run(&["settings", "set", "greeter", "round=2"]).ok();
    let before = (
        noted("node1", "slow-ready"),
        noted("node2", "greeter-started"),
    );
    mesh.run(&["push", "node1", "node2"]).ok();
    let now = (
        noted("node1", "slow-ready"),
        noted("node2", "greeter-started"),
    );
    assert!(
        now.0 > before.0 && now.1 > before.1,
        "not both restarted: {before:?} {now:?}"
    );
    consumer_started_after_provider_ready("a push that restarts both");

    mesh.run(&["unassign", "greeter", "node2"]).ok();
    mesh.run(&["unassign", "slow", "node1"]).ok();
    mesh.run(&["push", "node1", "node2"]).ok();
}

#[test]
fn a_consumer_whose_provider_does_not_answer_ready_is_held_and_sent_nothing() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("slow", SLOW, &[("slow.pl", SLOW_PL)]);
    mesh.module("greeter", GREETER, &[("run.sh", RUN_SH)]);
    mesh.run(&["assign", "slow", "node1"]).ok();
    mesh.run(&["assign", "greeter", "node2"]).ok();
    mesh.run(&["push", "node1", "node2"]).ok();
    let before = invocation("node2", "greeter.service");

    // its probe asks where nothing listens: node1 fails within the budget, node2 waits
    mesh.run(&["settings", "set", "slow", "probe-port=8209"])
        .ok();
    mesh.run(&["settings", "set", "greeter", "round=3"]).ok();
    let run = mesh
        .run(&["push", "node1", "node2", "--max-failed", "1", "--json"])
        .code(2)
        .json();
    assert_eq!(node_result(&run, "node1")["outcome"], "failed", "{run}");
    let node2 = node_result(&run, "node2");
    assert_eq!(node2["outcome"], "held", "{run}");
    assert_eq!(node2["kind"], "provider-not-ready", "{run}");
    assert_eq!(node2["wave"], 2, "{run}");
    assert!(
        node2["reason"].as_str().is_some_and(|r| r
            .starts_with("its provider node1 is not ready: its push failed")
            && r.contains("not ready after 10 s")),
        "{run}"
    );
    assert_eq!(
        invocation("node2", "greeter.service"),
        before,
        "the consumer was restarted against a provider that is not ready"
    );
    let plan = mesh.run(&["plan", "node2"]).ok().stdout;
    assert!(
        plan.contains("round"),
        "node2's change is not pending: {plan}"
    );

    // fixed, both go, the consumer once its provider answers ready
    mesh.run(&["settings", "set", "slow", "probe-port=8202"])
        .ok();
    mesh.run(&["push", "node1", "node2"]).ok();
    assert_ne!(invocation("node2", "greeter.service"), before);
    consumer_started_after_provider_ready("once the provider is fixed");

    mesh.run(&["unassign", "greeter", "node2"]).ok();
    mesh.run(&["unassign", "slow", "node1"]).ok();
    mesh.run(&["push", "node1", "node2"]).ok();
}
