//! The built-in sshd module on a lab machine: its drop-in is checked with `sshd -t` before sshd
//! reloads it, a value sshd refuses never reaches the daemon, and sshd is never stopped.

use std::time::Duration;

use crate::util::{Mesh, eventually, invocation, node_result, on, ssh};

#[test]
fn an_sshd_setting_is_checked_then_reloaded_and_a_refused_one_changes_nothing() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.run(&["assign", "sshd", "node1"]).ok();
    mesh.run(&["settings", "set", "sshd", "max-auth-tries=4"])
        .ok();
    mesh.run(&["push", "node1"]).ok();
    assert!(on("node1", "sshd -T").contains("maxauthtries 4"));

    let before = invocation("node1", "ssh.service");
    mesh.run(&[
        "settings",
        "set",
        "sshd",
        "max-auth-tries=3",
        "client-alive-interval=30",
    ])
    .ok();
    let push = mesh.run(&["push", "node1", "--json"]).ok().json();
    let units = &node_result(&push, "node1")["report"]["units"];
    assert_eq!(units[0]["unit"], "ssh.service", "{units}");
    assert_eq!(units[0]["action"], "reload", "{units}");
    let running = on("node1", "sshd -T");
    assert!(running.contains("maxauthtries 3"), "{running}");
    assert!(running.contains("clientaliveinterval 30"), "{running}");
    assert_eq!(
        invocation("node1", "ssh.service"),
        before,
        "sshd is reloaded, never restarted or stopped"
    );

    // a value sshd cannot read: refused by `sshd -t`, the file put back, sshd not touched
    let file_before = on("node1", "cat /etc/ssh/sshd_config.d/50-mesh.conf");
    mesh.run(&[
        "settings",
        "set",
        "sshd",
        "max-auth-tries=3",
        "client-alive-interval=-5",
    ])
    .ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let report = &node_result(&push, "node1")["report"];
    let failed = report["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|o| o["state"] == "failed"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        failed["id"], "sshd:file:/etc/ssh/sshd_config.d/50-mesh.conf",
        "{report}"
    );
    assert!(
        failed["detail"]
            .as_str()
            .unwrap_or("")
            .contains("`sshd -t` refused"),
        "{failed}"
    );
    assert_eq!(report["units"], serde_json::json!([]), "no unit was paid");
    assert_eq!(
        on("node1", "cat /etc/ssh/sshd_config.d/50-mesh.conf"),
        file_before
    );
    assert_eq!(invocation("node1", "ssh.service"), before);
    assert_eq!(
        on("node1", "systemctl is-active ssh.service").trim(),
        "active"
    );

    mesh.run(&["unassign", "sshd", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on(
            "node1",
            "test -e /etc/ssh/sshd_config.d/50-mesh.conf && echo there || echo gone"
        )
        .trim(),
        "gone"
    );
    assert!(on("node1", "sshd -T").contains("maxauthtries 6"));
}

/// sshd closes its listening socket for a moment each time it re-executes on a reload (one a
/// push just caused, or anyone's): a connection refused then is tried again, not reported
/// unreachable.
#[test]
fn a_check_while_sshd_reloads_gets_in() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        "touch /run/reloading; nohup sh -c 'echo $$ >/run/reloading.pid; \
         while [ -e /run/reloading ]; do systemctl reload ssh.service; sleep 0.1; done' \
         >/dev/null 2>&1 &",
    );
    let failed: Vec<String> = (0..40)
        .map(|_| mesh.run(&["check", "node1"]))
        .filter(|r| r.status != 0)
        .map(|r| r.stdout + &r.stderr)
        .collect();
    // the loop ends before the next test uses the machine
    on("node1", "rm /run/reloading");
    eventually(Duration::from_secs(10), "the reload loop to end", || {
        let ended = "! kill -0 $(cat /run/reloading.pid) 2>/dev/null && systemctl is-active ssh";
        (ssh("node1", ended).status == 0).then_some(())
    });
    assert!(failed.is_empty(), "{failed:#?}");
}
