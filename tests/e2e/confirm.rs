//! Confirm or revert: a change to sshd is confirmed over a new SSH connection, or the machine
//! puts it back by itself; a revert is a failure (exit 2), kept in the history, and the plan
//! shows the change still pending.

use std::time::Duration;

use crate::util::{Mesh, eventually, node_result, on, ssh, within};

pub(crate) const DROP_IN: &str = "/etc/ssh/sshd_config.d/50-mesh.conf";
pub(crate) const ID: &str = "sshd:file:/etc/ssh/sshd_config.d/50-mesh.conf";

/// What `script` prints on `node` once the machine lets the operator in again, polled for at most
/// `seconds`.
pub(crate) fn once_reachable(node: &str, script: &str, seconds: u64) -> String {
    eventually(
        Duration::from_secs(seconds),
        &format!("{node} to let root in again"),
        || {
            let out = ssh(node, script);
            (out.status == 0).then_some(out.stdout)
        },
    )
}

/// No waiter is left on the machine (it ends a moment after what it did is visible).
pub(crate) fn no_waiter(node: &str) -> bool {
    within(Duration::from_secs(5), || {
        let units = on(
            node,
            "systemctl list-units --all --plain --no-legend 'mesh-confirm-*' | wc -l",
        );
        (units.trim() == "0").then_some(())
    })
    .is_some()
}

pub(crate) fn take_sshd_off(mesh: &Mesh, nodes: &[&str]) {
    for node in nodes {
        mesh.run(&["unassign", "sshd", node]).ok();
    }
    let mut args = vec!["push"];
    args.extend(nodes);
    mesh.run(&args).ok();
}

#[test]
fn an_sshd_change_that_locks_the_operator_out_is_reverted_by_the_machine_and_exits_2() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    locked_out_is_reverted(&mesh);
}

/// The same on Debian 13, whose OpenSSH 10 runs its sessions apart (`sshd-session`) and reloads
/// otherwise than 9.2 does.
#[test]
fn on_debian_13_an_sshd_change_that_locks_the_operator_out_is_reverted() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_release(2, "trixie") else {
        return;
    };
    assert!(on("node1", "ssh -V 2>&1").starts_with("OpenSSH_10"));
    locked_out_is_reverted(&mesh);
}

fn locked_out_is_reverted(mesh: &Mesh) {
    mesh.run(&["push", "--all"]).ok();
    mesh.run(&["assign", "sshd", "node1", "node2"]).ok();
    mesh.run(&["push", "node1", "node2"]).ok();
    let before = on("node1", &format!("cat {DROP_IN}"));

    // node1 would let in only a user that does not exist: root is locked out
    mesh.run(&[
        "settings",
        "set",
        "sshd",
        "--node",
        "node1",
        "allow-users=nobody-here",
    ])
    .ok();
    mesh.run(&[
        "settings",
        "set",
        "sshd",
        "--node",
        "node2",
        "max-auth-tries=5",
    ])
    .ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(
        plan.contains(&format!("needs confirmation: {ID}")),
        "{plan}"
    );
    let planned = mesh.run(&["--json", "plan", "node1"]).ok().json();
    assert_eq!(planned[0]["needs_confirmation"][0], ID, "{planned}");

    let push = mesh
        .run(&[
            "--json",
            "push",
            "node1",
            "node2",
            "--confirm-timeout",
            "10",
        ])
        .code(2)
        .json();
    let node1 = node_result(&push, "node1");
    assert_eq!(node1["outcome"], "reverted", "{node1}");
    let said = node1["confirmation"].as_str().unwrap_or_default();
    assert!(
        said.starts_with("reverted: could not reconnect within 10 s"),
        "{said}"
    );
    // the other node is confirmed on its own
    let node2 = node_result(&push, "node2");
    assert_eq!(node2["outcome"], "applied", "{node2}");
    assert_eq!(node2["confirmation"], "confirmed", "{node2}");

    // the machine puts itself back: root gets in again, the drop-in byte for byte as before
    let after = once_reachable("node1", &format!("cat {DROP_IN}"), 25);
    assert_eq!(after, before);
    assert!(on("node1", "sshd -T").contains("allowusers *"));
    assert!(no_waiter("node1"));
    assert!(on("node2", "sshd -T").contains("maxauthtries 5"));

    let history = mesh.run(&["history", "node1"]).ok().stdout;
    assert!(history.contains("reverted"), "{history}");
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(
        plan.contains(ID),
        "the reverted change is still pending: {plan}"
    );
    let check = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(check.contains(ID), "{check}");

    // the next push says what the machine did
    mesh.run(&["settings", "clear", "sshd", "--node", "node1"])
        .ok();
    let next = mesh.run(&["push", "node1"]).ok().stdout;
    assert!(next.contains("reverted on the machine earlier"), "{next}");
    take_sshd_off(mesh, &["node1", "node2"]);
}

