//! A process's unit is paid once per run: a
//! push or rollback that changes both its command and a keys file it reads restarts it once,
//! after both are written; and its first push, which creates and starts it, never says it is
//! "not running" for the keys it reads (that is said only of a unit really not running).

use crate::util::{Mesh, node_result, on};

/// A keys entry its process reads (cost restart), a file a unit of the machine's own reads
/// (cost restart), and a process that notes each start of its own in /run/mesh-once.starts.
const ONCE: &str = r#"{
  "name": "once", "version": "1", "description": "A process and the keys it reads.",
  "requires": [{"name": "me", "kind": "mesh"}],
  "settings": [
    {"name": "key", "type": "string", "meaning": "A key it reads.", "default": "k1", "cost": "restart"},
    {"name": "arg", "type": "string", "meaning": "Its command's word.", "default": "a1", "cost": "restart"}],
  "resources": [
    {"kind": "keys", "path": "/etc/mesh-once.json", "mode": "0644", "keys": {"once": {"value": "${key}"}},
     "cost": "restart", "units": ["${me.instance}.service"]},
    {"kind": "file", "path": "/etc/mesh-once-idle.conf", "template": "idle.conf", "cost": "restart",
     "units": ["mesh-once-idle.service"]},
    {"kind": "process", "description": "Notes its starts",
     "command": ["/bin/sh", "-c", "echo ${arg} >>/run/mesh-once.starts; exec sleep infinity"]}
  ]
}"#;

const NOT_RUNNING: &str = "not running: it reads the change when it starts";

/// How many times the process has started since the test began.
fn starts() -> usize {
    on("node2", "cat /run/mesh-once.starts 2>/dev/null || true")
        .lines()
        .count()
}

fn set(mesh: &Mesh, key: &str, arg: &str) {
    mesh.run(&[
        "settings",
        "set",
        "once",
        &format!("key={key}"),
        &format!("arg={arg}"),
    ])
    .ok();
}

/// The generation a `--json` push made on node2.
fn generation(pushed: &serde_json::Value) -> u64 {
    let node2 = node_result(pushed, "node2");
    node2["report"]["generation"]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("no generation: {node2}"))
}

#[test]
fn a_process_whose_command_and_keys_change_in_one_run_restarts_once_and_its_first_start_is_not_said_not_running()
 {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    // a unit of the machine's own, stopped, as a package leaves it: really not running
    on(
        "node2",
        "rm -f /run/mesh-once.starts; \
         printf '[Service]\\nExecStart=/bin/sleep infinity\\n' \
           >/etc/systemd/system/mesh-once-idle.service; \
         systemctl daemon-reload; systemctl stop mesh-once-idle.service",
    );
    mesh.module("once", ONCE, &[("idle.conf", "idle ${key}\n")]);
    mesh.run(&["assign", "once", "node2"]).ok();

    // the first push creates and starts the process: it read its keys as it started
    let first = mesh.run(&["push", "node2"]).ok().stdout;
    assert!(
        first.contains("created, enabled and started once.service"),
        "{first}"
    );
    assert!(
        !first.contains(&format!("unit once.service: {NOT_RUNNING}")),
        "{first}"
    );
    assert!(
        first.contains(&format!("unit mesh-once-idle.service: {NOT_RUNNING}")),
        "the line stays for a unit really not running: {first}"
    );
    assert_eq!(starts(), 1, "{first}");
    println!("{first}");
    let at_first = generation(&mesh.run(&["--json", "check", "node2"]).json());

    // its command and the keys it reads change together: one restart, after both are written
    set(&mesh, "k2", "a2");
    let plan = mesh.run(&["plan", "node2"]).ok().stdout;
    assert_eq!(
        plan.matches("once.service will restart").count(),
        1,
        "{plan}"
    );
    let pushed = mesh.run(&["--json", "push", "node2"]).ok().json();
    generation(&pushed);
    let units = &node_result(&pushed, "node2")["report"]["units"];
    assert_eq!(
        on("node2", "cat /run/mesh-once.starts"),
        "a1\na2\n",
        "one restart, with the new command: {units}"
    );
    let paid: Vec<&serde_json::Value> = units
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["unit"] == "once.service")
        .collect();
    assert_eq!(paid.len(), 1, "{units}");
    assert_eq!(paid[0]["done"], "restarted", "{units}");
    let keys = on("node2", "cat /etc/mesh-once.json");
    assert!(keys.contains("\"k2\""), "{keys}");

    // the rollback to the first generation moves both back: one restart again
    let back = mesh
        .run(&["rollback", "node2", "--to", &at_first.to_string()])
        .ok();
    assert_eq!(
        on("node2", "cat /run/mesh-once.starts"),
        "a1\na2\na1\n",
        "{}",
        back.stdout
    );
    assert_eq!(starts(), 3);
    println!("{}", back.stdout);

    mesh.run(&["rollback", "node2", "--release"]).ok();
    mesh.run(&["unassign", "once", "node2"]).ok();
    mesh.run(&["push", "node2"]).ok();
    on(
        "node2",
        "rm -f /etc/systemd/system/mesh-once-idle.service /run/mesh-once.starts; \
         systemctl daemon-reload",
    );
}
