//! Confirm or revert covers the whole push, whatever happens: taking a confirm resource off is
//! confirmed too, a machine rebooted hard during the wait reverts at boot, a revert puts back
//! every resource the push changed (a process too), and a setting shadowed by an earlier file or
//! overridden by a `Match` block is refused rather than reported applied.

use crate::confirm::{DROP_IN, ID, no_waiter, once_reachable, take_sshd_off};
use crate::util::{Mesh, invocation, node_result, on, reboot_hard};

/// A drop-in of the machine's own that sorts after the mesh's: the mesh's values win over it.
const LOCAL: &str = "/etc/ssh/sshd_config.d/60-local.conf";

/// A drop-in that sorts before the mesh's (cloud images ship it): its values win.
const CLOUD: &str = "/etc/ssh/sshd_config.d/50-cloud-init.conf";

/// sshd's main file: its `Include` of the drop-ins stands at its top.
const MAIN: &str = "/etc/ssh/sshd_config";

/// An attacker's drop-in whose `Match` block lets everyone in by password.
const MATCHING: &str = "/etc/ssh/sshd_config.d/10-x.conf";

/// What the mesh installs for a wait, none of which may stay after it.
const WAIT_LEFTOVERS: &str = "ls /etc/systemd/system /etc/systemd/system/multi-user.target.wants \
     | grep -c mesh-revert; ls -A /var/lib/mesh/pending 2>/dev/null | wc -l";

#[test]
fn taking_sshd_off_is_confirmed_too_and_reverted_when_it_locks_the_operator_out() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on("node2", &format!("rm -f {LOCAL} {DROP_IN}"));
    mesh.run(&["assign", "sshd", "node2"]).ok();
    mesh.run(&["push", "node2"]).ok();
    // the machine's own drop-in lets nobody in; the mesh's `AllowUsers *`, read first, wins
    on("node2", &format!("echo 'AllowUsers nobody-here' >{LOCAL}"));
    let before = on("node2", &format!("cat {DROP_IN}"));

    mesh.run(&["unassign", "sshd", "node2"]).ok();
    let plan = mesh.run(&["plan", "node2"]).ok().stdout;
    assert!(
        plan.contains(&format!("needs confirmation: {ID}")),
        "{plan}"
    );
    let push = mesh
        .run(&["--json", "push", "node2", "--confirm-timeout", "10"])
        .code(2)
        .json();
    let node2 = node_result(&push, "node2");
    assert_eq!(node2["outcome"], "reverted", "{node2}");
    // a removal waits as long as it was told to, as a change does
    assert!(
        node2["confirmation"]
            .as_str()
            .is_some_and(|c| c.contains("within 10 s")),
        "{node2}"
    );

    let after = once_reachable("node2", &format!("cat {DROP_IN}"), 25);
    assert_eq!(after, before, "the drop-in is back byte for byte");
    assert!(on("node2", "sshd -T").contains("allowusers *"));
    assert!(no_waiter("node2"));
    let plan = mesh.run(&["plan", "node2"]).ok().stdout;
    assert!(plan.contains(ID), "the removal is still pending: {plan}");

    // without the machine's own drop-in, taking sshd off is confirmed and stays
    on("node2", &format!("rm -f {LOCAL}"));
    let out = mesh
        .run(&["push", "node2", "--confirm-timeout", "10"])
        .ok()
        .stdout;
    assert!(out.contains("  confirmed"), "{out}");
    assert_eq!(
        on(
            "node2",
            &format!("test -e {DROP_IN} && echo there || echo gone")
        )
        .trim(),
        "gone"
    );
    assert!(no_waiter("node2"));
    assert_eq!(
        on("node2", WAIT_LEFTOVERS)
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["0", "0"],
        "nothing mesh installed for the wait stays after a confirmation"
    );
}

