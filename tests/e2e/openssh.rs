//! Reaching machines as OpenSSH does (issue 12, items 1 and 2): a Host alias of the ssh
//! configuration with its own port, user and key; a machine the host cannot reach, reached
//! through another lab machine as jump host (`--jump`, and ProxyJump from the configuration); a
//! jump host whose key is wrong refused naming the hop; known_hosts read as OpenSSH reads it
//! (the system file, hashed names, `[addr]:port`, an ECDSA-only entry, a changed key).
//!
//! Every command runs with its own HOME (so `~/.ssh/config` and `~/.ssh/known_hosts` are the
//! test's) and its own system files.

use std::path::PathBuf;
use std::process::Command;

use crate::util::{Mesh, Run, address, lab_state, node_result, on, path_str};

/// The operator's side of one test: a HOME with `.ssh/`, and the system files.
struct Openssh {
    home: tempfile::TempDir,
}

impl Openssh {
    fn new() -> Openssh {
        let home = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(home.path().join(".ssh")).expect(".ssh");
        Openssh { home }
    }
    fn file(&self, name: &str) -> PathBuf {
        self.home.path().join(".ssh").join(name)
    }
    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.file(name), text).expect("write an ssh file");
    }
    fn run(&self, mesh: &Mesh, args: &[&str]) -> Run {
        let out = mesh
            .command(args)
            .env("HOME", self.home.path())
            .env("MESH_SSH_SYSTEM_CONFIG", self.file("system_config"))
            .env(
                "MESH_SSH_SYSTEM_KNOWN_HOSTS",
                self.file("system_known_hosts"),
            )
            .output()
            .expect("mesh runs");
        Run::from(out)
    }
}

fn lab_key() -> String {
    path_str(&lab_state().join("id_ed25519")).to_string()
}

/// A host key of a lab machine, `type base64`.
fn host_key(node: &str, kind: &str) -> String {
    let line = on(node, &format!("cat /etc/ssh/ssh_host_{kind}_key.pub"));
    line.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

fn fingerprint(key: &str) -> String {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("k.pub");
    std::fs::write(&file, format!("{key}\n")).expect("key file");
    let out = Command::new("ssh-keygen")
        .arg("-lf")
        .arg(&file)
        .output()
        .expect("ssh-keygen runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .expect("a fingerprint")
        .to_string()
}

/// A host route that drops everything this host sends to `node`, taken away when dropped
/// (even when the test fails), so the machine is reachable only through another one.
struct Blackhole(String);

impl Blackhole {
    fn new(node: &str) -> Blackhole {
        let addr = format!("{}/32", address(node));
        let ok = Command::new("ip")
            .args(["route", "add", "blackhole", &addr])
            .status()
            .expect("ip runs")
            .success();
        assert!(ok, "ip route add blackhole {addr}");
        Blackhole(addr)
    }
}

impl Drop for Blackhole {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["route", "del", "blackhole", &self.0])
            .status();
    }
}

