//! Confirm or revert at the edges: a machine the mesh never touched takes its first confirmed
//! change, a revert brings back a daemon the change had killed, and two operators pushing one
//! machine at once never undo each other's confirmed change nor confirm a lock-out.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::confirm::{DROP_IN, no_waiter, once_reachable, take_sshd_off};
use crate::util::{Mesh, node_result, on, rebuild};

#[test]
fn a_fresh_machines_first_push_of_sshd_is_confirmed_and_the_next_is_a_no_op() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // a blank disk: no helper, no record, nothing of the mesh (other tests pushed to node1)
    rebuild(&mesh, "node1");
    mesh.run(&["assign", "sshd", "node1"]).ok();
    let first = mesh
        .run(&["--json", "push", "node1", "--confirm-timeout", "10"])
        .ok()
        .json();
    let node1 = node_result(&first, "node1");
    assert_eq!(node1["outcome"], "applied", "{node1}");
    assert_eq!(node1["confirmation"], "confirmed", "{node1}");
    assert!(on("node1", "sshd -T").contains("maxauthtries 6"));
    assert!(no_waiter("node1"));

    let again = mesh.run(&["--json", "push", "node1"]).ok().json();
    let node1 = node_result(&again, "node1");
    assert_eq!(node1["outcome"], "applied", "{node1}");
    assert!(
        node1["confirmation"].is_null(),
        "nothing to confirm: {node1}"
    );
    let states: Vec<&str> = node1["report"]["resources"]
        .as_array()
        .map(|r| r.iter().filter_map(|o| o["state"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(states, ["unchanged"], "{node1}");
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(plan.contains("no changes"), "{plan}");
    take_sshd_off(&mesh, &["node1"]);
}

/// A drop-in `sshd -t` accepts but that makes sshd exit when it reloads: the address is not
/// the machine's, so sshd cannot bind and nothing listens.
const LISTEN: &str = r#"{
  "name": "listen", "version": "1", "description": "sshd listens on one address only.",
  "settings": [{"name": "address", "type": "line", "meaning": "The address.", "default": "10.99.99.99", "cost": "reload"}],
  "resources": [
    {"kind": "file", "path": "/etc/ssh/sshd_config.d/40-listen.conf", "mode": "0644",
     "template": "40-listen.conf", "cost": "reload", "units": ["ssh.service"],
     "validate": ["sshd", "-t"], "confirm": true}
  ]
}"#;

#[test]
fn a_revert_after_a_change_that_killed_sshd_starts_it_again_and_says_so() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module(
        "listen",
        LISTEN,
        &[("40-listen.conf", "ListenAddress ${address}\n")],
    );
    mesh.run(&["push", "--all"]).ok();
    assert_eq!(
        on("node2", "systemctl is-active ssh.service").trim(),
        "active"
    );
    mesh.run(&["assign", "listen", "node2"]).ok();
    let push = mesh
        .run(&["--json", "push", "node2", "--confirm-timeout", "10"])
        .code(2)
        .json();
    let node2 = node_result(&push, "node2");
    assert_eq!(node2["outcome"], "reverted", "{node2}");

    // nobody touches the machine: it lets the operator in again by itself
    let ended = Instant::now();
    once_reachable("node2", "true", 30);
    assert!(ended.elapsed() < Duration::from_secs(30));
    assert_eq!(
        on("node2", "systemctl is-active ssh.service").trim(),
        "active"
    );
    assert_eq!(
        on(
            "node2",
            "test -e /etc/ssh/sshd_config.d/40-listen.conf && echo there || echo gone"
        )
        .trim(),
        "gone"
    );
    assert!(no_waiter("node2"));
    // what the machine did is said: the unit was started again
    let check = mesh.run(&["check", "node2"]).code(4).stdout;
    assert!(check.contains("reverted on the machine earlier"), "{check}");
    assert!(check.contains("ssh.service: started again"), "{check}");
    assert!(!check.contains("NOT put back"), "{check}");

    mesh.run(&["unassign", "listen", "node2"]).ok();
    mesh.run(&["push", "node2"]).ok();
}

/// What `plan --json` says would change on `node`, as `check --json` says it: (resource,
/// action) and (unit, action).
fn planned(mesh: &Mesh, node: &str) -> BTreeSet<String> {
    let plan = mesh.run(&["--json", "plan", node]).json();
    let plan = node_result(&plan, node);
    let mut said = BTreeSet::new();
    for change in plan["changes"].as_array().into_iter().flatten() {
        let action = match change["action"].as_str() {
            Some("added") => "created",
            other => other.unwrap_or_default(),
        };
        said.insert(format!("{} {action}", change["id"]));
    }
    for unit in plan["units"].as_array().into_iter().flatten() {
        said.insert(format!("{} {}", unit["unit"], unit["action"]));
    }
    said
}

