//! Reaching machines as OpenSSH does: a Host alias of the ssh
//! configuration with its own port, user and key; a machine the host cannot reach, reached
//! through another lab machine as jump host (`--jump`, and ProxyJump from the configuration); a
//! jump host whose key is wrong refused naming the hop; known_hosts read as OpenSSH reads it
//! (the system file, hashed names, `[addr]:port`, an ECDSA-only entry, a changed key).
//!
//! Every command runs with its own HOME, `MESH_SSH_CONFIG` and `MESH_SSH_KNOWN_HOSTS` naming the
//! files in it (ssh's own are the passwd home's whatever HOME says), and its own system files.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::util::{Mesh, Run, address, eventually, lab_state, node_result, on, path_str};

/// The operator's side of one test: a HOME with `.ssh/`, and the system files.
pub struct Openssh {
    home: tempfile::TempDir,
}

impl Openssh {
    pub fn new() -> Openssh {
        let home = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(home.path().join(".ssh")).expect(".ssh");
        Openssh { home }
    }
    pub fn file(&self, name: &str) -> PathBuf {
        self.home.path().join(".ssh").join(name)
    }
    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.file(name), text).expect("write an ssh file");
    }
    pub fn run(&self, mesh: &Mesh, args: &[&str]) -> Run {
        Run::from(self.command(mesh, args).output().expect("mesh runs"))
    }
    /// The mesh command [`Openssh::run`] runs, to add to.
    pub fn command(&self, mesh: &Mesh, args: &[&str]) -> Command {
        let mut command = mesh.command(args);
        command
            .env("HOME", self.home.path())
            // ssh's own files are the passwd home's whatever HOME says: name this home's
            .env("MESH_SSH_CONFIG", self.file("config"))
            .env("MESH_SSH_KNOWN_HOSTS", self.file("known_hosts"))
            .env("MESH_SSH_SYSTEM_CONFIG", self.file("system_config"))
            .env(
                "MESH_SSH_SYSTEM_KNOWN_HOSTS",
                self.file("system_known_hosts"),
            );
        command
    }
}

pub fn lab_key() -> String {
    path_str(&lab_state().join("id_ed25519")).to_string()
}

