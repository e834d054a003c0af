//! Providers make what they provide: the built-in `kv` gives each `kv-client`
//! consumer a Redis login and password of its own that reach only its own keys; a new consumer
//! waits for its provider and is pushed in the same `push --all` once the provider's machine has
//! made its login; a consumer taken away has its login withdrawn; a provider taken away (forced)
//! holds its consumer alone while the rest of the fleet goes ahead. A login reaches nothing of
//! the store as a whole (no listing of keys, no flushing, no server commands), and a consumer
//! taken away leaves no secret of its own in the inventory.

use crate::util::{Mesh, node_result, on, within};

const PASSWORD: &str = "/srv/mesh/kv-client/home/store-password";

fn port(mesh: &Mesh) -> u64 {
    mesh.run(&["config", "kv", "--node", "node1", "--json"])
        .ok()
        .json()["requirements"]["listen.port"]
        .as_u64()
        .expect("kv has a port")
}

/// `redis-cli --user U --pass P COMMAND` on the provider's machine, its answer and errors.
fn redis(port: u64, user: &str, password: &str, command: &str) -> String {
    on(
        "node1",
        &format!(
            "redis-cli --no-auth-warning -p {port} --user '{user}' --pass '{password}' {command} 2>&1"
        ),
    )
    .trim()
    .to_string()
}

/// What a login may never do: read the keyspace as a whole, or change the server or what every
/// other login shares (scripts, functions, databases).
const REFUSED: [&str; 24] = [
    "SCAN 0",
    "KEYS '*'",
    "RANDOMKEY",
    "DBSIZE",
    "INFO keyspace",
    "SCRIPT FLUSH",
    "SCRIPT KILL",
    "FUNCTION FLUSH",
    "FUNCTION LIST",
    "FLUSHALL",
    "FLUSHDB",
    "SWAPDB 0 1",
    "CONFIG GET maxmemory",
    "CONFIG SET maxmemory 1mb",
    "CLIENT LIST",
    "CLIENT KILL ID 1",
    "MONITOR",
    "ACL LIST",
    "PUBSUB CHANNELS",
    "SAVE",
    "BGSAVE",
    "SHUTDOWN",
    "SLOWLOG GET",
    "LATENCY DOCTOR",
];

/// How many secret rows the inventory keeps for a provision made for `login`.
fn kept_for(mesh: &Mesh, login: &str) -> i64 {
    let db = rusqlite::Connection::open(mesh.inventory()).expect("the inventory opens");
    db.query_row(
        "SELECT count(*) FROM secrets WHERE provision LIKE '%/' || ?1",
        [login],
        |r| r.get(0),
    )
    .expect("the secrets table")
}

/// The consumer's heartbeat, as the consumer itself may read it, within a few beats.
fn heartbeat(port: u64, login: &str, password: &str) -> String {
    let ask = || redis(port, login, password, &format!("GET {login}:heartbeat"));
    within(std::time::Duration::from_secs(15), || {
        Some(ask()).filter(|beat| beat.parse::<u64>().is_ok())
    })
    .unwrap_or_else(ask)
}

