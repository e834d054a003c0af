//! A revert puts back every kind the push touched, not only files: a link into sshd's drop-ins,
//! a kernel setting, a user's shell, and the accounts, group and timer the push made are all as
//! before the push once the machine reverts it, the revert's report names each, the plan is the
//! plan before, and the next push makes them without a word about accounts the mesh did not make.

use crate::confirm::{no_waiter, once_reachable, take_sshd_off};
use crate::util::{Mesh, node_result, on};

/// What the push changes of what the mesh already has on the machine.
const SITE: &str = r#"{"name": "site", "version": "1", "description": "The site's own policy.",
  "settings": [
    {"name": "policy", "type": "string", "meaning": "Which policy sshd reads.", "default": "/etc/mesh-policy-a"},
    {"name": "range", "type": "string", "meaning": "Who may ping.", "default": "0 1000"},
    {"name": "shell", "type": "line", "meaning": "The site user's shell.", "default": "/bin/sh", "cost": "none"}],
  "resources": [
    {"kind": "symlink", "path": "/etc/mesh-site-policy", "target": "${policy}"},
    {"kind": "sysctl", "name": "net.ipv4.ping_group_range", "value": "${range}"},
    {"kind": "user", "name": "meshsite", "shell": "${shell}"}]}"#;

/// What the push makes: a site policy linked into sshd's drop-ins that keeps root out.
const EXTRA: &str = r#"{"name": "extra", "version": "1", "description": "What the bad push adds.",
  "resources": [
    {"kind": "symlink", "path": "/etc/ssh/sshd_config.d/70-site.conf", "target": "/etc/mesh-no-root"},
    {"kind": "sysctl", "name": "net.ipv4.ip_forward", "value": "1"},
    {"kind": "group", "name": "meshextra"},
    {"kind": "user", "name": "meshextra", "groups": ["meshextra"]},
    {"kind": "timer", "name": "nightly", "description": "Does nothing nightly",
     "command": ["/bin/true"], "user": "nobody", "schedule": "daily"}]}"#;

/// The machine as the revert must leave it, one line per thing the push touched.
const STATE: &str = "readlink /etc/mesh-site-policy; tr '\\t' ' ' </proc/sys/net/ipv4/ping_group_range; \
     cat /proc/sys/net/ipv4/ip_forward; getent passwd meshsite | cut -d: -f7; \
     getent passwd meshextra || echo no-user; getent group meshextra || echo no-group; \
     test -e /etc/systemd/system/extra-nightly.timer && echo timer || echo no-timer; \
     systemctl is-active extra-nightly.timer; \
     test -L /etc/ssh/sshd_config.d/70-site.conf && echo link || echo no-link; \
     sshd -T | grep -ci '^denyusers root' || true";

#[test]
fn a_revert_puts_back_links_settings_accounts_and_timers_and_names_each() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("site", SITE, &[]);
    mesh.module("extra", EXTRA, &[]);
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        "echo 'DenyUsers root' >/etc/mesh-no-root; echo 0 >/proc/sys/net/ipv4/ip_forward; \
         touch /etc/mesh-policy-a /etc/mesh-policy-b",
    );
    mesh.run(&["assign", "sshd", "node1"]).ok();
    mesh.run(&["assign", "site", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let before = on("node1", STATE);
    assert!(
        before.starts_with("/etc/mesh-policy-a\n0 1000\n0\n/bin/sh\nno-user\n"),
        "{before}"
    );

    // one push changes what the site has and a setting of sshd, and adds what extra makes: its
    // link keeps root out, so the confirmation cannot log in
    mesh.run(&[
        "settings",
        "set",
        "site",
        "policy=/etc/mesh-policy-b",
        "range=0 2000",
        "shell=/bin/bash",
    ])
    .ok();
    mesh.run(&["assign", "extra", "node1"]).ok();
    mesh.run(&["settings", "set", "sshd", "max-auth-tries=5"])
        .ok();
    let plan_before = mesh.run(&["plan", "node1"]).ok().stdout;
    let push = mesh
        .run(&["--json", "push", "node1", "--confirm-timeout", "10"])
        .code(2)
        .json();
    assert_eq!(node_result(&push, "node1")["outcome"], "reverted", "{push}");

    let after = once_reachable("node1", STATE, 25);
    assert_eq!(after, before, "every kind is as before the push");
    assert!(no_waiter("node1"));
    assert_eq!(mesh.run(&["plan", "node1"]).ok().stdout, plan_before);

    // the revert's report names each thing it put back
    let check = mesh.run(&["--json", "check", "node1"]).code(4).json();
    let reverted = &node_result(&check, "node1")["report"]["reverted"];
    let said = reverted.to_string();
    for named in [
        "extra:symlink:/etc/ssh/sshd_config.d/70-site.conf",
        "extra:sysctl:net.ipv4.ip_forward",
        "extra:group:meshextra",
        "extra:user:meshextra",
        "extra:timer:extra-nightly.timer",
        "/etc/mesh-site-policy",
        "net.ipv4.ping_group_range",
        "user meshsite",
    ] {
        assert!(said.contains(named), "the revert names {named}: {said}");
    }
    assert!(
        reverted[0]["failed"].as_array().is_none_or(Vec::is_empty),
        "{said}"
    );

    // the next push makes them all, as the plan said: no account is left unowned
    mesh.run(&["settings", "clear", "sshd"]).ok();
    let next = mesh.run(&["push", "node1"]).ok().stdout;
    assert!(!next.contains("did not make"), "{next}");
    let made = on("node1", STATE);
    assert!(
        made.starts_with("/etc/mesh-policy-b\n0 2000\n1\n/bin/bash\nmeshextra:"),
        "{made}"
    );
    mesh.run(&["unassign", "extra", "node1"]).ok();
    mesh.run(&["unassign", "site", "node1"]).ok();
    take_sshd_off(&mesh, &["node1"]);
    let undone = on(
        "node1",
        "getent passwd meshextra meshsite; getent group meshextra; true",
    );
    assert_eq!(undone, "", "undeclaring takes off what the mesh made");
}
