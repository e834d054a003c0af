//! The resource kinds an operator writes first: a unit the module writes itself (a
//! timer and its service as files) started by a `service` on its first push, a unit named from
//! `${me.instance}`, and what a push that starts a unit says of the change it read.

use crate::util::{Mesh, on};

const TIMER: &str = "[Unit]\nDescription=mesh test timer\n\n[Timer]\nOnCalendar=hourly\n\n\
[Install]\nWantedBy=timers.target\n";
const TICK: &str = "[Unit]\nDescription=mesh test tick\n\n[Service]\nType=oneshot\n\
ExecStart=/bin/true\n";
const ONESHOT: &str = "[Unit]\nDescription=mesh test unit\n\n[Service]\nType=oneshot\n\
RemainAfterExit=yes\nExecStart=/bin/true\n";

/// node3 without the units and files these tests make, whatever an earlier run left.
fn clean(units: &[&str]) {
    let mut script = String::new();
    for u in units {
        script.push_str(&format!(
            "systemctl stop {u} 2>/dev/null; rm -f /etc/systemd/system/{u}; "
        ));
    }
    script.push_str("rm -f /etc/mesh-u.conf; systemctl daemon-reload");
    on("node3", &script);
}

fn active(unit: &str) -> String {
    on("node3", &format!("systemctl is-active {unit} || true"))
}

#[test]
fn a_timer_written_as_files_and_started_by_a_service_is_active_after_the_first_push() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    clean(&["mesh-t.timer", "mesh-t.service"]);
    mesh.module(
        "tick",
        r#"{"name": "tick", "version": "1", "description": "An hourly timer.",
  "resources": [
    {"kind": "file", "path": "/etc/systemd/system/mesh-t.service", "template": "mesh-t.service"},
    {"kind": "file", "path": "/etc/systemd/system/mesh-t.timer", "template": "mesh-t.timer",
     "units": ["mesh-t.timer"]},
    {"kind": "service", "unit": "mesh-t.timer", "state": "running"}]}"#,
        &[("mesh-t.timer", TIMER), ("mesh-t.service", TICK)],
    );
    mesh.run(&["assign", "tick", "node3"]).ok();
    let push = mesh.run(&["push", "node3"]).ok();
    assert_eq!(active("mesh-t.timer"), "active\n", "{}", push.stdout);
    // the next push has nothing to do, and taking the module off stops the timer again
    let again = mesh.run(&["push", "node3"]).ok();
    assert!(
        again.stdout.contains("0 created, 0 changed"),
        "{}",
        again.stdout
    );
    mesh.run(&["unassign", "tick", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(active("mesh-t.timer"), "inactive\n");
}

#[test]
fn a_service_unit_named_from_the_instance_is_rendered_and_started() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    clean(&["mesh-i.service"]);
    mesh.module(
        "named",
        r#"{"name": "named", "version": "1", "description": "A unit named for its instance.",
  "requires": [{"name": "me", "kind": "mesh"}],
  "resources": [
    {"kind": "file", "path": "/etc/systemd/system/${me.instance}.service", "template": "unit"},
    {"kind": "service", "unit": "${me.instance}.service", "state": "running"}]}"#,
        &[("unit", ONESHOT)],
    );
    mesh.run(&["assign", "named", "node3", "--as", "mesh-i"])
        .ok();
    let push = mesh.run(&["push", "node3"]).ok();
    assert!(
        push.stdout.contains("mesh-i:service:mesh-i.service"),
        "{}",
        push.stdout
    );
    assert_eq!(active("mesh-i.service"), "active\n", "{}", push.stdout);
    mesh.run(&["unassign", "mesh-i", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(active("mesh-i.service"), "inactive\n");
}

#[test]
fn a_service_unit_that_renders_to_no_unit_name_is_refused_naming_module_and_field() {
    let mesh = Mesh::new();
    mesh.add_offline_nodes();
    mesh.module(
        "badunit",
        r#"{"name": "badunit", "version": "1", "description": "A unit named by a setting.",
  "settings": [{"name": "unit", "type": "string", "meaning": "Which unit.", "default": "x y"}],
  "resources": [{"kind": "service", "unit": "${unit}", "state": "running"}]}"#,
        &[],
    );
    mesh.run(&["assign", "badunit", "n1"]).ok();
    let plan = mesh.run(&["plan", "n1"]);
    let said = format!("{}{}", plan.stdout, plan.stderr);
    assert_ne!(plan.status, 0, "{said}");
    assert!(
        said.contains("module badunit: service unit ${unit} reads as \"x y\", which is not a systemd unit name"),
        "{said}"
    );
}