/// A second sshd on port 2222 of a lab machine (the same host keys), stopped when dropped.
struct SecondSshd(&'static str);

impl SecondSshd {
    fn new(node: &'static str) -> SecondSshd {
        on(
            node,
            "/usr/sbin/sshd -p 2222 -o PidFile=/run/sshd-2222.pid && sleep 0.5",
        );
        SecondSshd(node)
    }
}

impl Drop for SecondSshd {
    fn drop(&mut self) {
        let _ = crate::util::ssh(self.0, "kill $(cat /run/sshd-2222.pid)");
    }
}

/// What the built-in motd module writes.
const MOTD: &str = "This machine is managed by mesh: changes made by hand may be undone.\nContact: the operators\n";

/// `node` was applied, and the machine has the motd.
fn pushed_motd(pushed: &serde_json::Value, node: &str, machine: &str) {
    assert_eq!(node_result(pushed, node)["outcome"], "applied", "{pushed}");
    assert_eq!(on(machine, "cat /etc/motd"), MOTD);
}

#[test]
fn a_node_added_by_an_ssh_config_alias_is_pushed_with_its_own_port_user_and_key() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    let _sshd = SecondSshd::new("node1");
    let ssh = Openssh::new();
    let node1 = address("node1");
    // the user's file comes first; the system's later Port and User must not win
    ssh.write(
        "config",
        &format!(
            "Host web-alias\n  HostName {node1}\n  Port 2222\n  User root\n  IdentityFile {}\n  IdentitiesOnly yes\n\
             Host nobody-alias\n  HostName {node1}\n  User nobody\n  IdentityFile {}\n",
            lab_key(),
            lab_key()
        ),
    );
    ssh.write("system_config", "Host *\n  Port 2\n  User nobody\n");
    ssh.write(
        "known_hosts",
        &format!("[{node1}]:2222 {}\n", host_key("node1", "ed25519")),
    );
    mesh.run(&["node", "remove", "node1"]).ok();
    ssh.run(&mesh, &["node", "add", "web", "--address", "web-alias"])
        .ok();
    ssh.run(&mesh, &["assign", "motd", "web"]).ok();
    let pushed = ssh.run(&mesh, &["push", "web", "--json"]).ok().json();
    pushed_motd(&pushed, "web", "node1");
    // the configuration's User is the one logged in as (and the inventory's --port wins); web
    // goes first, as one machine is one node
    ssh.run(&mesh, &["node", "remove", "web"]).ok();
    ssh.run(
        &mesh,
        &[
            "node",
            "add",
            "other",
            "--address",
            "nobody-alias",
            "--port",
            "2222",
            "--sudo",
        ],
    )
    .ok();
    let refused = ssh.run(&mesh, &["push", "other", "--json"]).code(2).json();
    let reason = node_result(&refused, "other")["reason"].to_string();
    assert!(reason.contains(&format!("nobody@{node1}")), "{reason}");
}

#[test]
fn a_node_the_host_cannot_reach_is_pushed_through_another_lab_machine_given_with_jump() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    let ssh = Openssh::new();
    ssh.run(&mesh, &["assign", "motd", "node2"]).ok();
    on("node2", "rm -f /etc/motd");
    let pinned = fingerprint(&host_key("node2", "ed25519"));
    let pushed = {
        let _cut = Blackhole::new("node2");
        let direct = ssh
            .run(
                &mesh,
                &["push", "node2", "--connect-timeout", "3", "--json"],
            )
            .code(2)
            .json();
        assert_eq!(
            node_result(&direct, "node2")["kind"],
            "unreachable",
            "{direct}"
        );
        ssh.run(&mesh, &["node", "set", "node2", "--jump", "node1"])
            .ok();
        let shown = ssh.run(&mesh, &["node", "show", "node2"]).ok().stdout;
        let via = format!("via root@{}:22", address("node1"));
        assert!(
            shown.contains("jump:      node1") && shown.contains(&via),
            "{shown}"
        );
        // its key is scanned through the jump host too
        ssh.run(&mesh, &["node", "trust", "node2", "--fingerprint", &pinned])
            .ok();
        ssh.run(&mesh, &["push", "node2", "--json"]).json()
    };
    pushed_motd(&pushed, "node2", "node2");
    ssh.run(&mesh, &["node", "set", "node2", "--no-jump"]).ok();
}

#[test]
fn a_proxyjump_chain_from_the_ssh_config_reaches_a_node_the_host_cannot() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    let ssh = Openssh::new();
    let (node1, node3) = (address("node1"), address("node3"));
    let node2 = address("node2");
    // node3 is behind node2, itself behind node1; both hops, named by their addresses, are the
    // inventory's nodes (pinned keys)
    ssh.write(
        "config",
        &format!("Host {node3}\n  ProxyJump root@{node1}:22,{node2}\n"),
    );
    ssh.run(&mesh, &["assign", "motd", "node3"]).ok();
    on("node3", "rm -f /etc/motd");
    let pushed = {
        let _cut = (Blackhole::new("node2"), Blackhole::new("node3"));
        ssh.run(&mesh, &["push", "node3", "--json"]).json()
    };
    pushed_motd(&pushed, "node3", "node3");
}