#[test]
fn each_consumer_has_its_own_login_waits_for_it_and_loses_it_when_taken_away() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    for n in ["node1", "node2", "node3"] {
        on(n, "rm -rf /srv/mesh/kv /srv/mesh/kv-client");
    }
    mesh.run(&["assign", "kv", "node1"]).ok();
    mesh.run(&["assign", "kv-client", "node2"]).ok();

    // one push: node1 first, then node2 once node1 confirmed its login
    let pushed = mesh.run(&["push", "--all", "--json"]).ok().json();
    for n in ["node1", "node2", "node3"] {
        assert_eq!(node_result(&pushed, n)["outcome"], "applied", "{pushed}");
    }
    let port = port(&mesh);
    let p2 = on("node2", &format!("cat {PASSWORD}")).trim().to_string();
    assert_eq!(p2.len(), 32);
    assert!(
        heartbeat(port, "kv-client_node2", &p2)
            .parse::<u64>()
            .is_ok(),
        "no heartbeat from node2"
    );
    // no access without a login
    assert!(
        on("node1", &format!("redis-cli -p {port} GET x 2>&1")).contains("NOAUTH"),
        "the default user is open"
    );

    // a new consumer waits for its provider: shown first, then made in one push
    mesh.run(&["assign", "kv-client", "node3"]).ok();
    let plan = mesh.run(&["plan", "--all"]).code(3).stdout;
    assert!(
        plan.contains("node3: kv-client is waiting for kv@node1"),
        "{plan}"
    );
    mesh.run(&["push", "--all"]).ok();
    let p3 = on("node3", &format!("cat {PASSWORD}")).trim().to_string();
    assert_ne!(p2, p3);
    assert!(
        heartbeat(port, "kv-client_node3", &p3)
            .parse::<u64>()
            .is_ok(),
        "no heartbeat from node3"
    );

    // neither can write with the other's: its own keys only, its own password only
    assert_eq!(
        redis(port, "kv-client_node2", &p2, "SET kv-client_node2:x 1"),
        "OK"
    );
    let theirs = redis(port, "kv-client_node2", &p2, "SET kv-client_node3:x 1");
    assert!(theirs.contains("NOPERM"), "{theirs}");
    let borrowed = redis(port, "kv-client_node3", &p2, "SET kv-client_node3:x 1");
    assert!(borrowed.contains("WRONGPASS"), "{borrowed}");
    let peek = redis(
        port,
        "kv-client_node3",
        &p3,
        "GET kv-client_node2:heartbeat",
    );
    assert!(peek.contains("NOPERM"), "{peek}");

    // a login reaches its own keys and nothing of the store as a whole
    let mine = |command: &str| redis(port, "kv-client_node2", &p2, command);
    for command in REFUSED {
        let said = mine(command);
        assert!(said.contains("NOPERM"), "{command}: {said}");
    }
    let debug = mine("DEBUG SLEEP 0");
    assert!(
        debug.contains("NOPERM") || debug.contains("not allowed"),
        "{debug}"
    );
    // no script (an endless one stalls every login), no broadcast tracking (it names every key)
    for command in [
        "EVAL \"return redis.call('INCR','kv-client_node2:e')\" 0",
        "EVAL \"while true do end\" 0",
        "SCRIPT LOAD \"return 1\"",
        "FCALL f 0",
        "CLIENT TRACKING on BCAST",
        "CLIENT TRACKINGINFO",
        "CLIENT CACHING yes",
        "CLIENT GETREDIR",
    ] {
        let said = mine(command);
        assert!(said.contains("NOPERM"), "{command}: {said}");
    }
    for (command, answer) in [
        ("SET kv-client_node2:n 41", "OK"),
        ("INCR kv-client_node2:n", "42"),
        ("GET kv-client_node2:n", "42"),
        ("EXPIRE kv-client_node2:n 100", "1"),
        ("PERSIST kv-client_node2:n", "1"),
        ("TTL kv-client_node2:n", "-1"),
        ("EXISTS kv-client_node2:n", "1"),
        ("TYPE kv-client_node2:n", "string"),
        ("HSET kv-client_node2:h f v", "1"),
        ("RENAME kv-client_node2:h kv-client_node2:g", "OK"),
        ("DEL kv-client_node2:n kv-client_node2:g", "2"),
        ("PUBLISH kv-client_node2:news hi", "0"),
        ("CLIENT SETNAME mine", "OK"),
    ] {
        assert_eq!(mine(command), answer, "{command}");
    }

    // a consumer taken away: the provider's plan shows its file changing first, then the login
    // is gone
    mesh.run(&["unassign", "kv-client", "node3"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(plan.contains("/srv/mesh/kv/data/auth.conf"), "{plan}");
    assert!(plan.contains("kv.service"), "{plan}");
    assert_eq!(
        kept_for(&mesh, "kv-client_node3"),
        1,
        "kept until the machine has withdrawn it"
    );
    mesh.run(&["push", "--all"]).ok();
    let gone = redis(port, "kv-client_node3", &p3, "PING");
    assert!(gone.contains("WRONGPASS"), "{gone}");
    assert_eq!(redis(port, "kv-client_node2", &p2, "PING"), "PONG");
    // withdrawn: its secret leaves the inventory too, and a consumer back gets a new one
    assert_eq!(kept_for(&mesh, "kv-client_node3"), 0);
    assert_eq!(kept_for(&mesh, "kv-client_node2"), 1);
    mesh.run(&["assign", "kv-client", "node3"]).ok();
    mesh.run(&["push", "--all"]).ok();
    let again = on("node3", &format!("cat {PASSWORD}")).trim().to_string();
    assert_eq!(again.len(), 32);
    assert_ne!(again, p3, "a consumer back has a new password");
    assert!(
        heartbeat(port, "kv-client_node3", &again)
            .parse::<u64>()
            .is_ok(),
        "no heartbeat from node3 back"
    );
    mesh.run(&["unassign", "kv-client", "node3"]).ok();
    mesh.run(&["push", "--all"]).ok();

    // the provider taken away, forced: the consumer is held alone, the rest goes ahead
    mesh.run(&["unassign", "kv", "node1"]).code(1);
    mesh.run(&["unassign", "kv", "node1", "--force"]).ok();
    let pushed = mesh.run(&["push", "--all", "--json"]).code(3).json();
    assert_eq!(
        node_result(&pushed, "node1")["outcome"],
        "applied",
        "{pushed}"
    );
    assert!(
        pushed
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["node"] == "node2"
                && r["outcome"] == "held"
                && r["assignment"]["instance"] == "kv-client"),
        "{pushed}"
    );
    assert_eq!(
        on("node1", "systemctl is-active kv.service || true").trim(),
        "inactive"
    );
    assert_eq!(
        on("node2", "systemctl is-active kv-client.service").trim(),
        "active",
        "the held consumer keeps what it has"
    );

    // its own removal goes through
    mesh.run(&["unassign", "kv-client", "node2"]).ok();
    mesh.run(&["push", "--all"]).ok();
    assert_eq!(
        on(
            "node2",
            &format!("test -e {PASSWORD} && echo there || echo gone")
        )
        .trim(),
        "gone"
    );
    on("node1", "rm -rf /srv/mesh/kv");
}