/// What the machine says (`check --json`) would change on `node`, in `planned`'s words.
fn checked(mesh: &Mesh, node: &str) -> BTreeSet<String> {
    let check = mesh.run(&["--json", "check", node]).json();
    let report = &node_result(&check, node)["report"];
    let mut said = BTreeSet::new();
    for outcome in report["resources"].as_array().into_iter().flatten() {
        if outcome["state"] != "unchanged" {
            said.insert(format!(
                "{} {}",
                outcome["id"],
                outcome["state"].as_str().unwrap_or_default()
            ));
        }
    }
    for unit in report["units"].as_array().into_iter().flatten() {
        said.insert(format!("{} {}", unit["unit"], unit["action"]));
    }
    said
}

/// Starts `mesh --json push node1` of `mesh` after `delay`.
pub fn push_after(
    mesh: &Mesh,
    delay: Duration,
    timeout: &'static str,
) -> std::thread::JoinHandle<serde_json::Value> {
    let mut command = mesh.command(&["--json", "push", "node1", "--confirm-timeout", timeout]);
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let out = command.output().expect("mesh runs");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    })
}

#[test]
fn two_inventories_racing_on_one_machine_never_undo_a_confirmed_change_nor_confirm_a_lock_out() {
    let a = Mesh::new();
    let Some(_machines) = a.with_lab() else {
        return;
    };
    a.run(&["push", "--all"]).ok();
    // B: a second operator's inventory with the same machines (the lab is up: no boot)
    let b = Mesh::new();
    b.run(&["lab", "up", "3"]).ok();
    for mesh in [&a, &b] {
        mesh.run(&["assign", "sshd", "node1"]).ok();
        mesh.run(&["push", "node1"]).ok();
    }
    // B's change locks every operator out (root may no longer log in): it must revert
    b.run(&["settings", "set", "sshd", "allow-users=nobody-here"])
        .ok();

    let mut kept = "MaxAuthTries 6".to_string();
    let (mut a_confirmed, mut b_reverted) = (0, 0);
    for race in 0..20u64 {
        // A's change is good and always a new one
        let tries = 3 + race;
        a.run(&[
            "settings",
            "set",
            "sshd",
            &format!("max-auth-tries={tries}"),
        ])
        .ok();
        // who starts first alternates, the other a little later or at once
        let lag = Duration::from_millis((race * 53) % 250);
        let (a_delay, b_delay) = if race % 2 == 0 {
            (lag, Duration::ZERO)
        } else {
            (Duration::ZERO, lag)
        };
        let pushed_a = push_after(&a, a_delay, "10");
        let pushed_b = push_after(&b, b_delay, "3");
        let (pushed_a, pushed_b) = (
            pushed_a.join().expect("A's push"),
            pushed_b.join().expect("B's push"),
        );
        let (node_a, node_b) = (
            node_result(&pushed_a, "node1"),
            node_result(&pushed_b, "node1"),
        );
        assert_ne!(
            node_b["confirmation"], "confirmed",
            "race {race}: B's lock-out was reported confirmed\nA: {node_a}\nB: {node_b}"
        );
        if node_a["confirmation"] == "confirmed" {
            kept = format!("MaxAuthTries {tries}");
            a_confirmed += 1;
        }
        if node_b["outcome"] == "reverted" {
            b_reverted += 1;
        }
        // once B's change is put back, the machine has A's last confirmed change
        let now = once_reachable("node1", &format!("cat {DROP_IN}"), 30);
        assert!(no_waiter("node1"), "race {race}");
        assert!(
            now.contains(&format!("{kept}\n")) && now.contains("AllowUsers *\n"),
            "race {race}: A's confirmed change ({kept}) was undone: {now}\nA: {node_a}\nB: {node_b}"
        );
        for (name, mesh) in [("A", &a), ("B", &b)] {
            assert_eq!(
                planned(mesh, "node1"),
                checked(mesh, "node1"),
                "race {race}: {name}'s plan is not what the machine has\nA: {node_a}\nB: {node_b}"
            );
        }
    }
    println!("20 races: A confirmed {a_confirmed}, B reverted {b_reverted}");
    assert!(
        a_confirmed > 0 && b_reverted > 0,
        "both sides won a race: A confirmed {a_confirmed}, B reverted {b_reverted}"
    );
    assert!(on("node1", "sshd -T").contains(&kept.to_lowercase()));
    b.run(&["settings", "clear", "sshd"]).ok();
    a.run(&["settings", "clear", "sshd"]).ok();
    take_sshd_off(&a, &["node1"]);
}
