//! `Match` as OpenSSH evaluates it: a configuration whose `Match
//! originalhost` sets the User and whose `Match host … user …`, after the `Host` block that sets
//! the HostName, sets the Port. mesh reaches the machine, port and user `ssh` reaches with the
//! same file; an older mesh skipped every `Match` and went to the `Host *` port, where nothing
//! listens.

use std::process::Command;

use crate::openssh::{Openssh, SecondSshd, host_key, lab_key, pushed_motd};
use crate::util::{Mesh, address};

#[test]
fn match_blocks_set_the_port_and_user_mesh_and_ssh_reach_alike() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let _sshd = SecondSshd::new("node1");
    let ssh = Openssh::new();
    let node1 = address("node1");
    ssh.write(
        "config",
        &format!(
            "Match originalhost WEB-M\n  User root\n\
             Host web-m\n  HostName {node1}\n  IdentityFile {}\n  IdentitiesOnly yes\n\
             Match host {node1},!192.0.2.* user root\n  Port 2222\n\
             Host *\n  Port 2\n  User nobody\n",
            lab_key()
        ),
    );
    ssh.write(
        "known_hosts",
        &format!("[{node1}]:2222 {}\n", host_key("node1", "ed25519")),
    );
    // what ssh itself reaches with this file: the server's port and the user logged in as
    let out = Command::new("ssh")
        .arg("-F")
        .arg(ssh.file("config"))
        .arg("-o")
        .arg(format!(
            "UserKnownHostsFile={}",
            ssh.file("known_hosts").display()
        ))
        .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=5"])
        .args(["web-m", "echo $SSH_CONNECTION; id -un"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ssh runs");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let words: Vec<&str> = said.split_whitespace().collect();
    assert_eq!(
        words.get(2..),
        Some(&[node1.as_str(), "2222", "root"][..]),
        "ssh: {said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    mesh.run(&["node", "remove", "node1"]).ok();
    ssh.run(&mesh, &["node", "add", "web", "--address", "web-m"])
        .ok();
    let shown = ssh
        .run(&mesh, &["node", "show", "web", "--json"])
        .ok()
        .json();
    let config = ssh.file("config");
    let at = |line: usize| format!("ssh_config:{}:{line}", config.display());
    let resolved = &shown["resolved"];
    assert_eq!(resolved["port"]["value"], 2222, "{shown}");
    assert_eq!(resolved["port"]["source"], at(8), "{shown}");
    assert_eq!(resolved["user"]["value"], "root", "{shown}");
    assert_eq!(resolved["user"]["source"], at(2), "{shown}");
    assert_eq!(resolved["hostname"]["value"], node1.as_str(), "{shown}");
    ssh.run(&mesh, &["assign", "motd", "web"]).ok();
    let pushed = ssh.run(&mesh, &["push", "web", "--json"]).ok().json();
    pushed_motd(&pushed, "web", "node1");
}
