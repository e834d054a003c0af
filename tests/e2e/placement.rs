//! A placement never hands the machine's own directories to a module: `mesh place`
//! refuses a system or shared directory naming it and why, and the helper, trusting no sender,
//! never gives a directory it did not make another owner or mode, nor writes into one it refused.
//! The operator hands an existing directory over by giving it the declared owner and mode.

use crate::util::{Mesh, ssh};

/// `owner:group mode` of `path` on node1.
fn owner_mode(path: &str) -> String {
    let run = ssh("node1", &format!("stat -c '%U:%G %a' {path}"));
    assert_eq!(run.status, 0, "{}", run.stderr);
    run.stdout.trim().to_string()
}

#[test]
fn a_system_directory_is_never_placed_and_the_helper_never_takes_over_one_it_did_not_make() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "kv", "node1"]).ok();
    for path in [
        "/etc/ssh",
        "/etc",
        "/usr",
        "/root",
        "/boot",
        "/home",
        "/tmp",
        "/run",
        "/etc/ssh/",
    ] {
        let run = mesh
            .run(&["place", "kv", "node1", &format!("data={path}")])
            .code(1);
        let shown = path.trim_end_matches('/');
        assert!(
            run.stderr.contains(&format!("data=\"{shown}\""))
                && (run.stderr.contains("is the system's own")
                    || run.stderr.contains("holds others' files"))
                && run.stderr.contains("redis:redis"),
            "{path}: {}",
            run.stderr
        );
    }
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(plan.contains("kv:directory:/srv/mesh/kv/data"), "{plan}");

    // the second line: a placement stored behind mesh's back (as an older mesh stored it)
    let ssh_dir = owner_mode("/etc/ssh");
    let db = rusqlite::Connection::open(mesh.inventory()).unwrap();
    db.execute(
        "INSERT INTO placements (node, instance, name, path) VALUES ('node1', 'kv', 'data', '/etc/ssh')",
        [],
    )
    .unwrap();
    let push = mesh.run(&["push", "node1"]).code(2);
    assert!(
        push.stdout
            .contains("/etc/ssh is there already and the mesh did not make it"),
        "{}",
        push.stdout
    );
    assert_eq!(owner_mode("/etc/ssh"), ssh_dir);
    let stray = ssh("node1", "test -e /etc/ssh/auth.conf");
    assert_ne!(stray.status, 0, "kv wrote its auth.conf into /etc/ssh");

    // an existing directory of no system's is the same, until the operator hands it over
    ssh("node1", "mkdir -p /srv/taken && chmod 0755 /srv/taken");
    mesh.run(&["place", "kv", "node1", "data=/srv/taken"]).ok();
    let push = mesh.run(&["push", "node1"]).code(2);
    assert!(
        push.stdout.contains("/srv/taken is there already")
            && push.stdout.contains("it is root (0):root (0) 0755"),
        "{}",
        push.stdout
    );
    assert_eq!(owner_mode("/srv/taken"), "root:root 755");
    // the process that needs the directory is held, not restarted into a loop without its data
    assert!(
        push.stdout.contains(
            "held, neither started nor restarted: the directory /srv/taken it needs was refused \
             in this run"
        ),
        "{}",
        push.stdout
    );
    let unit = "kv.service";
    let restarts = || {
        ssh(
            "node1",
            &format!("systemctl show -p NRestarts,ActiveState --value {unit}"),
        )
        .stdout
    };
    let held = restarts();
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(restarts(), held, "{unit} restarts in a loop");
    ssh(
        "node1",
        "chown redis:redis /srv/taken && chmod 0750 /srv/taken",
    );
    mesh.run(&["push", "node1"]).ok();
    // taken off, it gives nothing back, and says so; the directory stays as it was handed over
    mesh.run(&["unassign", "kv", "node1"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(
        plan.contains("kv:directory:/srv/taken — leaves the machine as it is"),
        "{plan}"
    );
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(owner_mode("/srv/taken"), "redis:redis 750");

    // a directory an older helper took over (its record says what it found there): refused
    // until taken off, and the plan of taking it off says what the push gives back
    mesh.run(&["assign", "kv", "node1"]).ok();
    mesh.run(&["place", "kv", "node1", "data=/srv/taken"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let edit = ssh(
        "node1",
        r#"perl -0pi -e 's{("path": "/srv/taken",\s*"created": false,\s*"original": )null}{${1}[0, 0, 493]}' /var/lib/mesh/record.json && grep -c '493' /var/lib/mesh/record.json"#,
    );
    assert_eq!(edit.status, 0, "{} {}", edit.stdout, edit.stderr);
    let push = mesh.run(&["push", "node1"]).code(2);
    assert!(
        push.stdout.contains("an older helper gave it"),
        "{}",
        push.stdout
    );
    mesh.run(&["unassign", "kv", "node1"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(
        plan.contains("gives back the owner and mode of /srv/taken (root (0):root (0) 0755)"),
        "{plan}"
    );
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(owner_mode("/srv/taken"), "root:root 755");
    ssh("node1", "rm -rf /srv/taken");
}
