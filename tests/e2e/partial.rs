//! A fleet goes ahead around what cannot: an assignment waiting for a provider whose
//! machine is down is held alone, keeping what it has on its machine, while the rest of its node
//! is pushed; a node whose module is missing or broken fails alone, named, is sent nothing (so
//! nothing that module made is undone), and the other nodes are planned and pushed.

use crate::util::{Mesh, invocation, node_result, on, states};

const PASSWORD: &str = "/srv/mesh/kv-client/home/store-password";

/// Starts a stopped lab machine again however the test ends, so later tests have it.
struct Started<'m>(&'m Mesh, &'static str);

impl Drop for Started<'_> {
    fn drop(&mut self) {
        self.0.run(&["lab", "start", self.1]);
    }
}

/// What earlier tests left given back, then `kv` on node1 and a `kv-client` (and `also`) on
/// node2, pushed.
fn kv_on_node1_and_its_client_on_node2(mesh: &Mesh, also: &[&str]) {
    mesh.run(&["push", "--all"]).ok();
    for n in ["node1", "node2"] {
        on(n, "rm -rf /srv/mesh/kv /srv/mesh/kv-client");
    }
    mesh.run(&["assign", "kv", "node1"]).ok();
    for module in std::iter::once(&"kv-client").chain(also) {
        mesh.run(&["assign", module, "node2"]).ok();
    }
    mesh.run(&["push", "--all"]).ok();
}

#[test]
fn a_consumer_waiting_for_a_provider_that_is_down_is_held_alone_and_the_rest_of_its_node_goes() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    kv_on_node1_and_its_client_on_node2(&mesh, &["motd"]);
    let password = on("node2", &format!("cat {PASSWORD}"));
    let stamp = on("node2", &format!("stat -c '%i %Y %a %U' {PASSWORD}"));
    let heartbeat = invocation("node2", "kv-client.service");

    // every consumer gets a new password: node2's waits until node1 has made its new login, and
    // node1 is down; an urgent motd change for node2 must still get there
    mesh.run(&["secret", "rotate", "kv", "kv.password"]).ok();
    mesh.run(&["lab", "stop", "node1"]).ok();
    let _node1 = Started(&mesh, "node1");
    mesh.run(&[
        "settings",
        "set",
        "motd",
        "--node",
        "node2",
        "contact=oncall@example.org",
    ])
    .ok();

    let plan = mesh.run(&["plan", "node2"]).code(3).stdout;
    assert!(
        plan.contains("node2: kv-client is waiting for kv@node1"),
        "{plan}"
    );
    assert!(plan.contains("~ motd:file:/etc/motd"), "{plan}");
    assert!(
        plan.contains("0 to add, 1 to change, 0 to remove"),
        "{plan}"
    );
    let planned = mesh.run(&["plan", "node2", "--json"]).code(3).json();
    let node2 = &planned[0];
    assert_eq!(node2["held"][0]["instance"], "kv-client", "{planned}");
    assert_eq!(node2["held"][0]["waiting_for"], "kv@node1", "{planned}");
    let changed: Vec<&str> = node2["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["motd:file:/etc/motd"], "{planned}");

    // the push does what the plan said: the consumer held, the motd sent
    let pushed = mesh.run(&["push", "node2", "--json"]).code(3).json();
    let node2 = node_result(&pushed, "node2");
    assert_eq!(node2["outcome"], "applied", "{pushed}");
    let held = pushed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["outcome"] == "held")
        .unwrap_or_else(|| panic!("no held assignment in {pushed}"));
    assert_eq!(held["node"], "node2", "{pushed}");
    assert_eq!(held["assignment"]["instance"], "kv-client", "{pushed}");
    assert_eq!(held["assignment"]["module"], "kv-client", "{pushed}");
    assert_eq!(held["assignment"]["waiting_for"], "kv@node1", "{pushed}");
    for (id, state) in states(node2) {
        let want = if id == "motd:file:/etc/motd" {
            "changed"
        } else {
            "unchanged"
        };
        assert_eq!(state, want, "{id}: {pushed}");
    }
    assert!(
        on("node2", "cat /etc/motd").contains("oncall@example.org"),
        "the motd change did not reach node2"
    );
    // what the held consumer has stays exactly as it was: not removed, not rewritten, its
    // process not restarted
    assert_eq!(on("node2", &format!("cat {PASSWORD}")), password);
    assert_eq!(
        on("node2", &format!("stat -c '%i %Y %a %U' {PASSWORD}")),
        stamp
    );
    assert_eq!(invocation("node2", "kv-client.service"), heartbeat);
    assert_eq!(
        on("node2", "systemctl is-active kv-client.service").trim(),
        "active"
    );
    // the plan still holds it, and has nothing else left to send
    let plan = mesh.run(&["plan", "node2"]).code(3).stdout;
    assert!(plan.contains("node2: no changes"), "{plan}");
    assert!(plan.contains("kv-client is waiting for kv@node1"), "{plan}");

    // its provider back: one push makes the new login and then delivers the new password
    mesh.run(&["lab", "start", "node1"]).ok();
    mesh.run(&["push", "--all"]).ok();
    let new = on("node2", &format!("cat {PASSWORD}"));
    assert_ne!(new, password, "the rotated password was not delivered");
    mesh.run(&["plan", "--all"]).ok();

    for (instance, node) in [("kv-client", "node2"), ("motd", "node2"), ("kv", "node1")] {
        mesh.run(&["unassign", instance, node]).ok();
    }
    mesh.run(&["push", "--all"]).ok();
}

