//! Readiness probes: module.json's `ready` on a process, a service and a
//! container reaches the helper, which probes after what it started, and a probe that cannot
//! pass fails the push (exit 2) naming the probe and what it last answered. `mesh module show`
//! says each probe; `mesh module check` refuses what cannot be one.
//!
//! The lab image has no python3 or busybox: the HTTP server is perl's (perl-base is in every
//! Debian), a few lines in a bundle file.

use crate::container::IMAGE;
use crate::drift::clean;
use crate::util::{Mesh, node_result, on, path_str};

/// Serves every GET with 200 on 127.0.0.1:PORT; a GET of /health leaves a mark, so the test sees
/// that the probe asked.
const SERVE_PL: &str = r#"use IO::Socket::INET;
my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0], Listen => 5, ReuseAddr => 1)
    or die "cannot listen: $!\n";
while (my $c = $s->accept) {
    my $line = <$c>;
    if ($line =~ m{^GET /health }) { open(my $f, ">", "/run/mesh-ready-probed"); close $f; }
    print $c "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
    close $c;
}
"#;

/// A module `name` whose process serves on `${port}` (8181) and declares `ready`.
fn served(name: &str, ready: &str) -> String {
    format!(
        r#"{{
  "name": "{name}", "version": "1", "description": "A process that serves HTTP.",
  "settings": [
    {{"name": "port", "type": "integer", "meaning": "Where it serves.", "default": 8181, "cost": "restart"}},
    {{"name": "probe-port", "type": "integer", "meaning": "Where its probe asks.", "default": 8183, "cost": "restart"}}
  ],
  "resources": [
    {{"kind": "process", "description": "Serves HTTP", "command": ["/usr/bin/perl", "serve.pl", "${{port}}"],
     "bundle": [{{"path": "serve.pl", "template": "serve.pl", "mode": "0644"}}],
     "ready": {ready}}}
  ]
}}"#
    )
}

const PASSES: &str = r#"{"http": "http://127.0.0.1:${port}/health", "timeout": 20}"#;
/// Asks a port nothing serves on, for 3 s.
const CANNOT_PASS: &str = r#"{"http": "http://127.0.0.1:${probe-port}/health", "timeout": 3}"#;

/// The outcome of resource `id` in a `push --json` of node1.
fn outcome_of(push: &serde_json::Value, id: &str) -> serde_json::Value {
    node_result(push, "node1")["report"]["resources"]
        .as_array()
        .and_then(|all| all.iter().find(|o| o["id"] == id))
        .cloned()
        .unwrap_or_else(|| panic!("no outcome for {id} in {push}"))
}

#[test]
fn a_process_that_serves_passes_its_http_probe_and_the_push_succeeds() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on("node1", "rm -f /run/mesh-ready-probed");
    mesh.module(
        "served",
        &served("served", PASSES),
        &[("serve.pl", SERVE_PL)],
    );
    mesh.run(&["assign", "served", "node1"]).ok();
    let push = mesh.run(&["push", "node1", "--json"]).ok().json();
    let outcome = outcome_of(&push, "served:process:served.service");
    assert_eq!(outcome["state"], "created", "{outcome}");
    // the helper asked the probe's URL before it said the process was created
    on("node1", "test -e /run/mesh-ready-probed");
    clean(&mesh, "served");
}

#[test]
fn a_probe_that_cannot_pass_fails_the_push_naming_the_probe_and_its_last_answer() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.module(
        "deaf",
        &served("deaf", CANNOT_PASS),
        &[("serve.pl", SERVE_PL)],
    );
    mesh.run(&["assign", "deaf", "node1"]).ok();
    mesh.run(&["assign", "deaf", "node2"]).ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let outcome = outcome_of(&push, "deaf:process:deaf.service");
    assert_eq!(outcome["state"], "failed", "{outcome}");
    let detail = outcome["detail"].as_str().unwrap_or_default();
    assert!(
        detail.ends_with(
            "deaf.service, but not ready after 3 s: http http://127.0.0.1:8183/health (status 200): connection refused"
        ),
        "{detail}"
    );
    // the text output says it too (on node2: a probe is asked after a start, and node1's was)
    let text = mesh.run(&["push", "node2"]).code(2);
    assert!(
        text.stdout
            .contains("not ready after 3 s: http http://127.0.0.1:8183/health"),
        "{}\n{}",
        text.stdout,
        text.stderr
    );
    mesh.run(&["unassign", "deaf", "node2"]).ok();
    mesh.run(&["push", "node2"]).ok();
    clean(&mesh, "deaf");
}

