//! One push at a time per inventory file: the push lock is the file's, so the same
//! inventory reached through a symlink, a hard link or a relative path is refused while a push
//! runs, rather than pushed twice at once; and a plan meanwhile says the rollout runs.
//!
//! The first push is kept running by a machine that takes its connection and never answers (a
//! listening socket of this test), so the second is tried while the first certainly runs.

use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::util::{Mesh, Run, eventually};

/// Waits up to 30 s for the first push to connect to the silent machine.
fn accepted(silent: &TcpListener) -> std::net::TcpStream {
    silent.set_nonblocking(true).expect("a non-blocking socket");
    eventually(
        Duration::from_secs(30),
        "the first push to connect",
        || match silent.accept() {
            Ok((conn, _)) => Some(conn),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
            Err(e) => panic!("the first push never connected: {e}"),
        },
    )
}

#[test]
fn a_push_of_the_same_inventory_by_another_name_is_refused_while_one_runs() {
    let mesh = Mesh::new();
    let silent = TcpListener::bind("127.0.0.1:0").expect("a local port");
    let port = silent.local_addr().expect("its address").port().to_string();
    mesh.run(&[
        "node",
        "add",
        "slow",
        "--address",
        "127.0.0.1",
        "--port",
        &port,
    ])
    .ok();
    mesh.run(&["assign", "motd", "slow"]).ok();
    let mut first = mesh
        .command(&["push", "--all", "--connect-timeout", "120"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the first push starts");
    let conn = accepted(&silent);

    let dir = mesh.dir.path();
    std::os::unix::fs::symlink(mesh.inventory(), dir.join("link.db")).expect("a symlink");
    std::fs::hard_link(mesh.inventory(), dir.join("hard.sqlite")).expect("a hard link");
    let names: [(&str, &Path); 4] = [
        ("link.db", dir),
        ("hard.sqlite", dir),
        ("./inventory.db", dir),
        ("../inventory.db", &dir.join("keys")),
    ];
    let mut said = Vec::new();
    for (name, cwd) in names {
        std::fs::create_dir_all(cwd).expect("the folder run from");
        let second = Run::from(
            mesh.command(&["push", "--all", "--connect-timeout", "5"])
                .env("MESH_INVENTORY", name)
                .current_dir(cwd)
                .output()
                .expect("the second push runs"),
        );
        said.push(format!(
            "{name}: exit {}: {}",
            second.status,
            second.stderr.trim()
        ));
        assert!(
            second.status == 1 && second.stderr.contains("another mesh push is running"),
            "a second push through {name} was not refused while the first ran:\n{}",
            said.join("\n")
        );
    }
    assert_eq!(
        first.try_wait().expect("the first push"),
        None,
        "the first push ended early"
    );
    // meanwhile a plan says the rollout runs, not that it was cut short and is to be resumed
    let plan = mesh.run(&["plan", "--all"]).stdout;
    assert!(
        plan.contains("is running now")
            && !plan.contains("cut short")
            && !plan.contains("--resume"),
        "{plan}"
    );
    // the machine goes away: the first push ends (failed), and the lock with it
    drop(conn);
    drop(silent);
    let status = first.wait().expect("the first push ends");
    assert_eq!(status.code(), Some(2), "{said:?}");
    let after = Run::from(
        mesh.command(&["push", "--all", "--connect-timeout", "5"])
            .env("MESH_INVENTORY", "link.db")
            .current_dir(dir)
            .output()
            .expect("a push after it"),
    );
    assert!(
        !after.stderr.contains("another mesh push is running"),
        "the lock outlived the push: {}",
        after.stderr
    );
}
