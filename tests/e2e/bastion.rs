//! One login per bastion for a whole push (issue 25): every node behind a jump host is reached
//! over one connection to it, however many nodes there are, as OpenSSH's ControlMaster would.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::openssh::{Openssh, pushed_motd};
use crate::util::{Mesh, eventually, on};

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
