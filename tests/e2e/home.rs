//! The local user and home as OpenSSH takes them: mesh run with a `HOME`
//! that is not the passwd home (as under `sudo -E`, `env HOME=…` or cron) reads the files `ssh`
//! reads, the passwd home's, and reaches the machine, port and user `ssh -G` names.

use std::process::Command;

use crate::openssh::{host_key, pushed_motd};
use crate::util::{Mesh, Run, address, lab_state, path_str};

/// `ssh -G host` run with `HOME=home`: (hostname, port, user).
fn ssh_g(home: &std::path::Path, host: &str) -> (String, String, String) {
    let out = Command::new("ssh")
        .args(["-G", host])
        .env("HOME", home)
        .env("USER", "nobody")
        .output()
        .expect("ssh -G runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key} ")))
            .unwrap_or_default()
            .to_string()
    };
    (value("hostname"), value("port"), value("user"))
}

#[test]
fn with_home_elsewhere_mesh_reaches_the_machine_port_and_user_ssh_does() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let node1 = address("node1");
    let fake = tempfile::tempdir().unwrap();
    std::fs::create_dir(fake.path().join(".ssh")).unwrap();
    // what an older mesh read, and ssh does not: $HOME is not the passwd home
    std::fs::write(
        fake.path().join(".ssh/config"),
        format!("Host {node1}\n  Port 2\n  User nobody\n"),
    )
    .unwrap();
    let known = fake.path().join("known_hosts");
    std::fs::write(
        &known,
        format!("{node1} {}\n", host_key("node1", "ed25519")),
    )
    .unwrap();
    let (host, port, user) = ssh_g(fake.path(), &node1);
    assert_eq!(port, "22", "ssh -G must not read the fake home's config");
    let run = |args: &[&str]| {
        let out = mesh
            .command(args)
            .env("HOME", fake.path())
            .env("USER", "nobody")
            .env("LOGNAME", "nobody")
            .env("MESH_SSH_KNOWN_HOSTS", &known)
            .output()
            .expect("mesh runs");
        Run::from(out)
    };
    let key = lab_state().join("id_ed25519");
    run(&["node", "remove", "node1"]).ok();
    run(&[
        "node",
        "add",
        "home1",
        "--address",
        &node1,
        "--identity",
        path_str(&key),
    ])
    .ok();
    let shown = run(&["node", "show", "home1"]).ok().stdout;
    assert!(
        shown.contains(&host) && shown.contains(&format!("port {port}")),
        "mesh must reach {user}@{host}:{port} as ssh -G says:\n{shown}"
    );
    run(&["assign", "motd", "home1"]).ok();
    let pushed = run(&["push", "home1", "--json"]).ok().json();
    pushed_motd(&pushed, "home1", "node1");
}