const SVC: &str = r#"{
  "name": "svc", "version": "1", "description": "A file of its own.",
  "resources": [{"kind": "file", "path": "/etc/mesh-partial.conf", "template": "svc.conf"}]
}"#;

const OTHER: &str = r#"{
  "name": "other", "version": "1", "description": "Keeps the catalogue folder from being empty.",
  "resources": [{"kind": "file", "path": "/etc/mesh-other.conf", "template": "other.conf"}]
}"#;

#[test]
fn a_node_whose_module_is_broken_or_gone_fails_alone_keeps_what_it_has_and_the_others_go() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // svc is the folder's only module: taken away, it leaves the folder empty
    let cat = mesh.module("svc", SVC, &[("svc.conf", "svc\n")]);
    mesh.run(&["assign", "motd", "node1", "node2", "node3"])
        .ok();
    mesh.run(&["assign", "svc", "node1"]).ok();
    mesh.run(&["push", "--all"]).ok();
    assert_eq!(on("node1", "cat /etc/mesh-partial.conf"), "svc\n");
    let motd1 = on("node1", "cat /etc/motd");

    let mut contact = 0;
    for (broken, why) in [
        ("{ not json", "module svc is broken"),
        ("", "no module called \"svc\""),
    ] {
        if broken.is_empty() {
            std::fs::remove_dir_all(cat.join("svc")).unwrap();
        } else {
            std::fs::write(cat.join("svc").join("module.json"), broken).unwrap();
        }
        // a change for every node: the others get it, node1 is sent nothing
        contact += 1;
        let contact = format!("contact=ops{contact}@example.org");
        mesh.run(&["settings", "set", "motd", &contact]).ok();

        let plan = mesh.run(&["plan", "--all"]).code(2).stdout;
        assert!(plan.contains("node1: FAILED (refused)"), "{plan}");
        assert!(
            plan.contains("svc (module svc): ") && plan.contains(why),
            "{plan}"
        );
        for n in ["node2", "node3"] {
            assert!(
                plan.contains(&format!("{n}: 0 to add, 1 to change")),
                "{plan}"
            );
        }
        let planned = mesh.run(&["plan", "--all", "--json"]).code(2).json();
        let node1 = node_result(&planned, "node1");
        assert_eq!(node1["outcome"], "failed", "{planned}");
        assert_eq!(node1["kind"], "refused", "{planned}");
        assert!(node1["reason"].as_str().unwrap().contains(why), "{planned}");
        assert_eq!(
            node_result(&planned, "node2")["changes"][0]["id"],
            "motd:file:/etc/motd"
        );

        let checked = mesh.run(&["check", "--all", "--json"]).code(2).json();
        assert_eq!(
            node_result(&checked, "node1")["kind"],
            "refused",
            "{checked}"
        );
        assert_eq!(
            node_result(&checked, "node3")["outcome"],
            "checked",
            "{checked}"
        );

        let pushed = mesh.run(&["push", "--all", "--json"]).code(2).json();
        let node1 = node_result(&pushed, "node1");
        assert_eq!(node1["outcome"], "failed", "{pushed}");
        assert_eq!(node1["kind"], "refused", "{pushed}");
        let reason = node1["reason"].as_str().unwrap();
        assert!(
            reason.contains("svc (module svc): ") && reason.contains(why),
            "{reason}"
        );
        for n in ["node2", "node3"] {
            assert_eq!(node_result(&pushed, n)["outcome"], "applied", "{pushed}");
            assert!(on(n, "cat /etc/motd").contains(&contact[8..]), "{n}");
        }
        // nothing was sent to node1: what svc made there stays, and so does the rest
        assert_eq!(on("node1", "cat /etc/mesh-partial.conf"), "svc\n");
        assert_eq!(on("node1", "cat /etc/motd"), motd1);
        let history = mesh.run(&["history", "node1", "--limit", "1"]).ok().stdout;
        assert!(history.contains("failed"), "{history}");

        // the text says the same
        let pushed = mesh.run(&["push", "--all"]).code(2).stdout;
        assert!(
            pushed.contains("node1: FAILED (refused)") && pushed.contains(why),
            "{pushed}"
        );
    }
    // every node refused: the push is refused whole, as before, and nothing is sent anywhere
    let alone = mesh.run(&["push", "node1"]).code(1).stderr;
    assert!(alone.contains("refused, nothing was sent"), "{alone}");

    mesh.module("svc", SVC, &[("svc.conf", "svc\n")]);
    mesh.run(&["push", "--all"]).ok();
    assert_eq!(on("node1", "cat /etc/mesh-partial.conf"), "svc\n");
    mesh.run(&["unassign", "svc", "node1"]).ok();
    mesh.run(&["unassign", "motd", "node1", "node2", "node3"])
        .ok();
    mesh.run(&["push", "--all"]).ok();
    assert_eq!(
        on(
            "node1",
            "test -e /etc/mesh-partial.conf && echo there || echo gone"
        )
        .trim(),
        "gone"
    );
}

