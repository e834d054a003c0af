//! Costs are paid for every cause, on real machines: a requirement's
//! answer that moves costs like a setting; a bundle file costs what moved in it; a cost owed
//! survives a helper killed right after the write; and the files of one unit are checked
//! together, all kept or all put back.

use crate::util::{Mesh, invocation, node_result, on};

/// A unit of the test's own, running `sleep`; `extra` goes into its [Service] section.
fn test_unit(node: &str, unit: &str, extra: &str) {
    on(
        node,
        &format!(
            "printf '[Service]\\nExecStart=/bin/sleep infinity\\n{extra}' \
             > /etc/systemd/system/{unit} && systemctl daemon-reload && systemctl restart {unit}"
        ),
    );
}

fn drop_unit(node: &str, unit: &str) {
    on(
        node,
        &format!(
            "systemctl stop {unit}; rm -f /etc/systemd/system/{unit}; systemctl daemon-reload"
        ),
    );
}

const SOURCE: &str = r#"{
  "name": "addr-src", "version": "1", "description": "Provides its node's address.",
  "requires": [{"name": "machine", "kind": "host", "fact": {}}],
  "provides": [{"name": "addr", "fields": {"host": {"type": "string", "value": "${machine.address}"}}}],
  "resources": []
}"#;

const USER: &str = r#"{
  "name": "addr-use", "version": "1", "description": "A file naming a provider's address, read at start by a unit.",
  "requires": [{"name": "src", "kind": "module", "provision": "addr", "fields": {"host": {"type": "string"}}}],
  "resources": [{"kind": "file", "path": "/etc/mesh-addr.conf", "template": "addr.conf", "cost": "restart",
                 "units": ["mesh-addr.service"]}]
}"#;

#[test]
fn a_provider_moved_to_another_node_restarts_the_consumers_that_read_its_address() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("addr-src", SOURCE, &[]);
    mesh.module("addr-use", USER, &[("addr.conf", "server ${src.host}\n")]);
    mesh.run(&["push", "--all"]).ok();
    test_unit("node2", "mesh-addr.service", "");
    mesh.run(&["assign", "addr-src", "node1"]).ok();
    mesh.run(&["assign", "addr-use", "node2"]).ok();
    mesh.run(&["push", "--all"]).ok();
    let before = invocation("node2", "mesh-addr.service");

    // the provider moves (the new one first: the old one, answering a consumer, is not taken
    // away until another is there): the consumer's file names another address, and its reader
    // restarts
    mesh.run(&["assign", "addr-src", "node3"]).ok();
    mesh.run(&["unassign", "addr-src", "node1"]).ok();
    let plan = mesh.run(&["plan", "node2"]).ok().stdout;
    for said in [
        "settings moved: src.host",
        "! mesh-addr.service will restart (because of addr-use:file:/etc/mesh-addr.conf: src.host)",
    ] {
        assert!(plan.contains(said), "{said:?} not in {plan}");
    }
    let run = mesh.run(&["push", "--all", "--json"]).ok().json();
    let units = &node_result(&run, "node2")["report"]["units"];
    assert_eq!(units[0]["unit"], "mesh-addr.service", "{units}");
    assert_eq!(units[0]["action"], "restart", "{units}");
    assert_ne!(
        invocation("node2", "mesh-addr.service"),
        before,
        "the consumer's unit reads the provider's address only at start: it must restart"
    );
    let node3 = crate::util::address("node3");
    assert_eq!(
        on("node2", "cat /etc/mesh-addr.conf"),
        format!("server {node3}\n")
    );

    mesh.run(&["unassign", "addr-use", "node2"]).ok();
    mesh.run(&["unassign", "addr-src", "node3"]).ok();
    mesh.run(&["push", "--all"]).ok();
    drop_unit("node2", "mesh-addr.service");
}

