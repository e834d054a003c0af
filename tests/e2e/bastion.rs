//! One login per bastion for a whole push: every node behind a jump host is reached
//! over one connection to it, however many nodes there are, as OpenSSH's ControlMaster would;
//! but only by nodes that would have made that same connection (the same host key checks, the
//! same keys), and a bastion that failed fails the nodes behind it at once, naming the failure.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::openssh::{Openssh, host_key, lab_key, pushed_motd};
use crate::util::{Mesh, address, eventually, node_result, on};

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Sleeps into the next whole second and returns it: journalctl's `--since @S` counts seconds.
fn next_second() -> u64 {
    let s = now() + 1;
    eventually(Duration::from_secs(2), "the next second", || {
        (now() >= s).then_some(s)
    })
}

#[test]
fn nodes_behind_one_jump_host_are_pushed_over_one_login_to_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let behind = ["node2", "node3"];
    for node in behind {
        ssh.run(&mesh, &["node", "set", node, "--jump", "node1"])
            .ok();
        ssh.run(&mesh, &["assign", "motd", node]).ok();
        on(node, "rm -f /etc/motd");
    }
    // the lab machines share this host's clock: the window holds the push's logins only
    let since = next_second();
    let pushed = ssh.run(&mesh, &["push", "node2", "node3", "--json"]).json();
    let until = next_second();
    next_second();
    for node in behind {
        pushed_motd(&pushed, node, node);
    }
    let logins = on(
        "node1",
        &format!(
            "journalctl --since @{since} --until @{until} -o cat | grep -c 'Accepted publickey' || true"
        ),
    );
    assert_eq!(
        logins.trim(),
        "1",
        "logins to the jump host during the push"
    );
    for node in behind {
        ssh.run(&mesh, &["node", "set", node, "--no-jump"]).ok();
    }
}

/// A node whose own known_hosts marks the bastion's key `@revoked` never rides the connection
/// another node opened to the same bastion with a pinned key: it is refused, as it is alone.
#[test]
fn a_node_whose_checks_refuse_the_bastions_key_does_not_ride_another_nodes_connection_to_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let node1 = address("node1");
    let revoked: String = ["ed25519", "ecdsa", "rsa"]
        .iter()
        .map(|kind| format!("@revoked {node1} {}\n", host_key("node1", kind)))
        .collect();
    ssh.write("revoked_hosts", &revoked);
    ssh.write(
        "config",
        &format!(
            "Host bastbad\n  HostName {node1}\n  User root\n  IdentityFile {}\n  \
             UserKnownHostsFile {}\n",
            lab_key(),
            ssh.file("revoked_hosts").display()
        ),
    );
    for (node, jump) in [("node2", "node1"), ("node3", "bastbad")] {
        ssh.run(&mesh, &["node", "set", node, "--jump", jump]).ok();
        ssh.run(&mesh, &["assign", "motd", node]).ok();
    }
    // one at a time, node2 first: the bastion's connection is open and checked when node3 goes
    let pushed = ssh
        .run(
            &mesh,
            &["push", "node2", "node3", "--parallel", "1", "--json"],
        )
        .code(2)
        .json();
    pushed_motd(&pushed, "node2", "node2");
    let node3 = node_result(&pushed, "node3");
    assert_eq!(node3["kind"], "host-key", "{node3}");
    let reason = node3["reason"].to_string();
    assert!(
        reason.contains("through jump host bastbad") && reason.contains("@revoked"),
        "{node3}"
    );
    for node in ["node2", "node3"] {
        ssh.run(&mesh, &["node", "set", node, "--no-jump"]).ok();
    }
}

/// A bastion that does not answer costs one connect timeout for the push, not one per node
/// behind it in turn: the first node says what failed, the others fail at once naming it.
#[test]
fn a_bastion_that_does_not_answer_fails_every_node_behind_it_naming_the_first_failure() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    // an address of the lab's own network that no machine has: a connection there goes unanswered
    let node1 = address("node1");
    let Some((prefix, _)) = node1.rsplit_once('.') else {
        panic!("not an IPv4 address: {node1}");
    };
    ssh.write(
        "config",
        &format!(
            "Host deadhop\n  HostName {prefix}.250\n  User root\n  IdentityFile {}\n",
            lab_key()
        ),
    );
    let behind = ["node1", "node2", "node3"];
    for node in behind {
        ssh.run(&mesh, &["node", "set", node, "--jump", "deadhop"])
            .ok();
        ssh.run(&mesh, &["assign", "motd", node]).ok();
    }
    let pushed = ssh
        .run(
            &mesh,
            &[
                "push",
                "node1",
                "node2",
                "node3",
                "--connect-timeout",
                "3",
                "--json",
            ],
        )
        .code(2)
        .json();
    let reasons: Vec<String> = behind
        .iter()
        .map(|node| node_result(&pushed, node)["reason"].to_string())
        .collect();
    for reason in &reasons {
        assert!(
            // unanswered within 3 s, or "no route to host" once ARP gives up: either way the hop's
            reason.contains("through jump host deadhop")
                && reason.contains(&format!("{prefix}.250:22")),
            "{reason}"
        );
    }
    let earlier = reasons
        .iter()
        .filter(|r| r.contains("for an earlier node of this run"))
        .count();
    assert_eq!(earlier, 2, "one node tried the bastion: {reasons:?}");
    for node in behind {
        ssh.run(&mesh, &["node", "set", node, "--no-jump"]).ok();
    }
}

/// A helper that dies behind a jump host (the test's fault switch: an abort, no exit status)
/// is reported lost, naming the jump host the connection went through, and the next push
/// finishes the node.
#[test]
fn a_helper_lost_behind_a_jump_host_names_the_jump_host_and_the_next_push_finishes() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    ssh.run(&mesh, &["node", "set", "node2", "--jump", "node1"])
        .ok();
    ssh.run(&mesh, &["assign", "motd", "node2"]).ok();
    on("node2", "rm -f /etc/motd");
    on(
        "node2",
        "mkdir -p /var/lib/mesh && echo motd:file:/etc/motd >/var/lib/mesh/fault",
    );
    let lost = ssh.run(&mesh, &["push", "node2"]).code(2);
    assert!(
        lost.stdout.contains(
            "node2: the connection was lost before the helper answered (no exit status; \
             through jump host node1)"
        ),
        "{}",
        lost.stdout
    );
    let pushed = ssh.run(&mesh, &["push", "node2", "--json"]).ok().json();
    pushed_motd(&pushed, "node2", "node2");
    ssh.run(&mesh, &["node", "set", "node2", "--no-jump"]).ok();
}
