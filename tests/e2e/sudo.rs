//! A machine reached as it is in a real fleet: a login that is not root, with passwordless sudo
//! (`meshop ALL=(root) NOPASSWD: ALL`: the helper runs as root through `sudo -n sh -c`), through
//! a bastion. The push writes as root; without the sudoers line it fails, naming sudo, and
//! writes nothing.

use crate::util::{Mesh, address, host_fingerprint, lab_state, node_result, on, ssh_command};

const NODE: &str = "node2";

/// Debian's sudo package for the lab's release, downloaded here: the lab has no route out, and
/// its image has no sudo.
fn sudo_deb(dir: &std::path::Path) -> std::path::PathBuf {
    let download = || {
        std::process::Command::new("apt-get")
            .args(["download", "-q", "sudo"])
            .current_dir(dir)
            .output()
            .unwrap()
    };
    let mut got = download();
    if !got.status.success() {
        // a fresh host may have no package lists yet
        let _ = std::process::Command::new("apt-get")
            .args(["update", "-q"])
            .stdin(std::process::Stdio::null())
            .output();
        got = download();
    }
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .unwrap()
}

#[test]
fn a_push_through_a_bastion_as_a_user_with_passwordless_sudo_writes_as_root() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(2) else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    let dir = tempfile::tempdir().unwrap();
    let deb = sudo_deb(dir.path());
    let copied = ssh_command(NODE, "cat > /tmp/sudo.deb")
        .stdin(std::fs::File::open(&deb).unwrap())
        .status()
        .unwrap();
    assert!(copied.success());
    let public = std::fs::read_to_string(lab_state().join("id_ed25519.pub")).unwrap();
    on(
        NODE,
        &format!(
            "set -e; dpkg -i /tmp/sudo.deb >/dev/null; rm /tmp/sudo.deb; \
             userdel -r meshop 2>/dev/null || true; useradd -m -s /bin/sh meshop; \
             install -d -m 700 -o meshop -g meshop ~meshop/.ssh; \
             printf '%s\\n' '{}' > ~meshop/.ssh/authorized_keys; \
             chown meshop:meshop ~meshop/.ssh/authorized_keys; chmod 600 ~meshop/.ssh/authorized_keys; \
             echo 'meshop ALL=(root) NOPASSWD: ALL' > /etc/sudoers.d/meshop; chmod 440 /etc/sudoers.d/meshop; \
             rm -f /etc/motd",
            public.trim()
        ),
    );
    // one machine is one node: the lab's own entry goes, the operator's comes
    mesh.run(&["node", "remove", NODE]).ok();
    let key = lab_state().join("id_ed25519");
    mesh.run(&[
        "node",
        "add",
        "web2",
        "--address",
        &address(NODE),
        "--user",
        "meshop",
        "--sudo",
        "--identity",
        key.to_str().unwrap(),
        "--jump",
        "node1",
    ])
    .ok();
    mesh.run(&[
        "node",
        "trust",
        "web2",
        "--fingerprint",
        &host_fingerprint(NODE),
    ])
    .ok();
    mesh.run(&["assign", "motd", "web2"]).ok();
    let push = mesh.run(&["push", "web2"]).ok();
    assert!(push.stdout.contains("web2: applied"), "{}", push.stdout);
    assert_eq!(on(NODE, "stat -c %U /etc/motd"), "root\n");
    assert!(on(NODE, "cat /etc/motd").contains("managed by mesh"));

    // no sudoers line: refused by sudo, said so, nothing written
    on(NODE, "rm /etc/sudoers.d/meshop");
    mesh.run(&["settings", "set", "motd", "contact=the night shift"])
        .ok();
    let refused = mesh.run(&["push", "web2", "--json"]).code(2).json();
    let said = node_result(&refused, "web2").to_string();
    assert!(said.contains("sudo"), "{said}");
    assert!(!on(NODE, "cat /etc/motd").contains("night shift"));

    on(
        NODE,
        "echo 'meshop ALL=(root) NOPASSWD: ALL' > /etc/sudoers.d/meshop; chmod 440 /etc/sudoers.d/meshop",
    );
    mesh.run(&["unassign", "motd", "web2"]).ok();
    mesh.run(&["push", "web2"]).ok();
    on(
        NODE,
        "rm -f /etc/sudoers.d/meshop; userdel -r meshop 2>/dev/null; dpkg -P sudo >/dev/null; true",
    );
}
