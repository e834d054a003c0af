//! The `timer` kind on a lab machine: a timer and its service written and the timer active on
//! the first push, its schedule changed by a setting, a schedule systemd cannot read refused
//! saying so, and undeclaring stopping it and removing both units.

use crate::util::{Mesh, on};

fn module(mesh: &Mesh) {
    mesh.module(
        "job",
        r#"{"name": "job", "version": "1", "description": "A nightly job.",
  "settings": [{"name": "when", "type": "string", "meaning": "When it runs.",
                "default": "*-*-* 03:00:00"}],
  "resources": [
    {"kind": "timer", "name": "nightly", "description": "Touches a file",
     "command": ["/usr/bin/touch", "/tmp/mesh-job-ran"], "user": "nobody",
     "schedule": "${when}"}]}"#,
        &[],
    );
}

fn show(property: &str) -> String {
    on(
        "node3",
        &format!("systemctl show -p {property} --value job-nightly.timer"),
    )
}

#[test]
fn a_timer_is_active_after_its_first_push_rescheduled_and_removed_when_undeclared() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    module(&mesh);
    mesh.run(&["assign", "job", "node3"]).ok();
    let push = mesh.run(&["push", "node3"]).ok();
    assert_eq!(show("ActiveState"), "active\n", "{}", push.stdout);
    assert_eq!(show("UnitFileState"), "enabled\n");
    assert!(
        on("node3", "cat /etc/systemd/system/job-nightly.service")
            .contains("ExecStart=\"/usr/bin/touch\" \"/tmp/mesh-job-ran\"\nUser=nobody\n")
    );
    let again = mesh.run(&["push", "node3"]).ok();
    assert!(
        again.stdout.contains("0 created, 0 changed"),
        "{}",
        again.stdout
    );
    // a new schedule: the plan names it, the timer reads it
    mesh.run(&["settings", "set", "job", "when=*-*-* 04:30:00"])
        .ok();
    let plan = mesh.run(&["plan", "node3", "--diff"]).ok();
    println!("{}", plan.stdout);
    assert!(
        plan.stdout
            .contains("~ job:timer:job-nightly.timer (schedule)"),
        "{}",
        plan.stdout
    );
    // its diff, and no unit of the module's pays for it (the helper restarts the timer itself)
    assert!(
        plan.stdout.contains("-schedule: ") && plan.stdout.contains("+schedule: *-*-* 04:30:00"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("  ! "), "{}", plan.stdout);
    mesh.run(&["push", "node3"]).ok();
    assert!(on("node3", "systemctl cat job-nightly.timer").contains("OnCalendar=*-*-* 04:30:00"),);
    assert_eq!(show("ActiveState"), "active\n");
    // what systemd cannot read is refused before anything is written
    mesh.run(&["settings", "set", "job", "when=every tuesday-ish"])
        .ok();
    let bad = mesh.run(&["push", "node3"]);
    let said = format!("{}{}", bad.stdout, bad.stderr);
    assert_ne!(bad.status, 0, "{said}");
    assert!(
        said.contains("is not in systemd's calendar syntax"),
        "{said}"
    );
    assert!(on("node3", "systemctl cat job-nightly.timer").contains("OnCalendar=*-*-* 04:30:00"),);
    mesh.run(&["unassign", "job", "node3"]).ok();
    let off = mesh.run(&["push", "node3"]).ok();
    assert_eq!(show("ActiveState"), "inactive\n", "{}", off.stdout);
    assert_eq!(
        on(
            "node3",
            "ls /etc/systemd/system/job-nightly.timer /etc/systemd/system/job-nightly.service \
             2>/dev/null || echo gone"
        ),
        "gone\n"
    );
}

#[test]
fn module_show_describes_a_timer_a_symlink_and_a_sysctl() {
    let mesh = Mesh::new();
    mesh.module(
        "three",
        r#"{"name": "three", "version": "1", "description": "The three new kinds.",
  "resources": [
    {"kind": "timer", "description": "d", "command": ["/bin/true"], "schedule": "daily"},
    {"kind": "symlink", "path": "/etc/three", "target": "/srv/three"},
    {"kind": "sysctl", "name": "net.ipv4.ip_forward", "value": 1}]}"#,
        &[],
    );
    let show = mesh.run(&["module", "show", "three"]).ok();
    for said in [
        "<instance>.timer: runs \"/bin/true\" as root at daily",
        "/etc/three -> /srv/three (what was there is given back when undeclared)",
        "net.ipv4.ip_forward = 1 (applied at once",
    ] {
        assert!(show.stdout.contains(said), "{said}\n{}", show.stdout);
    }
}
