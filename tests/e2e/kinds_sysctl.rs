//! The `sysctl` kind on a lab machine: set at once and kept in a drop-in, changed by a setting,
//! undeclared with the value found written back at once; one the container cannot change fails
//! saying so. Lab machines are containers: their network settings are their own (their own
//! network namespace), the rest is the host kernel's and read-only.

use crate::util::{Mesh, on};

const RANGE: &str = "/proc/sys/net/ipv4/ping_group_range";
const DROP_IN: &str = "/etc/sysctl.d/99-zz-mesh-net.ipv4.ping_group_range.conf";

fn module(mesh: &Mesh, extra: &str) {
    mesh.module(
        "kernel",
        &format!(
            r#"{{"name": "kernel", "version": "1", "description": "A kernel setting.",
  "settings": [{{"name": "range", "type": "string", "meaning": "Who may ping.",
                "default": "0 1000"}}],
  "resources": [
    {{"kind": "sysctl", "name": "net.ipv4.ping_group_range", "value": "${{range}}"}}{extra}]}}"#
        ),
        &[],
    );
}

fn range() -> String {
    on("node3", &format!("tr '\\t' ' ' <{RANGE}"))
}

#[test]
fn a_sysctl_is_set_at_once_changed_and_given_back_as_found() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on("node3", &format!("rm -f {DROP_IN}; echo '1 0' >{RANGE}"));
    module(&mesh, "");
    mesh.run(&["assign", "kernel", "node3"]).ok();
    let push = mesh.run(&["push", "node3"]).ok();
    assert_eq!(range(), "0 1000\n", "{}", push.stdout);
    assert_eq!(
        on("node3", &format!("cat {DROP_IN}")),
        "net.ipv4.ping_group_range = 0 1000\n"
    );
    mesh.run(&["settings", "set", "kernel", "range=0 2000"])
        .ok();
    let plan = mesh.run(&["plan", "node3", "--diff"]).ok();
    assert!(
        plan.stdout
            .contains("~ kernel:sysctl:net.ipv4.ping_group_range (value)"),
        "{}",
        plan.stdout
    );
    // its diff, and no unit pays for it: the value is set at once
    assert!(
        plan.stdout.contains("-net.ipv4.ping_group_range = 0 1000")
            && plan.stdout.contains("+net.ipv4.ping_group_range = 0 2000"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("  ! "), "{}", plan.stdout);
    // the machine's own /etc/sysctl.conf sets it too (Debian's 99-sysctl.conf links it): the
    // value the mesh sets is the one the machine boots with, as systemd-sysctl applies them
    on(
        "node3",
        "test -e /etc/sysctl.d/99-sysctl.conf || ln -s ../sysctl.conf /etc/sysctl.d/99-sysctl.conf; \
         touch /etc/sysctl.conf; cp /etc/sysctl.conf /etc/sysctl.conf.mesh-kept; \
         echo 'net.ipv4.ping_group_range = 1 0' >>/etc/sysctl.conf",
    );
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(range(), "0 2000\n");
    let booted = on(
        "node3",
        "/usr/lib/systemd/systemd-sysctl --prefix net.ipv4.ping_group_range; \
         tr '\\t' ' ' </proc/sys/net/ipv4/ping_group_range; \
         mv /etc/sysctl.conf.mesh-kept /etc/sysctl.conf",
    );
    assert_eq!(booted, "0 2000\n", "as the machine boots");
    let again = mesh.run(&["push", "node3"]).ok();
    assert!(
        again.stdout.contains("0 created, 0 changed"),
        "{}",
        again.stdout
    );
    // undeclared: the value found, at once, and no drop-in left
    mesh.run(&["unassign", "kernel", "node3"]).ok();
    let off = mesh.run(&["push", "node3"]).ok();
    assert_eq!(range(), "1 0\n", "{}", off.stdout);
    assert_eq!(
        on(
            "node3",
            &format!("test -e {DROP_IN} && echo there || echo gone")
        ),
        "gone\n"
    );
}

#[test]
fn a_sysctl_the_container_cannot_change_fails_saying_so_and_the_rest_goes_ahead() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on(
        "node3",
        &format!("rm -f {DROP_IN} /etc/sysctl.d/99-zz-mesh-vm.swappiness.conf"),
    );
    module(
        &mesh,
        r#", {"kind": "sysctl", "name": "vm.swappiness", "value": 11}"#,
    );
    mesh.run(&["assign", "kernel", "node3"]).ok();
    let push = mesh.run(&["push", "node3"]);
    let said = format!("{}{}", push.stdout, push.stderr);
    assert_ne!(push.status, 0, "{said}");
    assert!(
        said.contains("vm.swappiness cannot be changed on this machine"),
        "{said}"
    );
    assert_eq!(range(), "0 1000\n", "{said}");
    assert_eq!(
        on(
            "node3",
            "test -e /etc/sysctl.d/99-zz-mesh-vm.swappiness.conf && echo there || echo gone"
        ),
        "gone\n"
    );
    mesh.run(&["unassign", "kernel", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
}
