//! The ssh configuration's own known_hosts files and HostKeyAlias: a node whose key
//! is recorded only in a UserKnownHostsFile that is not `~/.ssh/known_hosts`, under its
//! HostKeyAlias, is accepted or refused by mesh exactly as `ssh -o BatchMode=yes` accepts or
//! refuses it with the same files.

use std::process::Command;

use crate::openssh::{Openssh, host_key, lab_key, pushed_motd};
use crate::util::{Mesh, Run, address, node_result, path_str};

/// `ssh -F ~/.ssh/config HOST hostname`: the configuration alone decides the known_hosts files.
fn ssh_reaches(ssh: &Openssh, host: &str) -> Run {
    let out = Command::new("ssh")
        .arg("-F")
        .arg(ssh.file("config"))
        .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=5"])
        .args([host, "hostname"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ssh runs");
    Run::from(out)
}

/// Whether mesh refused node3's host key.
fn refused(run: Run) -> bool {
    let out = run.json();
    let result = node_result(&out, "node3");
    result["outcome"] == "failed" && result["kind"] == "host-key"
}

#[test]
fn a_user_known_hosts_file_and_host_key_alias_decide_the_key_as_ssh_decides_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let node3 = address("node3");
    let fleet = ssh.file("fleet_hosts");
    ssh.write(
        "config",
        &format!(
            "Host far3\n  HostName {node3}\n  User root\n  IdentityFile {}\n  \
             UserKnownHostsFile /dev/null {}\n  GlobalKnownHostsFile /dev/null\n  \
             HostKeyAlias Fleet-Node3\n  StrictHostKeyChecking yes\n",
            lab_key(),
            path_str(&fleet)
        ),
    );
    // the right key under the address in ~/.ssh/known_hosts: neither ssh nor mesh reads it
    ssh.write(
        "known_hosts",
        &format!("{node3} {}\n", host_key("node3", "ed25519")),
    );
    mesh.run(&["node", "remove", "node3"]).ok();
    ssh.run(&mesh, &["node", "add", "node3", "--address", "far3"])
        .ok();
    ssh.run(&mesh, &["assign", "motd", "node3"]).ok();
    for (line, accepted) in [
        (
            format!("fleet-node3 {}\n", host_key("node3", "ed25519")),
            true,
        ),
        (format!("{node3} {}\n", host_key("node3", "ed25519")), false),
        (
            format!("fleet-node3 {}\n", host_key("node1", "ed25519")),
            false,
        ),
    ] {
        ssh.write("fleet_hosts", &line);
        let by_ssh = ssh_reaches(&ssh, "far3");
        let pushed = ssh.run(&mesh, &["push", "node3", "--json"]);
        assert_eq!(by_ssh.status == 0, accepted, "{line}: {}", by_ssh.stderr);
        if accepted {
            assert_eq!(by_ssh.stdout.trim(), "node3");
            pushed_motd(&pushed.json(), "node3", "node3");
        } else {
            assert!(refused(pushed), "{line}");
        }
    }
    let shown = ssh
        .run(&mesh, &["node", "show", "node3", "--json"])
        .ok()
        .json();
    let text = shown.to_string();
    assert!(text.contains(path_str(&fleet)), "{text}");
    assert!(
        text.contains("fleet-node3") && text.contains("ssh_config:"),
        "{text}"
    );
}