#[test]
fn a_push_that_starts_a_unit_says_it_read_the_change_as_it_started() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    clean(&["mesh-u.service"]);
    // the machine's own unit, stopped, as a package leaves it
    on(
        "node3",
        &format!(
            "printf '{}' >/etc/systemd/system/mesh-u.service; systemctl daemon-reload",
            ONESHOT.replace('\n', "\\n")
        ),
    );
    let conf = |content: &str, state: &str| {
        let json = format!(
            r#"{{"name": "conf", "version": "1", "description": "A unit's file and its start.",
  "resources": [
    {{"kind": "file", "path": "/etc/mesh-u.conf", "template": "conf", "cost": "restart",
     "units": ["mesh-u.service"]}},
    {{"kind": "service", "unit": "mesh-u.service"{state}}}]}}"#
        );
        mesh.module("conf", &json, &[("conf", content)]);
    };
    // first its file, the unit left stopped; then a change to the file and the unit started
    conf("x=1\n", "");
    mesh.run(&["assign", "conf", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(active("mesh-u.service"), "inactive\n");
    conf("x=2\n", r#", "state": "running""#);
    let push = mesh.run(&["push", "node3"]).ok();
    assert!(
        !push
            .stdout
            .contains("not running: it reads the change when it starts"),
        "{}",
        push.stdout
    );
    assert!(
        push.stdout.contains(
            "unit mesh-u.service: started by this push: it read the change as it started"
        ),
        "{}",
        push.stdout
    );
    assert_eq!(active("mesh-u.service"), "active\n");
    mesh.run(&["unassign", "conf", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    clean(&["mesh-u.service"]);
}

fn exists(path: &str) -> String {
    on(
        "node3",
        &format!("test -e {path} && echo there || echo gone; ls -A {path} 2>/dev/null || true"),
    )
}

#[test]
fn undeclaring_a_directory_removes_the_empty_instance_folder_the_mesh_made_and_no_other() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    on("node3", "rm -rf /srv/mesh/mesh-p /srv/mesh/mesh-q");
    mesh.module(
        "dirs",
        r#"{"name": "dirs", "version": "1", "description": "A directory of its own.",
  "requires": [{"name": "data", "kind": "host", "directory": {"mode": "0700"}}],
  "resources": [{"kind": "file", "path": "${data.path}/note", "template": "note"}]}"#,
        &[("note", "kept here\n")],
    );
    let round = |instance: &str| {
        mesh.run(&["assign", "dirs", "node3", "--as", instance])
            .ok();
        mesh.run(&["push", "node3"]).ok();
        assert_eq!(
            exists(&format!("/srv/mesh/{instance}/data")),
            "there\nnote\n"
        );
    };
    let off = |instance: &str| {
        mesh.run(&["unassign", instance, "node3"]).ok();
        mesh.run(&["push", "node3"]).ok().stdout
    };
    // the mesh made /srv/mesh/mesh-p to hold the directory: empty, it goes with it
    round("mesh-p");
    let said = off("mesh-p");
    assert_eq!(exists("/srv/mesh/mesh-p"), "gone\n", "{said}");
    // one that holds something else stays, and so does what it holds
    round("mesh-p");
    on("node3", "echo mine >/srv/mesh/mesh-p/other");
    let said = off("mesh-p");
    assert_eq!(exists("/srv/mesh/mesh-p"), "there\nother\n", "{said}");
    on("node3", "rm -rf /srv/mesh/mesh-p");
    // one the mesh did not make stays, empty as it is
    on("node3", "mkdir -p /srv/mesh/mesh-q");
    round("mesh-q");
    let said = off("mesh-q");
    assert_eq!(exists("/srv/mesh/mesh-q"), "there\n", "{said}");
    on("node3", "rm -rf /srv/mesh/mesh-q");
}

#[test]
fn an_instance_folder_made_for_one_of_two_directories_goes_once_both_are_gone() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    on("node3", "rm -rf /srv/mesh/mesh-s");
    // `logs` is made first, so it is the one that made /srv/mesh/mesh-s; it is also the first
    // taken off, while `data` is still there
    mesh.module(
        "twodirs",
        r#"{"name": "twodirs", "version": "1", "description": "Two directories.",
  "requires": [{"name": "logs", "kind": "host", "directory": {"mode": "0700"}},
               {"name": "data", "kind": "host", "directory": {"mode": "0700"}}],
  "resources": [{"kind": "file", "path": "${logs.path}/note", "template": "note"},
                {"kind": "file", "path": "${data.path}/note", "template": "note"}]}"#,
        &[("note", "kept here\n")],
    );
    mesh.run(&["assign", "twodirs", "node3", "--as", "mesh-s"])
        .ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(exists("/srv/mesh/mesh-s"), "there\ndata\nlogs\n");
    mesh.run(&["unassign", "mesh-s", "node3"]).ok();
    let said = mesh.run(&["push", "node3"]).ok().stdout;
    assert_eq!(exists("/srv/mesh/mesh-s"), "gone\n", "{said}");
}

#[test]
fn a_folder_made_for_one_file_goes_with_the_last_file_of_the_mesh_in_it_at_a_later_push() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    on("node3", "rm -rf /etc/mesh-made");
    let files = |version: &str, names: &[&str]| {
        let resources: Vec<String> = names
            .iter()
            .map(|n| {
                format!(r#"{{"kind": "file", "path": "/etc/mesh-made/{n}", "template": "note"}}"#)
            })
            .collect();
        mesh.module(
            "made",
            &format!(
                r#"{{"name": "made", "version": "{version}", "description": "Files in a folder.",
  "resources": [{}]}}"#,
                resources.join(", ")
            ),
            &[("note", "a note\n")],
        );
    };
    // `b` is written first: it is the file the mesh made /etc/mesh-made for
    files("1", &["b", "a"]);
    mesh.run(&["assign", "made", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(exists("/etc/mesh-made"), "there\na\nb\n");
    // `b` goes; `a` still holds the folder, and takes it over
    files("2", &["a"]);
    let said = mesh.run(&["push", "node3"]).ok().stdout;
    assert_eq!(exists("/etc/mesh-made"), "there\na\n", "{said}");
    // the plan of its removal promises the folder too, as `a`'s own
    mesh.run(&["unassign", "made", "node3"]).ok();
    let plan = mesh.run(&["plan", "node3"]).ok().stdout;
    assert!(
        plan.contains("deletes /etc/mesh-made if it is empty then"),
        "{plan}"
    );
    let said = mesh.run(&["push", "node3"]).ok().stdout;
    assert_eq!(exists("/etc/mesh-made"), "gone\n", "{said}");
}