#[test]
fn a_good_sshd_change_is_confirmed_and_stays() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.run(&["assign", "sshd", "node1"]).ok();
    mesh.run(&["settings", "set", "sshd", "max-auth-tries=4"])
        .ok();
    let push = mesh
        .run(&["--json", "push", "node1", "--confirm-timeout", "5"])
        .ok()
        .json();
    let node1 = node_result(&push, "node1");
    assert_eq!(node1["confirmation"], "confirmed", "{node1}");
    assert_eq!(node1["outcome"], "applied", "{node1}");
    mesh.run(&["settings", "set", "sshd", "max-auth-tries=3"])
        .ok();
    let out = mesh
        .run(&["push", "node1", "--confirm-timeout", "5"])
        .ok()
        .stdout;
    assert!(out.contains("  confirmed"), "{out}");
    // past the deadline, it is still there
    std::thread::sleep(Duration::from_secs(8));
    assert!(on("node1", &format!("cat {DROP_IN}")).contains("MaxAuthTries 3"));
    assert!(on("node1", "sshd -T").contains("maxauthtries 3"));
    assert!(no_waiter("node1"));
    assert!(
        mesh.run(&["plan", "node1"])
            .ok()
            .stdout
            .contains("no changes")
    );
    take_sshd_off(&mesh, &["node1"]);
}

/// sshd on node3 with a change awaiting confirmation (`max-auth-tries=2`, its drop-in absent
/// before) whose operator died right after the helper's answer, before it confirmed.
pub(crate) fn unconfirmed_on_node3(mesh: &Mesh, deadline: &str) {
    mesh.run(&["push", "--all"]).ok();
    on("node3", &format!("rm -f {DROP_IN}"));
    mesh.run(&["assign", "sshd", "node3"]).ok();
    mesh.run(&["settings", "set", "sshd", "max-auth-tries=2"])
        .ok();
    let out = mesh
        .command(&["push", "node3", "--confirm-timeout", deadline])
        .env("MESH_TEST_STOP_BEFORE_CONFIRMING", "1")
        .output()
        .expect("mesh runs");
    assert_eq!(out.status.code(), Some(9), "{out:?}");
    assert!(on("node3", &format!("cat {DROP_IN}")).contains("MaxAuthTries 2"));
}

/// Waits until node3's drop-in is gone again (it was not there before), as sshd had it.
pub(crate) fn reverted_on_node3_within(within: Duration, why: &str) {
    // sshd reloads as the change is reverted: a refused login is "not yet"
    eventually(within, why, || {
        let there = ssh("node3", &format!("test ! -e {DROP_IN}"));
        (there.status == 0).then_some(())
    });
    assert!(on("node3", "sshd -T").contains("maxauthtries 6"));
    assert!(no_waiter("node3"));
}

#[test]
fn a_machine_whose_operator_is_gone_during_the_wait_reverts_by_itself() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    unconfirmed_on_node3(&mesh, "8");
    // nobody confirms: the drop-in goes again, as it was not there
    reverted_on_node3_within(
        Duration::from_secs(8 + 15),
        "node3 did not revert by itself",
    );
    let record = on("node3", "cat /var/lib/mesh/record.json");
    assert!(!record.contains(DROP_IN), "{record}");
    // the next check reports the revert, and the change is still to be made
    let check = mesh.run(&["check", "node3"]).code(4).stdout;
    assert!(check.contains("reverted on the machine earlier"), "{check}");
    assert!(check.contains(ID), "{check}");
    take_sshd_off(&mesh, &["node3"]);
}

/// The waiter killed before its deadline (by hand, the OOM killer, a shutdown stopping it) does
/// not leave the change in place for ever: systemd runs the revert as the waiter's unit stops.
#[test]
fn a_waiter_killed_before_its_deadline_reverts_the_change_at_once() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    unconfirmed_on_node3(&mesh, "600");
    on("node3", "systemctl kill -s KILL 'mesh-confirm-*.service'");
    reverted_on_node3_within(
        Duration::from_secs(20),
        "a killed waiter left the change in place (its deadline is 600 s away)",
    );
    // a deadline beyond an hour is refused before anything is sent
    mesh.run(&["push", "node3", "--confirm-timeout", "99999999999"])
        .code(64);
    take_sshd_off(&mesh, &["node3"]);
}

#[test]
fn a_helper_that_dies_right_after_changing_sshd_is_reverted_by_its_waiter_at_once() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.run(&["assign", "sshd", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    let before = on("node3", &format!("cat {DROP_IN}"));
    mesh.run(&[
        "settings",
        "set",
        "sshd",
        "--node",
        "node3",
        "allow-users=nobody-here",
    ])
    .ok();
    // the helper dies right after it wrote the drop-in (the OOM killer, a kill): nothing of it
    // answers, and the next reload of sshd by anyone would lock the operator out
    on("node3", &format!("echo '{ID}' > /var/lib/mesh/fault"));
    mesh.run(&["push", "node3", "--confirm-timeout", "600"])
        .code(2);
    eventually(
        Duration::from_secs(30),
        "the drop-in a dead helper wrote to be put back (its deadline is 600 s)",
        || (on("node3", &format!("cat {DROP_IN}")) == before).then_some(()),
    );
    assert!(no_waiter("node3"));
    assert_eq!(
        on("node3", "ls -A /var/lib/mesh/pending 2>/dev/null | wc -l").trim(),
        "0",
        "nothing of the wait stays"
    );
    mesh.run(&["settings", "clear", "sshd", "--node", "node3"])
        .ok();
    take_sshd_off(&mesh, &["node3"]);
}
