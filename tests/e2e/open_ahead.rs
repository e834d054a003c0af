//! A plan of 64 nodes or more opens their kept secrets ahead on every core
//! (`Inventory::open_ahead`), and promises that nothing there fails a command. Found by an
//! attacker: where no thread can be started (a user at its process limit, a container at its
//! pids limit, an address-space limit), the thread's start panicked, and `mesh plan --all`
//! exited 101 with nothing planned, where a plan of the same nodes before did its work.

use crate::util::Mesh;

/// A fleet of `n` nodes, each with a key-value store and its client (a generated secret each),
/// kept allocated.
fn fleet_with_secrets(mesh: &Mesh, n: usize) {
    let db = rusqlite::Connection::open(mesh.inventory()).expect("the inventory opens");
    for i in 1..=n {
        let name = format!("node{i:03}");
        db.execute(
            "INSERT INTO nodes (name, address, port) VALUES (?1, ?2, 22)",
            [&name, &format!("192.0.2.{i}")],
        )
        .expect("a node");
        for module in ["motd", "kv", "kv-client"] {
            db.execute(
                "INSERT INTO assignments (node, instance, module) VALUES (?1, ?2, ?2)",
                [&name, module],
            )
            .expect("an assignment");
        }
    }
    drop(db);
    // keeps what every node needs allocated (its secrets generated and sealed)
    mesh.run(&["assign", "motd", "*"]).ok();
}

#[test]
fn a_plan_of_a_fleet_whose_secrets_no_thread_can_be_started_to_open_still_plans_it() {
    let tools = ["prlimit", "setpriv"].iter().all(|t| {
        std::process::Command::new(t)
            .arg("--version")
            .output()
            .is_ok()
    });
    let root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    if !tools || !root {
        eprintln!(
            "skipped: needs root, prlimit and setpriv to run mesh as another user at its process limit"
        );
        return;
    }
    let mesh = Mesh::new();
    fleet_with_secrets(&mesh, 64);
    let planned = mesh.run(&["plan", "--all"]).ok();

    // the same plan by a user (nobody) that may run one process and no thread besides
    let owned = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(mesh.dir.path())
        .status()
        .expect("chown runs");
    assert!(owned.success());
    let mut at_limit = std::process::Command::new("prlimit");
    at_limit.args(["--nproc=1:1", "setpriv", "--reuid=65534", "--regid=65534"]);
    at_limit.args(["--clear-groups", "--"]);
    let mesh_at_limit = mesh.command(&["plan", "--all"]);
    at_limit
        .arg(mesh_at_limit.get_program())
        .args(mesh_at_limit.get_args())
        .envs(
            mesh_at_limit
                .get_envs()
                .filter_map(|(k, v)| v.map(|v| (k, v))),
        )
        .env("HOME", mesh.dir.path());
    let out = at_limit.output().expect("prlimit runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), planned.stdout);
}
