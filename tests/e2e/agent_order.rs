//! Keys offered as OpenSSH offers them: ssh-agent's keys first, in the
//! agent's order, then the key files the agent does not hold, each key once. The agent holds a
//! key the machine does not take, then the node's own key: `-v` shows the agent's other key
//! offered first and the node's key once, accepted (an older mesh offered the file first).

use std::path::Path;
use std::process::{Child, Command};

use crate::openssh::{Openssh, key_file_fingerprint, lab_key};
use crate::util::{Mesh, Run, address, eventually};

/// An ssh-agent on its own socket, ended (by its pid) when dropped.
struct Agent(Child);

impl Agent {
    fn start(socket: &Path) -> Agent {
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(socket)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("ssh-agent runs");
        let agent = Agent(child);
        eventually(
            std::time::Duration::from_secs(5),
            "the agent's socket",
            || socket.exists().then_some(()),
        );
        agent
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ssh-add` of `key` to the agent on `socket`.
fn add(socket: &Path, key: &str) {
    let out = Command::new("ssh-add")
        .arg(key)
        .env("SSH_AUTH_SOCK", socket)
        .output()
        .expect("ssh-add runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_agents_keys_are_offered_first_and_a_key_the_agent_holds_too_only_once() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let dir = tempfile::tempdir().expect("a temp dir");
    let other = dir.path().join("other");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other)
        .status()
        .expect("ssh-keygen runs");
    assert!(made.success());
    let other = other.to_string_lossy().into_owned();
    let socket = dir.path().join("agent.sock");
    let _agent = Agent::start(&socket);
    add(&socket, &other);
    add(&socket, &lab_key());
    let run = Run::from(
        ssh.command(&mesh, &["check", "node1", "-v"])
            .env("SSH_AUTH_SOCK", &socket)
            .output()
            .expect("mesh runs"),
    );
    let (theirs, ours) = (
        key_file_fingerprint(&other),
        key_file_fingerprint(&lab_key()),
    );
    let said = format!("ssh root@{}:22: host key", address("node1"));
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("node1: ") && l.contains(&said))
        .unwrap_or_else(|| panic!("no connection line in:\n{}", run.stderr));
    assert!(
        line.ends_with(&format!(
            "; offered agent {theirs}, {ours}; accepted {ours}"
        )),
        "{line}"
    );
}
