//! Unit fixes, as a module writes them: a timer and its service written as files under
//! names read from a requirement (`${me.instance}.timer`) and started by a `service` is active
//! after its first push; and the "not running" line is said of a unit that is really not running
//! and that the push did not start, never of one it started.

use crate::util::{Mesh, on};

const TIMER: &str = "[Unit]\nDescription=mesh test timer\n\n[Timer]\nOnCalendar=hourly\n";
const JOB: &str = "[Unit]\nDescription=mesh test job\n\n[Service]\nType=oneshot\n\
ExecStart=/bin/true\n";
const NOT_RUNNING: &str = "unit mesh-n.timer: not running: it reads the change when it starts";

fn active(unit: &str) -> String {
    on("node3", &format!("systemctl is-active {unit} || true"))
}

fn module(mesh: &Mesh, state: &str) {
    let json = format!(
        r#"{{"name": "nightly", "version": "1", "description": "A timer named for its instance.",
  "requires": [{{"name": "me", "kind": "mesh"}}],
  "settings": [{{"name": "note", "type": "line", "meaning": "A comment.", "default": "a",
                "cost": "restart"}}],
  "resources": [
    {{"kind": "file", "path": "/etc/systemd/system/${{me.instance}}.service", "template": "job"}},
    {{"kind": "file", "path": "/etc/systemd/system/${{me.instance}}.timer", "template": "timer",
     "cost": "restart", "units": ["${{me.instance}}.timer"]}},
    {{"kind": "service", "unit": "${{me.instance}}.timer"{state}}}]}}"#
    );
    let timer = format!("{TIMER}# ${{note}}\n");
    mesh.module("nightly", &json, &[("timer", &timer), ("job", JOB)]);
}

#[test]
fn a_timer_named_from_the_instance_is_active_after_its_first_push_and_said_running_truly() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    on(
        "node3",
        "systemctl stop mesh-n.timer 2>/dev/null; \
         rm -f /etc/systemd/system/mesh-n.timer /etc/systemd/system/mesh-n.service; \
         systemctl daemon-reload",
    );
    module(&mesh, r#", "state": "running""#);
    mesh.run(&["assign", "nightly", "node3", "--as", "mesh-n"])
        .ok();
    let push = mesh.run(&["push", "node3"]).ok();
    assert_eq!(active("mesh-n.timer"), "active\n", "{}", push.stdout);
    assert!(!push.stdout.contains(NOT_RUNNING), "{}", push.stdout);
    // no state declared and stopped by hand, then its file changed: really not running, said so
    module(&mesh, "");
    mesh.run(&["push", "node3"]).ok();
    on("node3", "systemctl stop mesh-n.timer");
    assert_eq!(active("mesh-n.timer"), "inactive\n");
    mesh.run(&["settings", "set", "nightly", "note=b"]).ok();
    let push = mesh.run(&["push", "node3"]).ok();
    assert!(push.stdout.contains(NOT_RUNNING), "{}", push.stdout);
    assert_eq!(active("mesh-n.timer"), "inactive\n");
    mesh.run(&["unassign", "mesh-n", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(active("mesh-n.timer"), "inactive\n");
}