#[test]
fn a_jump_host_whose_key_is_not_the_recorded_one_is_refused_naming_the_hop() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    let ssh = Openssh::new();
    let node1 = address("node1");
    // jumpbox is no node: known_hosts decides its key, and it records another machine's
    let recorded = host_key("node3", "ed25519");
    let offered = host_key("node1", "ed25519");
    ssh.write(
        "config",
        &format!(
            "Host jumpbox\n  HostName {node1}\n  User root\n  IdentityFile {}\n",
            lab_key()
        ),
    );
    ssh.write("known_hosts", &format!("{node1} {recorded}\n"));
    ssh.run(&mesh, &["node", "set", "node2", "--jump", "jumpbox"])
        .ok();
    let run = ssh.run(&mesh, &["push", "node2", "--json"]);
    let reason = refused_as_changed(run, "node2", &recorded, &offered);
    assert!(reason.contains("jump host jumpbox"), "{reason}");
}

/// The push refused `node` as a changed host key naming both keys' fingerprints; its reason.
fn refused_as_changed(run: Run, node: &str, recorded: &str, offered: &str) -> String {
    let refused = node_result(&run.code(2).json(), node).clone();
    assert_eq!(refused["kind"], "host-key", "{refused}");
    let reason = refused["reason"].as_str().unwrap_or_default().to_string();
    for want in [
        "REMOTE HOST IDENTIFICATION HAS CHANGED",
        &fingerprint(recorded),
        &fingerprint(offered),
    ] {
        assert!(reason.contains(want), "{want:?} in: {reason}");
    }
    reason
}

/// node3 unpinned, so known_hosts decides; its identity stays the lab key.
fn unpinned_node3(mesh: &Mesh, ssh: &Openssh, port: &str) {
    mesh.run(&["node", "remove", "node3"]).ok();
    let key = lab_key();
    let node3 = address("node3");
    ssh.run(
        mesh,
        &[
            "node",
            "add",
            "node3",
            "--address",
            &node3,
            "--port",
            port,
            "--identity",
            &key,
        ],
    )
    .ok();
    ssh.run(mesh, &["assign", "motd", "node3"]).ok();
}

#[test]
fn known_hosts_is_read_from_the_system_file_with_hashed_names() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    let ssh = Openssh::new();
    unpinned_node3(&mesh, &ssh, "22");
    let node3 = address("node3");
    ssh.write(
        "system_known_hosts",
        &format!("# fleet\n{node3} {}\n", host_key("node3", "ed25519")),
    );
    let hashed = Command::new("ssh-keygen")
        .arg("-H")
        .arg("-f")
        .arg(ssh.file("system_known_hosts"))
        .output()
        .expect("ssh-keygen runs");
    assert!(hashed.status.success());
    let text = std::fs::read_to_string(ssh.file("system_known_hosts")).expect("hashed file");
    assert!(text.contains("|1|") && !text.contains(&node3), "{text}");
    let pushed = ssh.run(&mesh, &["push", "node3", "--json"]).json();
    pushed_motd(&pushed, "node3", "node3");
}

#[test]
fn an_ecdsa_only_entry_for_addr_and_port_is_used_for_a_machine_offering_more() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    let ssh = Openssh::new();
    // a second sshd on 2222 on node3, so the entry must be written [addr]:2222
    let sshd = SecondSshd::new("node3");
    unpinned_node3(&mesh, &ssh, "2222");
    let node3 = address("node3");
    let ecdsa = host_key("node3", "ecdsa");
    ssh.write("known_hosts", &format!("[{node3}]:2222 {ecdsa}\n"));
    let pushed = ssh.run(&mesh, &["push", "node3", "--json"]).json();
    drop(sshd);
    pushed_motd(&pushed, "node3", "node3");
}

#[test]
fn a_key_that_differs_from_known_hosts_is_refused_as_changed_naming_both() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    let ssh = Openssh::new();
    unpinned_node3(&mesh, &ssh, "22");
    let node3 = address("node3");
    let recorded = host_key("node1", "ed25519");
    let offered = host_key("node3", "ed25519");
    ssh.write("known_hosts", &format!("{node3} {recorded}\n"));
    let run = ssh.run(&mesh, &["push", "node3", "--json"]);
    let reason = refused_as_changed(run, "node3", &recorded, &offered);
    assert!(
        reason.contains("known_hosts") && !reason.contains("not pinned"),
        "{reason}"
    );
}