/// A host key of a lab machine, `type base64`.
pub fn host_key(node: &str, kind: &str) -> String {
    let line = on(node, &format!("cat /etc/ssh/ssh_host_{kind}_key.pub"));
    line.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The fingerprint of a key file's public half (`FILE.pub`), as `-v` names a key offered.
pub fn key_file_fingerprint(key: &str) -> String {
    let public = std::fs::read_to_string(format!("{key}.pub")).expect("a public key");
    let words: Vec<&str> = public.split_whitespace().take(2).collect();
    fingerprint(&words.join(" "))
}

pub fn fingerprint(key: &str) -> String {
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
pub struct SecondSshd(&'static str);

impl SecondSshd {
    pub fn new(node: &'static str) -> SecondSshd {
        on(node, "/usr/sbin/sshd -p 2222 -o PidFile=/run/sshd-2222.pid");
        // it forks into the background before it listens
        let at = format!("{}:2222", address(node));
        eventually(Duration::from_secs(10), "the second sshd to listen", || {
            std::net::TcpStream::connect(&at).ok()
        });
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
pub fn pushed_motd(pushed: &serde_json::Value, node: &str, machine: &str) {
    assert_eq!(node_result(pushed, node)["outcome"], "applied", "{pushed}");
    assert_eq!(on(machine, "cat /etc/motd"), MOTD);
}

#[test]
fn a_node_added_by_an_ssh_config_alias_is_pushed_with_its_own_port_user_and_key() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
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
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
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
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
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
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
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
    // jumpbox is no node: `mesh node trust jumpbox` would fail, known_hosts is what to fix
    assert!(
        !reason.contains("node trust") && reason.contains("known_hosts line"),
        "{reason}"
    );
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
pub fn unpinned_node3(mesh: &Mesh, ssh: &Openssh, port: &str) {
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
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
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
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
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
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
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

#[test]
fn a_proxyjump_in_a_file_the_system_config_includes_reaches_a_node_the_host_cannot() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let (node1, node3) = (address("node1"), address("node3"));
    // as Debian's ssh_config: the fleet's settings in a folder it includes
    let conf_d = ssh.file("system.d");
    std::fs::create_dir_all(&conf_d).expect("the included folder");
    std::fs::write(
        conf_d.join("50-fleet.conf"),
        format!("Host {node3}\n  ProxyJump root@{node1}\n"),
    )
    .expect("an included file");
    ssh.write(
        "system_config",
        &format!(
            "Include {}/*.conf\nHost *\n  SendEnv LANG\n",
            conf_d.display()
        ),
    );
    ssh.run(&mesh, &["assign", "motd", "node3"]).ok();
    on("node3", "rm -f /etc/motd");
    let pushed = {
        let _cut = Blackhole::new("node3");
        ssh.run(
            &mesh,
            &["push", "node3", "--connect-timeout", "5", "--json"],
        )
        .json()
    };
    pushed_motd(&pushed, "node3", "node3");
}

#[test]
fn jump_none_connects_directly_ignoring_the_configurations_proxyjump_and_no_jump_clears_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let node2 = address("node2");
    ssh.write(
        "config",
        &format!("Host {node2}\n  ProxyJump nowhere.invalid\n"),
    );
    ssh.run(&mesh, &["assign", "motd", "node2"]).ok();
    on("node2", "rm -f /etc/motd");
    let through = ssh.run(&mesh, &["push", "node2", "--json"]).code(2).json();
    let reason = node_result(&through, "node2")["reason"].to_string();
    assert!(reason.contains("nowhere.invalid"), "{reason}");
    ssh.run(&mesh, &["node", "set", "node2", "--jump", "none"])
        .ok();
    let shown = ssh.run(&mesh, &["node", "show", "node2"]).ok().stdout;
    assert!(
        shown.contains("jump:      none") && !shown.contains(" via "),
        "{shown}"
    );
    let pushed = ssh.run(&mesh, &["push", "node2", "--json"]).ok().json();
    pushed_motd(&pushed, "node2", "node2");
    // back to the configuration's ProxyJump: a change, not "nothing to change"
    ssh.run(&mesh, &["node", "set", "node2", "--no-jump"]).ok();
    let shown = ssh.run(&mesh, &["node", "show", "node2"]).ok().stdout;
    assert!(shown.contains("via root@nowhere.invalid:22"), "{shown}");
}

#[test]
fn a_key_known_hosts_marks_revoked_is_refused_pinned_or_not_and_never_pinned_by_trust() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let node3 = address("node3");
    let revoked: String = ["ed25519", "ecdsa", "rsa"]
        .iter()
        .map(|kind| format!("@revoked {node3} {}\n", host_key("node3", kind)))
        .collect();
    ssh.write("known_hosts", &format!("# compromised\n{revoked}"));
    let seen = fingerprint(&host_key("node3", "ed25519"));
    // pinned or not, a revoked key is refused
    let pushed = ssh.run(&mesh, &["push", "node3", "--json"]).code(2).json();
    let refused = node_result(&pushed, "node3");
    assert_eq!(refused["kind"], "host-key", "{refused}");
    assert!(
        refused["reason"].to_string().contains("@revoked"),
        "{refused}"
    );
    let before = mesh.run(&["node", "show", "node3", "--json"]).ok().stdout;
    let refused = ssh.run(&mesh, &["node", "trust", "node3", "--fingerprint", &seen]);
    assert_ne!(refused.status, 0, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("@revoked")
            && refused
                .stderr
                .contains(&format!("{}:", ssh.file("known_hosts").display())),
        "{}",
        refused.stderr
    );
    let after = mesh.run(&["node", "show", "node3", "--json"]).ok().stdout;
    assert_eq!(before, after, "nothing was pinned");
}

#[test]
fn whatever_user_the_environment_names_the_local_user_is_the_passwd_one_for_u_and_a_jump_hosts_login()
 {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let node1 = address("node1");
    let me = Command::new("id").arg("-un").output().expect("id runs");
    let me = String::from_utf8_lossy(&me.stdout).trim().to_string();
    // the jump host's key is found only if %u is the local user's name; it names no User
    std::fs::copy(
        lab_state().join("id_ed25519"),
        ssh.file(&format!("{me}.key")),
    )
    .expect("the lab key, under the local user's name");
    ssh.write(
        "config",
        &format!(
            "Host gw\n  HostName {node1}\n  IdentityFile {}/%u.key\n",
            ssh.file("").display()
        ),
    );
    ssh.write(
        "known_hosts",
        &format!("{node1} {}\n", host_key("node1", "ed25519")),
    );
    ssh.run(&mesh, &["node", "set", "node2", "--jump", "gw"])
        .ok();
    ssh.run(&mesh, &["assign", "motd", "node2"]).ok();
    on("node2", "rm -f /etc/motd");
    let out = mesh
        .command(&["push", "node2", "--json"])
        .env("HOME", ssh.home.path())
        .env("MESH_SSH_CONFIG", ssh.file("config"))
        .env("MESH_SSH_KNOWN_HOSTS", ssh.file("known_hosts"))
        .env("MESH_SSH_SYSTEM_CONFIG", ssh.file("system_config"))
        .env(
            "MESH_SSH_SYSTEM_KNOWN_HOSTS",
            ssh.file("system_known_hosts"),
        )
        // as under `sudo -E`: the environment names another user, ssh takes the passwd entry's
        .env("USER", "nobody")
        .env("LOGNAME", "nobody")
        .output()
        .expect("mesh runs");
    let pushed = Run::from(out).json();
    pushed_motd(&pushed, "node2", "node2");
}

/// `ssh -F config HOST` on the test's files, printing the hostname of the machine it reaches.
fn openssh_reaches(ssh: &Openssh, host: &str) -> Run {
    let out = Command::new("ssh")
        .arg("-F")
        .arg(ssh.file("config"))
        .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=5"])
        .args([
            "-o",
            &format!("UserKnownHostsFile={}", path_str(&ssh.file("known_hosts"))),
        ])
        .args([host, "hostname"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ssh runs");
    Run::from(out)
}

#[test]
fn a_misspelt_keyword_is_refused_as_ssh_refuses_it_and_a_service_name_port_reaches_what_ssh_reaches()
 {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let node1 = address("node1");
    ssh.write(
        "known_hosts",
        &format!("{node1} {}\n", host_key("node1", "ed25519")),
    );
    ssh.write("system_config", "");
    // `Port ssh` is port 22 to ssh; mesh refused it before ("not a number")
    ssh.write(
        "config",
        &format!(
            "Host web-alias\n  HostName {node1}\n  Port ssh\n  User root\n  IdentityFile {}\n",
            lab_key()
        ),
    );
    assert_eq!(
        openssh_reaches(&ssh, "web-alias").ok().stdout.trim(),
        "node1"
    );
    mesh.run(&["node", "remove", "node1"]).ok();
    ssh.run(&mesh, &["node", "add", "web", "--address", "web-alias"])
        .ok();
    ssh.run(&mesh, &["assign", "motd", "web"]).ok();
    let pushed = ssh.run(&mesh, &["push", "web", "--json"]).ok().json();
    pushed_motd(&pushed, "web", "node1");

    // `Prot 2222`: ssh refuses the file; mesh connected to port 22 as if it said nothing
    ssh.write(
        "config",
        &format!(
            "Host web-alias\n  HostName {node1}\n  Prot 2222\n  User root\n  IdentityFile {}\n",
            lab_key()
        ),
    );
    let refused = openssh_reaches(&ssh, "web-alias");
    assert_ne!(refused.status, 0, "ssh refuses a misspelt keyword");
    assert!(refused.stderr.contains("line 3"), "{}", refused.stderr);
    let run = ssh.run(&mesh, &["push", "web", "--json"]);
    assert_ne!(run.status, 0, "{}", run.stdout);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("config:3") && said.contains("Bad configuration option: prot"),
        "{said}"
    );
    ssh.run(&mesh, &["node", "remove", "web"]).ok();
}

/// `ssh` to `addr:port` with `known_hosts` as its only file and strict checking, printing the
/// hostname of the machine it reaches.
fn openssh_strictly_reaches(ssh: &Openssh, addr: &str, port: &str) -> Run {
    let out = Command::new("ssh")
        .arg("-F")
        .arg("/dev/null")
        .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=5"])
        .args([
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "GlobalKnownHostsFile=/dev/null",
        ])
        .args([
            "-o",
            &format!("UserKnownHostsFile={}", path_str(&ssh.file("known_hosts"))),
        ])
        .args([
            "-i",
            &lab_key(),
            "-p",
            port,
            &format!("root@{addr}"),
            "hostname",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ssh runs");
    Run::from(out)
}

#[test]
fn a_plain_addr_entry_with_the_machines_key_answers_for_another_port_as_ssh_takes_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let ssh = Openssh::new();
    let sshd = SecondSshd::new("node3");
    unpinned_node3(&mesh, &ssh, "2222");
    let node3 = address("node3");
    ssh.write(
        "known_hosts",
        &format!("{node3} {}\n", host_key("node3", "ed25519")),
    );
    let by_ssh = openssh_strictly_reaches(&ssh, &node3, "2222");
    let pushed = ssh.run(&mesh, &["push", "node3", "--json"]);
    // a plain entry with another key: ssh refuses [addr]:2222 as unknown, so must mesh
    ssh.write(
        "known_hosts",
        &format!("{node3} {}\n", host_key("node1", "ed25519")),
    );
    let other_by_ssh = openssh_strictly_reaches(&ssh, &node3, "2222");
    let other = ssh.run(&mesh, &["push", "node3", "--json"]);
    drop(sshd);
    assert_eq!(by_ssh.status, 0, "{}", by_ssh.stderr);
    assert_eq!(by_ssh.stdout.trim(), "node3");
    pushed_motd(&pushed.json(), "node3", "node3");
    assert_ne!(other_by_ssh.status, 0, "{}", other_by_ssh.stdout);
    assert!(
        other_by_ssh.stderr.contains("No ED25519 host key is known"),
        "{}",
        other_by_ssh.stderr
    );
    let other = other.json();
    let result = node_result(&other, "node3");
    assert_eq!(result["outcome"], "failed", "{other}");
    assert_eq!(result["kind"], "host-key", "{other}");
}
