//! The systemd timer of docs/operating.md, run as written under real systemd: a lab machine is the operator's
//! machine (the `mesh` binary, an `ops` account with its inventory) and pushes to another lab
//! machine. A push that changes nothing puts nothing in the journal; a change puts its lines there;
//! a failed node marks the service failed.

use crate::util::{Mesh, address, lab_state, on, ssh_command};

/// The text of a fenced block of docs/operating.md that starts with `first_line`.
fn readme_block(first_line: &str) -> String {
    let readme = include_str!("../../docs/operating.md");
    let start = readme
        .find(first_line)
        .unwrap_or_else(|| panic!("docs/operating.md has no block starting {first_line:?}"));
    let rest = &readme[start..];
    rest[..rest.find("```").expect("the block ends")].to_string()
}

/// Runs `script` on node1 with `input` on its stdin.
fn on_with_input(script: &str, input: &[u8]) {
    use std::io::Write;
    let mut child = ssh_command("node1", script)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("ssh runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("input sent");
    assert!(child.wait().expect("ssh ends").success(), "{script}");
}

/// Starts the service and waits for it; its status and what this run printed.
fn run_service() -> (bool, String) {
    let ok = crate::util::ssh("node1", "systemctl start mesh-push.service").status == 0;
    let printed = on(
        "node1",
        "id=$(systemctl show -p InvocationID --value mesh-push.service); \
         journalctl -q -o cat _SYSTEMD_INVOCATION_ID=$id _COMM=mesh",
    );
    (ok, printed)
}

#[test]
fn the_readme_timer_pushes_quietly_under_systemd_and_a_failure_fails_the_service() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let binary = std::fs::read(env!("CARGO_BIN_EXE_mesh")).expect("the mesh binary");
    on_with_input(
        "cat > /usr/local/bin/mesh && chmod 0755 /usr/local/bin/mesh",
        &binary,
    );
    let key = std::fs::read(lab_state().join("id_ed25519")).expect("the lab key");
    let node2 = address("node2");
    let known = std::fs::read(lab_state().join("nodes/node2/known_hosts")).expect("known_hosts");
    on(
        "node1",
        "systemctl stop mesh-push.timer mesh-push.service 2>/dev/null; \
         userdel -r ops 2>/dev/null; useradd -m ops && install -d -o ops -m 0700 /home/ops/.ssh",
    );
    on_with_input("install -o ops -m 0600 /dev/stdin /home/ops/.ssh/id", &key);
    on_with_input(
        "install -o ops -m 0600 /dev/stdin /home/ops/.ssh/known_hosts",
        &known,
    );
    let as_ops = |script: &str| {
        on(
            "node1",
            &format!(
                "runuser -u ops -- env MESH_INVENTORY=/home/ops/.local/state/mesh/inventory.db \
                 sh -c '{script}'"
            ),
        )
    };
    as_ops(&format!(
        "mesh init && mesh node add node2 --address {node2} --identity /home/ops/.ssh/id && \
         mesh assign motd node2"
    ));

    on_with_input(
        "cat > /etc/systemd/system/mesh-push.service",
        readme_block("[Unit]\nDescription=mesh: push every node's declaration").as_bytes(),
    );
    on_with_input(
        "cat > /etc/systemd/system/mesh-push.timer",
        readme_block("[Unit]\nDescription=mesh: push every 30 minutes").as_bytes(),
    );
    on(
        "node1",
        "systemctl daemon-reload && systemctl enable --now mesh-push.timer",
    );
    assert!(on("node1", "systemctl list-timers mesh-push.timer").contains("mesh-push.service"));

    // the first run changes node2: its lines are in the journal (whatever earlier tests left
    // there, its motd differs now)
    on("node2", "printf 'before the timer\\n' > /etc/motd");
    let (ok, printed) = run_service();
    assert!(ok, "{printed}");
    assert!(printed.contains("node2: applied"), "{printed}");
    // nothing to change: nothing at all in the journal
    let (ok, printed) = run_service();
    assert!(ok, "{printed}");
    assert_eq!(printed, "", "a no-op run logs nothing");

    // a node that cannot be reached: the service fails and the journal says which
    as_ops("mesh node add gone --address 10.214.254.254 && mesh assign motd gone");
    let (ok, printed) = run_service();
    assert!(!ok, "a failed node fails the service");
    assert!(printed.contains("gone: FAILED"), "{printed}");
    assert!(
        on(
            "node1",
            "systemctl show -p Result --value mesh-push.service"
        )
        .contains("exit-code")
    );
    on(
        "node1",
        "systemctl disable --now mesh-push.timer; systemctl reset-failed mesh-push.service; \
         rm /etc/systemd/system/mesh-push.*; systemctl daemon-reload",
    );
}
