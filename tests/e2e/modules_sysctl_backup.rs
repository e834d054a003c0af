//! The built-in `sysctl` and `backup` modules on lab machines: pushed, a setting changed with
//! the plan's diff and cost shown, and undeclared with the machine given back as found.

use crate::util::{Mesh, on};

fn value(node: &str, name: &str) -> String {
    on(node, &format!("sysctl -n {name}")).trim().to_string()
}

#[test]
fn the_sysctl_module_sets_its_values_at_once_and_gives_the_found_ones_back() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on(
        "node2",
        "rm -f /etc/sysctl.d/99-zz-mesh-net.*; sysctl -qw net.ipv4.ip_forward=0 \
         net.ipv4.tcp_syncookies=1 'net.ipv4.ping_group_range=1 0'",
    );
    mesh.run(&["assign", "sysctl", "node2"]).ok();
    mesh.run(&["settings", "set", "sysctl", "ip-forward=1"])
        .ok();
    let push = mesh.run(&["push", "node2"]).ok();
    assert_eq!(
        value("node2", "net.ipv4.ip_forward"),
        "1",
        "{}",
        push.stdout
    );
    assert_eq!(
        value("node2", "net.ipv4.ping_group_range").replace('\t', " "),
        "0 2147483647"
    );
    assert_eq!(
        on(
            "node2",
            "cat /etc/sysctl.d/99-zz-mesh-net.ipv4.ip_forward.conf"
        ),
        "net.ipv4.ip_forward = 1\n"
    );
    // a setting changed: the plan names the value that moves and says it costs no unit
    mesh.run(&[
        "settings",
        "set",
        "sysctl",
        "ip-forward=1",
        "tcp-syncookies=2",
    ])
    .ok();
    let plan = mesh.run(&["plan", "node2", "--diff"]).ok().stdout;
    assert!(
        plan.contains("~ sysctl:sysctl:net.ipv4.tcp_syncookies (value)"),
        "{plan}"
    );
    assert!(
        plan.contains("-net.ipv4.tcp_syncookies = 1")
            && plan.contains("+net.ipv4.tcp_syncookies = 2"),
        "{plan}"
    );
    assert!(!plan.contains("  ! "), "{plan}");
    println!("{plan}");
    mesh.run(&["push", "node2"]).ok();
    assert_eq!(value("node2", "net.ipv4.tcp_syncookies"), "2");
    // undeclared: every value as found, no drop-in left
    mesh.run(&["unassign", "sysctl", "node2"]).ok();
    let off = mesh.run(&["push", "node2"]).ok();
    assert_eq!(value("node2", "net.ipv4.ip_forward"), "0", "{}", off.stdout);
    assert_eq!(value("node2", "net.ipv4.tcp_syncookies"), "1");
    assert_eq!(
        value("node2", "net.ipv4.ping_group_range").replace('\t', " "),
        "1 0"
    );
    assert_eq!(
        on("node2", "ls /etc/sysctl.d/ | grep -c 99-zz-mesh || true"),
        "0\n"
    );
}

const ARCHIVES: &str = "/var/backups/mesh-backup";

#[test]
fn the_backup_module_archives_as_its_own_user_and_goes_with_its_units_and_user() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on(
        "node3",
        &format!("userdel mesh-backup 2>/dev/null; rm -rf {ARCHIVES}; true"),
    );
    mesh.run(&["assign", "backup", "node3"]).ok();
    let push = mesh.run(&["push", "node3"]).ok();
    assert_eq!(
        on("node3", "systemctl is-active backup.timer"),
        "active\n",
        "{}",
        push.stdout
    );
    assert!(on("node3", "getent passwd mesh-backup").contains(":/var/backups/mesh-backup:"));
    // with its defaults, one run makes an archive of /etc, owned by the account it runs as
    on("node3", "systemctl start backup.service");
    let made = on(
        "node3",
        &format!("stat -c '%U %a %n' {ARCHIVES}/mesh-backup-*.tar.gz"),
    );
    assert!(made.starts_with("mesh-backup 600 "), "{made}");
    let listed = on(
        "node3",
        &format!("tar -tzf {ARCHIVES}/mesh-backup-*.tar.gz"),
    );
    assert!(listed.contains("etc/hostname"), "{listed}");

    // a setting changed: the plan shows the paths file's diff, and no unit pays for it
    mesh.run(&[
        "settings",
        "set",
        "backup",
        r#"paths=["/etc/hostname","/etc/hosts"]"#,
    ])
    .ok();
    let plan = mesh.run(&["plan", "node3", "--diff"]).ok().stdout;
    assert!(
        plan.contains("~ backup:file:/etc/mesh-backup.paths"),
        "{plan}"
    );
    assert!(plan.contains("+/etc/hosts"), "{plan}");
    assert!(!plan.contains("  ! "), "{plan}");
    println!("{plan}");
    mesh.run(&["push", "node3"]).ok();
    on(
        "node3",
        &format!("rm -f {ARCHIVES}/*.tar.gz; systemctl start backup.service"),
    );
    let listed = on(
        "node3",
        &format!("tar -tzf {ARCHIVES}/mesh-backup-*.tar.gz"),
    );
    assert_eq!(listed, "etc/hostname\netc/hosts\n");

    // undeclared: timer, units, paths file and user gone; the archives kept
    mesh.run(&["unassign", "backup", "node3"]).ok();
    let off = mesh.run(&["push", "node3"]).ok();
    let gone = on(
        "node3",
        "for f in /etc/systemd/system/backup.timer /etc/systemd/system/backup.service \
         /etc/mesh-backup.paths; do test -e $f && echo $f; done; \
         getent passwd mesh-backup; systemctl is-active backup.timer; true",
    );
    assert_eq!(gone, "inactive\n", "{}", off.stdout);
    assert!(on("node3", &format!("ls {ARCHIVES}")).contains(".tar.gz"));
    on("node3", &format!("rm -rf {ARCHIVES}"));
}