const BUNDLED: &str = r#"{
  "name": "bundled", "version": "1", "description": "A process whose bundle reads two settings.",
  "settings": [
    {"name": "quiet", "type": "string", "meaning": "Read by the script on every use.", "default": "a", "cost": "none"},
    {"name": "loud", "type": "string", "meaning": "Read by the script only at start.", "default": "a", "cost": "restart"}
  ],
  "resources": [{"kind": "process", "description": "Sleeps", "command": ["/bin/sh", "run.sh"],
                 "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}]
}"#;

#[test]
fn a_none_setting_read_in_a_bundle_leaves_the_process_running_and_a_restart_one_restarts_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module(
        "bundled",
        BUNDLED,
        &[(
            "run.sh",
            "# quiet ${quiet}\n# loud ${loud}\nexec sleep infinity\n",
        )],
    );
    mesh.run(&["push", "--all"]).ok();
    mesh.run(&["assign", "bundled", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let first = invocation("node1", "bundled.service");

    // a setting of cost none moved in the bundle: written, not restarted, and the plan says none
    mesh.run(&["settings", "set", "bundled", "quiet=b"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(!plan.contains("will restart"), "{plan}");
    mesh.run(&["push", "node1"]).ok();
    assert!(
        on("node1", "cat /var/lib/mesh/bundles/bundled/run.sh").contains("# quiet b"),
        "the bundle file was not rewritten"
    );
    assert_eq!(
        invocation("node1", "bundled.service"),
        first,
        "a setting of cost none restarted the process"
    );

    // one of cost restart: the process restarts, and the plan said so
    mesh.run(&["settings", "set", "bundled", "quiet=b", "loud=b"])
        .ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(
        plan.contains(
            "! bundled.service will restart (because of bundled:process:bundled.service: loud)"
        ),
        "{plan}"
    );
    mesh.run(&["push", "node1"]).ok();
    assert_ne!(invocation("node1", "bundled.service"), first);

    mesh.run(&["unassign", "bundled", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

const KILLED: &str = r#"{
  "name": "killed", "version": "1", "description": "A file read at start by a unit.",
  "settings": [{"name": "level", "type": "integer", "meaning": "Read only at start.", "default": 1, "cost": "restart"}],
  "resources": [{"kind": "file", "path": "/etc/mesh-killed.conf", "template": "killed.conf", "cost": "restart",
                 "units": ["mesh-killed.service"]}]
}"#;

#[test]
fn a_helper_killed_right_after_the_write_still_restarts_the_unit_at_the_next_push() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("killed", KILLED, &[("killed.conf", "level ${level}\n")]);
    mesh.run(&["push", "--all"]).ok();
    test_unit("node1", "mesh-killed.service", "");
    mesh.run(&["assign", "killed", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let before = invocation("node1", "mesh-killed.service");

    mesh.run(&["settings", "set", "killed", "level=2"]).ok();
    // the helper dies right after writing the file, before any unit is paid
    on(
        "node1",
        "echo killed:file:/etc/mesh-killed.conf >/var/lib/mesh/fault",
    );
    let lost = mesh.run(&["push", "node1"]).code(2);
    // a helper that dies answers with no exit status: the operator cannot know what it did,
    // and says so instead of "the helper failed"
    let said = format!("{}{}", lost.stdout, lost.stderr);
    assert!(
        said.contains("node1: the connection was lost before the helper answered")
            && said.contains("`mesh check node1` asks it"),
        "{said}"
    );
    assert_eq!(on("node1", "cat /etc/mesh-killed.conf"), "level 2\n");
    assert_eq!(invocation("node1", "mesh-killed.service"), before);

    // the machine is not "unchanged": the restart is owed, and check says so
    let check = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(
        check.contains(
            "unit mesh-killed.service: would restart (because of owed by an earlier push)"
        ),
        "{check}"
    );
    let run = mesh.run(&["push", "node1", "--json"]).ok().json();
    let units = &node_result(&run, "node1")["report"]["units"];
    assert_eq!(units[0]["unit"], "mesh-killed.service", "{units}");
    assert_eq!(units[0]["action"], "restart", "{units}");
    assert_eq!(units[0]["because"][0], "owed by an earlier push", "{units}");
    assert_ne!(invocation("node1", "mesh-killed.service"), before);
    // paid: nothing is owed any more
    mesh.run(&["check", "node1"]).ok();

    // what the lost push says holds without a check: the next push carries on from what the
    // machine has, and pays what was owed
    mesh.run(&["settings", "set", "killed", "level=3"]).ok();
    on(
        "node1",
        "echo killed:file:/etc/mesh-killed.conf >/var/lib/mesh/fault",
    );
    let lost = mesh.run(&["push", "node1"]).code(2);
    assert!(
        lost.stdout
            .contains("the next push carries on from what the machine has")
    );
    let paid = invocation("node1", "mesh-killed.service");
    let run = mesh.run(&["push", "node1", "--json"]).ok().json();
    let units = &node_result(&run, "node1")["report"]["units"];
    assert_eq!(units[0]["because"][0], "owed by an earlier push", "{units}");
    assert_eq!(on("node1", "cat /etc/mesh-killed.conf"), "level 3\n");
    assert_ne!(invocation("node1", "mesh-killed.service"), paid);

    mesh.run(&["unassign", "killed", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    drop_unit("node1", "mesh-killed.service");
}

const PAIR: &str = r#"{
  "name": "pair", "version": "1", "description": "Two checked files read by one unit.",
  "settings": [{"name": "word", "type": "string", "meaning": "Read by both files.", "default": "good", "cost": "reload"}],
  "resources": [
    {"kind": "file", "path": "/etc/mesh-pair-a.conf", "template": "a.conf", "cost": "reload",
     "units": ["mesh-pair.service"], "validate": ["true"]},
    {"kind": "file", "path": "/etc/mesh-pair-b.conf", "template": "b.conf", "cost": "reload",
     "units": ["mesh-pair.service"], "validate": ["/bin/sh", "-c", "! grep -q bad /etc/mesh-pair-b.conf"]}
  ]
}"#;

#[test]
fn two_checked_files_of_one_unit_one_refused_both_go_back_and_the_unit_is_not_reloaded() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module(
        "pair",
        PAIR,
        &[("a.conf", "a ${word}\n"), ("b.conf", "b ${word}\n")],
    );
    mesh.run(&["push", "--all"]).ok();
    test_unit(
        "node1",
        "mesh-pair.service",
        "ExecReload=/bin/sh -c \"echo reloaded >> /run/mesh-pair-reloads\"\\n",
    );
    mesh.run(&["assign", "pair", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    on("node1", "rm -f /run/mesh-pair-reloads");
    let started = |what: &str| {
        on(
            "node1",
            &format!("systemctl show -p {what} --value mesh-pair.service"),
        )
    };
    let (invocation_before, start_before) =
        (started("InvocationID"), started("ExecMainStartTimestamp"));

    mesh.run(&["settings", "set", "pair", "word=bad"]).ok();
    let run = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let report = &node_result(&run, "node1")["report"];
    // both files are as they were, and the unit was neither reloaded nor restarted
    assert_eq!(on("node1", "cat /etc/mesh-pair-a.conf"), "a good\n");
    assert_eq!(on("node1", "cat /etc/mesh-pair-b.conf"), "b good\n");
    assert_eq!(report["units"], serde_json::json!([]), "{report}");
    assert_eq!(
        on(
            "node1",
            "cat /run/mesh-pair-reloads 2>/dev/null || echo none"
        )
        .trim(),
        "none"
    );
    assert_eq!(started("InvocationID"), invocation_before);
    assert_eq!(started("ExecMainStartTimestamp"), start_before);
    // the report says which file was refused, and that the other was put back with it
    let outcome = |id: &str| {
        report["resources"]
            .as_array()
            .and_then(|all| all.iter().find(|o| o["id"] == id))
            .cloned()
            .unwrap_or_else(|| panic!("no {id} in {report}"))
    };
    let refused = outcome("pair:file:/etc/mesh-pair-b.conf");
    assert_eq!(refused["state"], "failed", "{refused}");
    let said = refused["detail"].as_str().unwrap_or_default();
    assert!(said.contains("refused the new content"), "{said}");
    assert!(said.contains("/etc/mesh-pair-a.conf"), "{said}");
    let put_back = outcome("pair:file:/etc/mesh-pair-a.conf");
    assert_eq!(put_back["state"], "failed", "{put_back}");
    assert!(
        put_back["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("put back: mesh-pair.service's check refused /etc/mesh-pair-b.conf"),
        "{put_back}"
    );

    // once the check passes, both go in and the unit reloads once
    mesh.run(&["settings", "set", "pair", "word=fine"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", "cat /etc/mesh-pair-a.conf"), "a fine\n");
    assert_eq!(on("node1", "cat /run/mesh-pair-reloads").trim(), "reloaded");

    mesh.run(&["unassign", "pair", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    drop_unit("node1", "mesh-pair.service");
    on("node1", "rm -f /run/mesh-pair-reloads");
}