#[test]
fn a_machine_rebooted_hard_during_the_wait_reverts_at_boot_and_keeps_nothing_of_the_wait() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on("node3", &format!("rm -f {DROP_IN}"));
    mesh.run(&["assign", "sshd", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    let before = on("node3", &format!("cat {DROP_IN}"));

    // root locked out, and the operator gone before it could confirm
    mesh.run(&["settings", "set", "sshd", "allow-users=nobody-here"])
        .ok();
    let out = mesh
        .command(&["push", "node3", "--confirm-timeout", "600"])
        .env("MESH_TEST_STOP_BEFORE_CONFIRMING", "1")
        .output()
        .expect("mesh runs");
    assert_eq!(out.status.code(), Some(9), "{out:?}");
    // the power goes while the waiter waits: no unit is stopped, nothing runs on the way down
    reboot_hard("node3");

    let after = once_reachable("node3", &format!("cat {DROP_IN}"), 120);
    assert_eq!(
        after, before,
        "the drop-in is back byte for byte after the boot"
    );
    assert!(on("node3", "sshd -T").contains("allowusers *"));
    assert_eq!(
        on("node3", WAIT_LEFTOVERS)
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["0", "0"],
        "nothing mesh installed for the wait is left"
    );
    mesh.run(&["settings", "clear", "sshd"]).ok();
    take_sshd_off(&mesh, &["node3"]);
}

const WORKER: &str = r#"{
  "name": "worker", "version": "1", "description": "A process that says its greeting.",
  "settings": [{"name": "greeting", "type": "string", "meaning": "What it says (at start).", "default": "hello", "cost": "restart"}],
  "resources": [
    {"kind": "process", "name": "main", "description": "says its greeting",
     "command": ["/bin/sh", "run.sh"], "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

/// A process the bad push makes: a revert takes it away again.
const NEWCOMER: &str = r#"{
  "name": "newcomer", "version": "1", "description": "A process that only waits.",
  "resources": [
    {"kind": "process", "name": "main", "description": "waits",
     "command": ["/bin/sh", "run.sh"], "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

/// The resources of a `check --json` answer as the machine's helper judged them.
fn judged(check: &serde_json::Value) -> String {
    let report = &node_result(check, "node1")["report"];
    // what each resource is judged, without the helper's time on it (which differs every run)
    let mut resources = report["resources"].clone();
    for r in resources.as_array_mut().into_iter().flatten() {
        if let Some(r) = r.as_object_mut() {
            r.remove("micros");
        }
    }
    format!("{resources}\n{}", report["units"])
}

#[test]
fn a_revert_puts_back_the_process_the_push_changed_so_the_plan_is_the_plan_before() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // the test's module beside the built-in sshd
    mesh.module(
        "worker",
        WORKER,
        &[(
            "run.sh",
            "echo ${greeting} >/run/mesh-worker\nexec sleep infinity\n",
        )],
    );
    mesh.module("newcomer", NEWCOMER, &[("run.sh", "exec sleep infinity\n")]);
    mesh.run(&["push", "--all"]).ok();
    on("node1", &format!("rm -f {DROP_IN}"));
    mesh.run(&["assign", "sshd", "node1"]).ok();
    mesh.run(&["assign", "worker", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", "cat /run/mesh-worker"), "hello\n");
    let worker = invocation("node1", "worker-main.service");

    mesh.run(&["settings", "set", "worker", "greeting=bonjour"])
        .ok();
    mesh.run(&["settings", "set", "sshd", "allow-users=nobody-here"])
        .ok();
    mesh.run(&["assign", "newcomer", "node1"]).ok();
    let plan_before = mesh.run(&["plan", "node1"]).ok().stdout;
    let check_before = judged(&mesh.run(&["--json", "check", "node1"]).code(4).json());
    let push = mesh
        .run(&["--json", "push", "node1", "--confirm-timeout", "10"])
        .code(2)
        .json();
    assert_eq!(node_result(&push, "node1")["outcome"], "reverted", "{push}");

    // the process is back as it was: its unit, its bundle, running what it ran
    let said = once_reachable("node1", "cat /run/mesh-worker", 25);
    assert_eq!(said, "hello\n");
    assert!(no_waiter("node1"));
    assert_eq!(
        on("node1", "cat /var/lib/mesh/bundles/worker-main/run.sh"),
        "echo hello >/run/mesh-worker\nexec sleep infinity\n"
    );
    // the process the push made is stopped, disabled and gone with its files
    assert_eq!(
        on(
            "node1",
            "systemctl is-active newcomer-main.service; \
             ls /etc/systemd/system /etc/systemd/system/multi-user.target.wants \
             /var/lib/mesh/bundles | grep -c newcomer; true"
        )
        .split_whitespace()
        .collect::<Vec<_>>(),
        ["inactive", "0"]
    );
    let plan_after = mesh.run(&["plan", "node1"]).ok().stdout;
    assert_eq!(plan_after, plan_before);
    let check_after = judged(&mesh.run(&["--json", "check", "node1"]).code(4).json());
    assert_eq!(
        check_after, check_before,
        "the machine is as before the push"
    );

    // the next push does what the plan says: the worker restarts with the new greeting
    mesh.run(&["settings", "clear", "sshd"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", "cat /run/mesh-worker"), "bonjour\n");
    assert_ne!(invocation("node1", "worker-main.service"), worker);
    assert_eq!(
        on("node1", "systemctl is-active newcomer-main.service").trim(),
        "active"
    );
    mesh.run(&["unassign", "worker", "node1"]).ok();
    mesh.run(&["unassign", "newcomer", "node1"]).ok();
    take_sshd_off(&mesh, &["node1"]);
}

#[test]
fn an_sshd_setting_an_earlier_drop_in_shadows_is_refused_naming_both() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        &format!("rm -f {DROP_IN}; echo 'MaxAuthTries 3' >{CLOUD}; systemctl reload ssh"),
    );
    let effective = on("node1", "sshd -T");
    assert!(effective.contains("maxauthtries 3"), "{effective}");

    // the mesh says 6 (its default); sshd would keep the cloud image's 3
    mesh.run(&["assign", "sshd", "node1"]).ok();
    let detail = sshd_refused(&mesh, "node1");
    assert!(detail.contains("MaxAuthTries"), "{detail}");
    assert!(detail.contains(CLOUD), "{detail}");

    // the machine is unchanged
    assert_eq!(
        on(
            "node1",
            &format!("test -e {DROP_IN} && echo there || echo gone")
        )
        .trim(),
        "gone"
    );
    assert_eq!(on("node1", "sshd -T"), effective);

    // a line of sshd_config below its Include adds to the mesh's AllowUsers: named, not "first"
    let last = on(
        "node1",
        &format!(
            "rm -f {CLOUD}; cp {MAIN} {MAIN}.kept; echo 'AllowUsers root' >>{MAIN}; \
             systemctl reload ssh; wc -l <{MAIN}"
        ),
    );
    let detail = sshd_refused(&mesh, "node1");
    // a restart returns once sshd listens again (Type=notify), where a reload returns at once
    let restored = format!("mv {MAIN}.kept {MAIN}; systemctl restart ssh");
    on("node1", &restored);
    assert!(detail.contains("AllowUsers"), "{detail}");
    assert!(
        detail.contains(&format!(
            "{MAIN}:{} also sets it (`AllowUsers root`)",
            last.trim()
        )),
        "{detail}"
    );
    assert!(!detail.contains("first ("), "{detail}");

    take_sshd_off(&mesh, &["node1"]);
}

#[test]
fn an_sshd_setting_a_match_block_overrides_is_refused_naming_the_block() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on(
        "node3",
        &format!(
            "rm -f {DROP_IN}; printf 'Match User *\\nAllowUsers *\\nPasswordAuthentication yes\\n' \
             >{MATCHING}; systemctl reload ssh"
        ),
    );
    let effective = on("node3", "sshd -T");
    let for_eve = on("node3", "sshd -T -C user=eve,host=h,addr=10.0.0.9");
    assert!(for_eve.contains("passwordauthentication yes"), "{for_eve}");

    // `sshd -T` prints the same either way: the block holds only for the connections it matches
    mesh.run(&["assign", "sshd", "node3"]).ok();
    mesh.run(&[
        "settings",
        "set",
        "sshd",
        "allow-users=root",
        "max-auth-tries=4",
        "--node",
        "node3",
    ])
    .ok();
    let detail = sshd_refused(&mesh, "node3");
    assert!(
        detail.contains(&format!("a Match block at {MATCHING}:1 sets ")),
        "{detail}"
    );
    assert!(detail.contains("for some connections"), "{detail}");

    // the machine is unchanged
    assert_eq!(
        on(
            "node3",
            &format!("test -e {DROP_IN} && echo there || echo gone")
        )
        .trim(),
        "gone"
    );
    assert_eq!(on("node3", "sshd -T"), effective);
    assert_eq!(
        on("node3", "sshd -T -C user=eve,host=h,addr=10.0.0.9"),
        for_eve
    );

    on("node3", &format!("rm -f {MATCHING}; systemctl restart ssh"));
    take_sshd_off(&mesh, &["node3"]);
}

/// Pushes to `node`, which must refuse the mesh's sshd drop-in and reload nothing; what it says.
fn sshd_refused(mesh: &Mesh, node: &str) -> String {
    let push = mesh.run(&["--json", "push", node]).code(2).json();
    let result = node_result(&push, node);
    assert_eq!(result["outcome"], "failed", "{result}");
    let resources = result["report"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let refused = resources
        .iter()
        .find(|r| r["id"] == ID)
        .unwrap_or_else(|| panic!("{result}"));
    assert_eq!(refused["state"], "failed", "{refused}");
    assert!(
        result["report"]["units"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{result}"
    );
    refused["detail"].as_str().unwrap_or_default().to_string()
}
