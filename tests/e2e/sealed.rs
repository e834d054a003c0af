//! Secrets sealed, on lab machines: after a push of `kv` and a `kv-client`,
//! no secret is anywhere in the inventory in clear (every column of every table is searched),
//! the machines still get the right value (the client authenticates to the store), and the
//! inventory without the operator's key opens nothing and says which key it needs.

use crate::util::{Mesh, on, within};

/// Every secret the inventory keeps, opened with the test's operator key.
pub fn secrets(mesh: &Mesh) -> Vec<String> {
    let db = rusqlite::Connection::open(mesh.inventory()).expect("the inventory opens");
    let mut stmt = db.prepare("SELECT value FROM secrets").expect("secrets");
    let sealed: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows");
    sealed.iter().map(|s| mesh.unseal(s)).collect()
}

/// Every value of every column of every table of the inventory, as text.
pub fn everything_in(mesh: &Mesh) -> Vec<(String, String)> {
    let db = rusqlite::Connection::open(mesh.inventory()).expect("the inventory opens");
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .expect("tables")
        .query_map([], |r| r.get(0))
        .expect("tables")
        .collect::<Result<_, _>>()
        .expect("tables");
    let mut out = Vec::new();
    for table in tables {
        let mut stmt = db
            .prepare(&format!("SELECT * FROM \"{table}\""))
            .expect("select");
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).expect("rows");
        while let Some(row) = rows.next().expect("a row") {
            for i in 0..columns {
                use rusqlite::types::ValueRef;
                let text = match row.get_ref(i).expect("a value") {
                    ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into(),
                    ValueRef::Integer(n) => n.to_string(),
                    ValueRef::Real(f) => f.to_string(),
                    ValueRef::Null => continue,
                };
                out.push((table.clone(), text));
            }
        }
    }
    out
}

/// Asserts that no secret is in any column of any table.
pub fn assert_nowhere_in_clear(mesh: &Mesh, secrets: &[String]) {
    let all = everything_in(mesh);
    assert!(
        all.iter().any(|(t, _)| t == "confirmed"),
        "nothing confirmed"
    );
    for secret in secrets {
        for (table, value) in &all {
            assert!(
                !value.contains(secret.as_str()),
                "a secret is in clear in the table {table}"
            );
        }
    }
}

/// From clean machines, `kv` on node1 and a `kv-client` on node2, pushed: the push's `--json`.
pub fn kv_and_its_client(mesh: &Mesh) -> String {
    mesh.run(&["push", "--all"]).ok();
    on("node1", "rm -rf /srv/mesh/kv");
    on("node2", "rm -rf /srv/mesh/kv-client");
    mesh.run(&["assign", "kv", "node1"]).ok();
    mesh.run(&["assign", "kv-client", "node2"]).ok();
    mesh.run(&["push", "--all", "--json"]).ok().stdout
}

#[test]
fn no_secret_is_in_the_inventory_in_clear_and_the_machines_still_get_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let push = kv_and_its_client(&mesh);

    let secrets = secrets(&mesh);
    assert!(!secrets.is_empty());
    let password = &secrets[0];
    assert_eq!(password.len(), 32);
    assert!(!push.contains(password.as_str()), "the push printed it");
    assert_nowhere_in_clear(&mesh, &secrets);
    // the operator's key is the operator's alone
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(mesh.operator_key())
            .expect("mesh init made the operator's key")
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);

    // the machines opened it: the client has its own password, the store lets its login in with
    // it, and the client is let in
    let on_client = on("node2", "cat /srv/mesh/kv-client/home/store-password");
    let password = on_client.trim().to_string();
    let password = password.as_str();
    assert!(secrets.iter().any(|s| s == password));
    let on_store = on("node1", "cat /srv/mesh/kv/data/auth.conf");
    assert!(on_store.contains(&format!("user kv-client_node2 on >{password} ")));
    let port = mesh
        .run(&["config", "kv", "--node", "node1", "--json"])
        .ok()
        .json()["requirements"]["listen.port"]
        .as_u64()
        .expect("a port");
    let beat = within(std::time::Duration::from_secs(10), || {
        let beat = on(
            "node1",
            &format!(
                "REDISCLI_AUTH='{password}' redis-cli --user kv-client_node2 -p {port} \
                 GET kv-client_node2:heartbeat"
            ),
        );
        Some(beat.trim().to_string()).filter(|beat| !beat.is_empty())
    })
    .unwrap_or_default();
    assert!(beat.parse::<u64>().is_ok(), "no heartbeat: {beat:?}");

    // a second push sends the same secret sealed anew: nothing changed, nothing is behind
    let plan = mesh.run(&["plan", "--all"]).ok().stdout;
    assert!(plan.contains("node1: no changes"), "{plan}");
    assert!(plan.contains("node2: no changes"), "{plan}");
    let behind = mesh
        .run(&["push", "--all", "--behind", "--json"])
        .ok()
        .stdout;
    assert!(!behind.contains("auth.conf"), "{behind}");

    // the inventory without the operator's key: nothing opens, and mesh says which key
    std::fs::remove_file(mesh.operator_key()).expect("the key");
    let refused = mesh.run(&["plan", "--all"]);
    assert_ne!(refused.status, 0, "{}", refused.stdout);
    let key = mesh.operator_key();
    assert!(
        refused.stderr.contains(&format!(
            "cannot open the inventory's secrets with the operator's key {}",
            key.display()
        )) && refused.stderr.contains("MESH_OPERATOR_KEY"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stderr.contains(password));
    assert!(!refused.stdout.contains(password));
    assert!(!key.exists(), "no new key was made over sealed secrets");
    assert_nowhere_in_clear(&mesh, &secrets);
}
