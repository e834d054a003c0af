//! The `user` and `group` kinds on a lab machine: a group, a user with keys and a process
//! running as that user made in one first push; a changed shell shown in the plan and applied;
//! undeclared, what the mesh made is gone (the home kept) and a user it found has its shell,
//! groups and `authorized_keys` back as found. And the built-in `users` module: an operator's
//! account that logs in with its key, gone when undeclared.

use std::process::Command;

use crate::util::{Mesh, address, on, ssh};

/// What a user and a group look like on node3: `passwd` line (or `none`), supplementary groups.
fn account(name: &str) -> String {
    on(
        "node3",
        &format!(
            "(getent passwd {name} || echo none) | cut -d: -f1,6,7; id -Gn {name} 2>/dev/null || true"
        ),
    )
}

/// Leftovers of an earlier run of these tests, which a failure may have left on the machine.
fn clean(names: &str) {
    on(
        "node3",
        &format!(
            "for u in {names}; do userdel -r $u 2>/dev/null; groupdel $u 2>/dev/null; \
             rm -rf /home/$u; done; true"
        ),
    );
}

/// The team's module; `bob_keys`: the mesh writes bob's `authorized_keys`.
fn team(mesh: &Mesh, bob_keys: bool) {
    let json = r#"{"name": "team", "version": "1", "description": "A team's accounts and its job.",
  "settings": [
    {"name": "shell", "type": "line", "meaning": "Their shell.", "default": "/bin/sh",
     "cost": "none"},
    {"name": "key", "type": "line", "meaning": "Their key.", "default": "ssh-ed25519 AAAAmesh team",
     "cost": "none"}],
  "resources": [
    {"kind": "group", "name": "meshops"},
    {"kind": "user", "name": "meshalice", "shell": "${shell}", "groups": ["meshops"],
     "authorized-keys": "${key}"},
    {"kind": "user", "name": "meshbob", "shell": "${shell}", "groups": ["meshops"],
     "authorized-keys": "${key}"},
    {"kind": "file", "path": "/etc/meshalice.conf", "owner": "meshalice", "group": "meshops",
     "mode": "0640", "template": "conf"},
    {"kind": "process", "description": "Sleeps as alice", "command": ["/bin/sleep", "infinity"],
     "user": "meshalice"}]}"#;
    let json = if bob_keys {
        json.to_string()
    } else {
        json.replacen(
            r#""groups": ["meshops"],
     "authorized-keys": "${key}"},
    {"kind": "file""#,
            r#""groups": ["meshops"]},
    {"kind": "file""#,
            1,
        )
    };
    assert_eq!(json.contains(r#""meshops"]},"#), !bob_keys);
    mesh.module("team", &json, &[("conf", "alice's\n")]);
}

#[test]
fn a_group_a_user_with_keys_and_a_process_as_it_work_first_time_and_are_given_back() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    clean("meshalice meshbob meshops");
    // bob is there before the mesh: its shell, groups and keys come back as they were
    on(
        "node3",
        "useradd -m -s /bin/dash meshbob && mkdir -m 0700 /home/meshbob/.ssh && \
         printf 'ssh-rsa FOUND bob\\n' > /home/meshbob/.ssh/authorized_keys && \
         chmod 0644 /home/meshbob/.ssh/authorized_keys && \
         chown -R meshbob:meshbob /home/meshbob/.ssh",
    );
    let bob_before = account("meshbob");
    let bob_keys = "stat -c '%a %U' /home/meshbob/.ssh/authorized_keys; \
                    cat /home/meshbob/.ssh/authorized_keys";
    let bob_keys_before = on("node3", bob_keys);
    team(&mesh, true);
    let show = mesh.run(&["module", "show", "team"]).ok();
    for said in [
        "group meshops: made if missing and then removed when undeclared",
        "user meshalice, shell ${shell}, groups [meshops], authorized_keys from ${key}",
    ] {
        assert!(show.stdout.contains(said), "{said}\n{}", show.stdout);
    }
    mesh.run(&["assign", "team", "node3"]).ok();
    // asked before anything is made, the machine says the process's user will be there
    let check = mesh.run(&["check", "node3"]);
    let said = format!("{}{}", check.stdout, check.stderr);
    assert!(said.contains("would create user meshalice"), "{said}");
    assert!(!said.contains("failed team"), "{said}");
    let push = mesh.run(&["push", "node3"]).ok();
    assert_eq!(
        account("meshalice"),
        "meshalice:/home/meshalice:/bin/sh\nmeshalice meshops\n",
        "{}",
        push.stdout
    );
    assert_eq!(
        on(
            "node3",
            "stat -c '%a %U' /home/meshalice/.ssh /home/meshalice/.ssh/authorized_keys; \
             cat /home/meshalice/.ssh/authorized_keys; stat -c '%U:%G' /etc/meshalice.conf"
        ),
        "700 meshalice\n600 meshalice\nssh-ed25519 AAAAmesh team\nmeshalice:meshops\n"
    );
    assert_eq!(
        on(
            "node3",
            "ps -o user= -p $(systemctl show -p MainPID --value team.service)"
        ),
        "meshalice\n"
    );
    let again = mesh.run(&["push", "node3"]).ok();
    assert!(
        again.stdout.contains("0 created, 0 changed"),
        "{}",
        again.stdout
    );

    // a new shell: the plan names the field, the push applies it with usermod
    mesh.run(&["settings", "set", "team", "shell=/bin/bash"])
        .ok();
    let plan = mesh.run(&["plan", "node3", "--diff"]).ok();
    assert!(
        plan.stdout.contains("~ team:user:meshalice (shell)"),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("+shell: /bin/bash"), "{}", plan.stdout);
    mesh.run(&["push", "node3"]).ok();
    assert!(account("meshalice").starts_with("meshalice:/home/meshalice:/bin/bash\n"));
    assert_eq!(
        account("meshbob"),
        "meshbob:/home/meshbob:/bin/bash\nmeshbob meshops\n"
    );

    // bob's keys no longer the mesh's: what was there comes back at once
    team(&mesh, false);
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(on("node3", bob_keys), bob_keys_before);
    assert!(account("meshbob").starts_with("meshbob:/home/meshbob:/bin/bash\n"));

    mesh.run(&["unassign", "team", "node3"]).ok();
    let off = mesh.run(&["push", "node3"]).ok();
    assert_eq!(account("meshalice"), "none\n", "{}", off.stdout);
    assert_eq!(
        on(
            "node3",
            "getent group meshops || echo gone; ls -d /home/meshalice"
        ),
        "gone\n/home/meshalice\n",
        "the group the mesh made is gone, alice's home kept"
    );
    assert_eq!(account("meshbob"), bob_before, "{}", off.stdout);
    assert_eq!(on("node3", bob_keys), bob_keys_before);
    clean("meshalice meshbob meshops");
}

#[test]
fn root_and_a_system_account_the_mesh_did_not_make_are_refused() {
    let mesh = Mesh::new();
    let catalogue = mesh.module(
        "rooted",
        r#"{"name": "rooted", "version": "1", "description": "d",
  "resources": [{"kind": "user", "name": "root", "shell": "/bin/sh"}]}"#,
        &[],
    );
    let rooted = catalogue.join("rooted");
    let check = mesh.run(&["module", "check", rooted.to_str().expect("a path")]);
    assert_ne!(check.status, 0);
    assert!(
        check.stderr.contains("root is the machine's own"),
        "{}",
        check.stderr
    );
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module(
        "daemon",
        r#"{"name": "daemon", "version": "1", "description": "d",
  "resources": [{"kind": "user", "name": "daemon", "shell": "/bin/bash"}]}"#,
        &[],
    );
    let shell = "getent passwd daemon | cut -d: -f7";
    let before = on("node3", shell);
    mesh.run(&["assign", "daemon", "node3"]).ok();
    let push = mesh.run(&["push", "node3"]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    assert!(
        push.stdout
            .contains("is a system account (uid 1) the mesh did not make"),
        "{}",
        push.stdout
    );
    assert_eq!(on("node3", shell), before);
    mesh.run(&["unassign", "daemon", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
}

/// A key pair made for this test, the public key's line.
fn key_pair(dir: &std::path::Path) -> String {
    let key = dir.join("id");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "meshcarol", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen runs");
    assert!(made.success());
    std::fs::read_to_string(dir.join("id.pub"))
        .expect("the public key")
        .trim()
        .to_string()
}

fn login(key: &std::path::Path, user: &str) -> std::process::Output {
    Command::new("ssh")
        .args([
            "-q",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "IdentitiesOnly=yes",
            "-i",
        ])
        .arg(key)
        .arg(format!("{user}@{}", address("node3")))
        .arg("id -un; id -Gn")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ssh runs")
}

#[test]
fn the_users_module_makes_an_account_that_logs_in_with_its_key_and_removes_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    clean("meshcarol");
    let dir = tempfile::tempdir().expect("a temp dir");
    let public = key_pair(dir.path());
    mesh.run(&["assign", "users", "node3", "--as", "carol"])
        .ok();
    let keys = serde_json::json!([public]).to_string();
    mesh.run(&[
        "settings",
        "set",
        "carol",
        "--node",
        "node3",
        "login=meshcarol",
        &format!("keys={keys}"),
    ])
    .ok();
    let push = mesh.run(&["push", "node3"]).ok();
    let logged = login(&dir.path().join("id"), "meshcarol");
    assert_eq!(
        String::from_utf8_lossy(&logged.stdout),
        "meshcarol\nmeshcarol sudo\n",
        "{}\n{}",
        push.stdout,
        String::from_utf8_lossy(&logged.stderr)
    );
    // another key only: the first no longer logs in
    mesh.run(&[
        "settings",
        "set",
        "carol",
        "--node",
        "node3",
        "login=meshcarol",
        r#"keys=["ssh-ed25519 AAAAother x"]"#,
    ])
    .ok();
    let plan = mesh.run(&["plan", "node3", "--diff"]).ok();
    for said in [
        "~ carol:user:meshcarol (authorized-keys)",
        "+  ssh-ed25519 AAAAother x",
    ] {
        assert!(plan.stdout.contains(said), "{said}\n{}", plan.stdout);
    }
    assert!(!plan.stdout.contains("restart"), "{}", plan.stdout);
    assert!(!plan.stdout.contains("  ! "), "{}", plan.stdout);
    mesh.run(&["push", "node3"]).ok();
    assert_ne!(
        login(&dir.path().join("id"), "meshcarol").status.code(),
        Some(0)
    );
    mesh.run(&["unassign", "carol", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(account("meshcarol"), "none\n");
    // its home kept, and the sudo group it was put in (Debian's own) still there
    assert_eq!(
        on(
            "node3",
            "ls -d /home/meshcarol; getent group sudo | cut -d: -f1"
        ),
        "/home/meshcarol\nsudo\n"
    );
    assert_eq!(ssh("node3", "true").status, 0, "root still logs in");
    clean("meshcarol");
}