/// A unit written as a file and started as a service, serving on 8191.
const WEB: &str = r#"{
  "name": "web-unit", "version": "1", "description": "A unit of its own, started as a service.",
  "resources": [
    {"kind": "file", "path": "/etc/mesh-ready-serve.pl", "template": "serve.pl", "units": ["mesh-ready-web.service"], "cost": "restart"},
    {"kind": "file", "path": "/etc/systemd/system/mesh-ready-web.service", "template": "web.service", "units": ["mesh-ready-web.service"], "cost": "restart"},
    {"kind": "service", "unit": "mesh-ready-web.service", "state": "running",
     "ready": {"http": "http://127.0.0.1:8192/health", "timeout": 3}}
  ]
}"#;
const WEB_SERVICE: &str = "[Unit]\nDescription=mesh ready test\n[Service]\nExecStart=/usr/bin/perl /etc/mesh-ready-serve.pl 8191\n";

#[test]
fn a_service_the_helper_started_is_probed_and_one_not_ready_fails() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.module(
        "web-unit",
        WEB,
        &[("serve.pl", SERVE_PL), ("web.service", WEB_SERVICE)],
    );
    mesh.run(&["assign", "web-unit", "node1"]).ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let outcome = outcome_of(&push, "web-unit:service:mesh-ready-web.service");
    assert_eq!(outcome["state"], "failed", "{outcome}");
    let detail = outcome["detail"].as_str().unwrap_or_default();
    assert_eq!(
        detail,
        "started mesh-ready-web.service, but not ready after 3 s: \
         http http://127.0.0.1:8192/health (status 200): connection refused"
    );
    clean(&mesh, "web-unit");
}

fn boxed(ready: &str) -> String {
    format!(
        r#"{{
  "name": "boxed-ready", "version": "1", "description": "A container that sleeps.",
  "resources": [{{"kind": "container", "image": "mesh-sleeper", "command": ["/usr/bin/sleep", "infinity"],
                 "ready": {ready}}}]
}}"#
    )
}