#[test]
fn a_consumer_whose_module_breaks_keeps_its_login_at_its_provider_while_its_node_fails() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    kv_on_node1_and_its_client_on_node2(&mesh, &[]);
    let password = on("node2", &format!("cat {PASSWORD}")).trim().to_string();
    let port = mesh
        .run(&["config", "kv", "--node", "node1", "--json"])
        .ok()
        .json()["requirements"]["listen.port"]
        .as_u64()
        .expect("kv has a port");
    let ping = || {
        on(
            "node1",
            &format!(
                "redis-cli --no-auth-warning -p {port} --user kv-client_node2 --pass '{password}' \
                 PING 2>&1"
            ),
        )
        .trim()
        .to_string()
    };
    assert_eq!(ping(), "PONG");

    // an override of kv-client that does not load hides the built-in one: its node fails alone,
    // and the provider, pushed, keeps the login it made for it
    let cat = mesh.module("kv-client", "{ not json", &[]);
    mesh.module("other", OTHER, &[("other.conf", "other\n")]);
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(plan.contains("node1: no changes"), "{plan}");
    let pushed = mesh.run(&["push", "--all", "--json"]).code(2).json();
    assert_eq!(node_result(&pushed, "node2")["kind"], "refused", "{pushed}");
    assert_eq!(
        node_result(&pushed, "node1")["outcome"],
        "applied",
        "{pushed}"
    );
    assert_eq!(ping(), "PONG", "the broken consumer lost its login");
    assert_eq!(on("node2", &format!("cat {PASSWORD}")).trim(), password);

    // fixed: the same password still answers, nothing to redo
    std::fs::remove_dir_all(cat.join("kv-client")).unwrap();
    mesh.run(&["push", "--all"]).ok();
    assert_eq!(on("node2", &format!("cat {PASSWORD}")).trim(), password);
    assert_eq!(ping(), "PONG");
    mesh.run(&["unassign", "kv-client", "node2"]).ok();
    mesh.run(&["unassign", "kv", "node1"]).ok();
    mesh.run(&["push", "--all"]).ok();
}
