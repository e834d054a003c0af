//! A provider and its consumer on lab machines (seed 001, live): the built-in `kv` module (Redis)
//! runs twice on one machine under two instance names, each on its own port, and a `kv-client`
//! on another machine writes into the one it is pinned to, with the login and password that
//! store made for it alone, its password delivered as a file and printed nowhere.

use crate::util::{Mesh, on, within};

/// The ACL lines a kv instance's Redis was given, read on the machine itself.
fn acl_on(node: &str, instance: &str) -> String {
    on(node, &format!("cat /srv/mesh/{instance}/data/auth.conf"))
}

fn port_of(mesh: &Mesh, instance: &str) -> u64 {
    mesh.run(&["config", instance, "--node", "node1", "--json"])
        .ok()
        .json()["requirements"]["listen.port"]
        .as_u64()
        .unwrap_or_else(|| panic!("{instance} has no port"))
}

fn redis(node: &str, port: u64, password: &str, command: &str) -> String {
    on(
        node,
        &format!(
            "REDISCLI_AUTH='{password}' redis-cli --no-auth-warning --user kv-client_node2 -p {port} {command} 2>&1"
        ),
    )
    .trim()
    .to_string()
}

#[test]
fn a_consumer_on_one_machine_talks_to_its_provider_on_another_with_the_password_as_a_file() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on("node1", "rm -rf /srv/mesh/kv-a /srv/mesh/kv-b");
    on("node2", "rm -rf /srv/mesh/kv-client");
    mesh.run(&["assign", "kv", "node1", "--as", "kv-a"]).ok();
    mesh.run(&["assign", "kv", "node1", "--as", "kv-b"]).ok();
    // two providers, none on node2: the consumer must say which
    mesh.run(&["assign", "kv-client", "node2"]).ok();
    let refused = mesh.run(&["plan", "node2"]).code(1).stderr;
    assert!(
        refused.contains("several providers (kv-a@node1, kv-b@node1)"),
        "{refused}"
    );
    mesh.run(&["assign", "kv-client", "node2", "--pin", "store=kv-a@node1"])
        .ok();

    // kv-a has not made the consumer's login yet: the consumer waits, and one push makes both
    let plan = mesh.run(&["plan", "--all", "--diff"]).code(3).stdout;
    assert!(
        plan.contains("node2: kv-client is waiting for kv-a@node1"),
        "{plan}"
    );
    let push = mesh.run(&["push", "--all", "--json"]).ok().stdout;

    // two instances of one module on one machine: two units, two ports; the consumer's login
    // and password are made by the one it is pinned to, and only there
    let (a, b) = (port_of(&mesh, "kv-a"), port_of(&mesh, "kv-b"));
    assert_ne!(a, b);
    let pa = on("node2", "cat /srv/mesh/kv-client/home/store-password")
        .trim()
        .to_string();
    assert_eq!(pa.len(), 32);
    assert!(acl_on("node1", "kv-a").contains(&format!("user kv-client_node2 on >{pa} ")));
    let other = acl_on("node1", "kv-b");
    assert!(!other.contains("kv-client_node2"), "kv-b made a login too");
    for unit in ["kv-a.service", "kv-b.service"] {
        assert_eq!(
            on("node1", &format!("systemctl is-active {unit}")).trim(),
            "active"
        );
    }
    assert_eq!(redis("node1", a, &pa, "PING"), "PONG");
    assert!(redis("node1", b, &pa, "PING").contains("WRONGPASS"));
    // without a login Redis refuses
    assert!(on("node1", &format!("redis-cli -p {a} GET x 2>&1")).contains("NOAUTH"));

    // the consumer on node2 has the password as a file, 0600, and nowhere else
    assert_eq!(
        on(
            "node2",
            "stat -c '%a %U' /srv/mesh/kv-client/home/store-password"
        )
        .trim(),
        "600 root"
    );
    let environment = on("node2", "systemctl show -p Environment kv-client.service");
    assert!(!environment.contains(&pa), "{environment}");
    // and it talks to kv-a on node1 (the heartbeat arrives within a few beats), not to kv-b
    let ask = || redis("node1", a, &pa, "GET kv-client_node2:heartbeat");
    let beat = within(std::time::Duration::from_secs(10), || {
        Some(ask()).filter(|beat| !beat.is_empty())
    })
    .unwrap_or_default();
    assert!(
        beat.parse::<u64>().is_ok(),
        "no heartbeat in kv-a: {beat:?}"
    );

    // the password was printed by nothing mesh said
    let config = mesh
        .run(&["config", "kv-client", "--node", "node2", "--json"])
        .ok()
        .stdout;
    let history = mesh.run(&["history", "--json"]).ok().stdout;
    for (what, said) in [
        ("plan", &plan),
        ("push", &push),
        ("config", &config),
        ("history", &history),
    ] {
        assert!(!said.contains(&pa), "a password is in {what}");
    }

    for (instance, node) in [("kv-client", "node2"), ("kv-a", "node1"), ("kv-b", "node1")] {
        mesh.run(&["unassign", instance, node]).ok();
    }
    mesh.run(&["push", "--all"]).ok();
    assert_eq!(
        on("node1", "systemctl is-active kv-a.service || true").trim(),
        "inactive"
    );
    assert_eq!(
        on(
            "node2",
            "test -e /srv/mesh/kv-client/home/store-password && echo there || echo gone"
        )
        .trim(),
        "gone"
    );
    on("node1", "rm -rf /srv/mesh/kv-a /srv/mesh/kv-b");
}