#[test]
fn a_container_is_probed_after_it_runs_and_a_changed_probe_recreates_nothing() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        &format!("docker rm -f boxed-ready >/dev/null 2>&1; {IMAGE}"),
    );
    mesh.module(
        "boxed-ready",
        &boxed(r#"{"command": ["/bin/sh", "-c", "echo nobody home >&2; exit 1"], "timeout": 2}"#),
        &[],
    );
    mesh.run(&["assign", "boxed-ready", "node1"]).ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let outcome = outcome_of(&push, "boxed-ready:container:boxed-ready");
    assert_eq!(outcome["state"], "failed", "{outcome}");
    assert_eq!(
        outcome["detail"],
        "ran container boxed-ready, but not ready after 2 s: \
         command /bin/sh -c echo nobody home >&2; exit 1: exit status: 1: nobody home",
        "{outcome}"
    );
    let id = on("node1", "docker inspect --format '{{.Id}}' boxed-ready");

    // a probe is not what the container is made from: changing it recreates nothing
    mesh.module("boxed-ready", &boxed(r#"{"command": ["/bin/true"]}"#), &[]);
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on("node1", "docker inspect --format '{{.Id}}' boxed-ready"),
        id
    );
    clean(&mesh, "boxed-ready");
}

#[test]
fn module_show_says_each_probe_and_module_check_refuses_what_cannot_be_one() {
    let mesh = Mesh::new();
    let cat = mesh.module(
        "served",
        &served("served", PASSES),
        &[("serve.pl", SERVE_PL)],
    );
    let show = mesh.run(&["module", "show", "served"]).ok().stdout;
    assert!(
        show.contains(
            "process (the instance's own unit): Serves HTTP as root, restart on-failure, bundle \
             serve.pl; ready when http http://127.0.0.1:${port}/health answers 200 (within 20 s)"
        ),
        "{show}"
    );
    let json = mesh
        .run(&["module", "show", "served", "--json"])
        .ok()
        .json();
    assert!(
        json["resources"][0]["what"]
            .as_str()
            .is_some_and(|w| w.contains("ready when http")),
        "{json}"
    );
    // the built-in kv says its own
    let kv = mesh.run(&["module", "show", "kv"]).ok().stdout;
    assert!(
        kv.contains("ready when tcp 127.0.0.1:${listen.port} accepts (within 30 s)"),
        "{kv}"
    );

    mesh.module(
        "bad-probe",
        &served("bad-probe", r#"{"tcp": 0}"#),
        &[("serve.pl", SERVE_PL)],
    );
    let check = mesh
        .run(&["module", "check", path_str(&cat.join("bad-probe"))])
        .code(1);
    assert!(
        check.stderr.contains(
            "module.json: resources[0].ready.tcp: 0 is not a port a probe can connect to"
        ),
        "{}",
        check.stderr
    );
}

/// A process that reads a file of its module (a restart when the file changes) and whose probe
/// asks `${probe-port}`, a setting that costs nothing.
const PAID: &str = r#"{
  "name": "paid", "version": "1", "description": "A process restarted for the file it reads.",
  "settings": [
    {"name": "word", "type": "string", "meaning": "What the file says.", "default": "one", "cost": "restart"},
    {"name": "probe-port", "type": "integer", "meaning": "Where its probe asks.", "default": 8185, "cost": "none"}
  ],
  "requires": [{"name": "me", "kind": "mesh"}],
  "resources": [
    {"kind": "file", "path": "/etc/mesh-ready-paid.conf", "template": "paid.conf", "cost": "restart",
     "units": ["${me.instance}.service"]},
    {"kind": "process", "description": "Serves HTTP", "command": ["/usr/bin/perl", "serve.pl", "8185"],
     "bundle": [{"path": "serve.pl", "template": "serve.pl", "mode": "0644"}],
     "ready": {"tcp": "${probe-port}", "timeout": 3}}
  ]
}"#;

#[test]
fn a_process_restarted_for_a_file_it_reads_is_probed_and_one_left_alone_is_not() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.module(
        "paid",
        PAID,
        &[("serve.pl", SERVE_PL), ("paid.conf", "${word}\n")],
    );
    mesh.run(&["assign", "paid", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();

    // the probe now asks where nothing serves; the process is left as it runs, and not probed
    mesh.run(&["settings", "set", "paid", "probe-port=8186"])
        .ok();
    mesh.run(&["push", "node1"]).ok();

    // its file changes: the helper restarts it for the file, and then its probe is asked
    mesh.run(&["settings", "set", "paid", "probe-port=8186", "word=two"])
        .ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let outcome = outcome_of(&push, "paid:process:paid.service");
    assert_eq!(outcome["state"], "failed", "{outcome}");
    assert_eq!(
        outcome["detail"],
        "paid.service restarted for the files it reads, but not ready after 3 s: \
         tcp 127.0.0.1:8186: connection refused",
        "{outcome}"
    );
    clean(&mesh, "paid");
}

/// A unit that exits at once, probed with a long timeout.
const DIES: &str = r#"{
  "name": "dies-unit", "version": "1", "description": "A unit that fails as it starts.",
  "resources": [
    {"kind": "file", "path": "/etc/systemd/system/mesh-ready-dies.service", "template": "dies.service", "units": ["mesh-ready-dies.service"], "cost": "restart"},
    {"kind": "service", "unit": "mesh-ready-dies.service", "state": "running",
     "ready": {"tcp": 8197, "timeout": 120}}
  ]
}"#;
const DIES_SERVICE: &str = "[Unit]\nDescription=mesh ready test: dies\n[Service]\nExecStart=/bin/sh -c 'sleep 1; exit 3'\n";

#[test]
fn a_probe_of_a_unit_that_dies_stops_waiting_and_says_systemds_reason() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.module("dies-unit", DIES, &[("dies.service", DIES_SERVICE)]);
    mesh.run(&["assign", "dies-unit", "node1"]).ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let outcome = outcome_of(&push, "dies-unit:service:mesh-ready-dies.service");
    let detail = outcome["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("its unit died, so it was not waited for")
            && detail.contains("exit status 3"),
        "{detail}"
    );
    clean(&mesh, "dies-unit");
}
