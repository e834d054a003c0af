//! An inventory document is data from elsewhere (a colleague's branch, an attacker's pull
//! request): `inventory import` refuses whatever `node add`, `assign`, `place`, `seat` and
//! `settings` would refuse, naming the entry and field, and leaves the inventory as it was. A
//! name that reached the inventory some other way is still printed escaped.

use serde_json::{Value, json};

use crate::inventory_file::{export, fleet};
use crate::util::{Mesh, path_str};

const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOOvBThM0hmZ9HlF4VbIF07SMlK33m6basGSomemc5km";

fn bytes(mesh: &Mesh) -> Vec<u8> {
    std::fs::read(mesh.inventory()).unwrap()
}

#[test]
fn every_hostile_document_is_refused_naming_the_field_and_nothing_changes() {
    let mesh = fleet();
    let good: Value = serde_json::from_str(&export(&mesh)).unwrap();
    // n1 is nodes[0]; queue on n1 assignments[0]; app's mesh-wide layer layers[0]; jobs seats[0]
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "/assignments/0/instance",
            json!("../../x\nExecStartPre=/bin/touch /tmp/pwned"),
            "assignments[0].instance",
        ),
        (
            "/assignments/0/instance",
            json!("z\u{1b}[1;31mRED\u{1b}]0;owned\u{7}"),
            "assignments[0].instance",
        ),
        (
            "/assignments/0/module",
            json!("no-such\u{1b}[2J"),
            "assignments[0].module",
        ),
        (
            "/assignments/0/placements",
            json!({"data": "../../../etc"}),
            "assignments[0].placements",
        ),
        (
            "/seats/0/seat",
            json!("s\u{1b}]0;SEAT\u{7}"),
            "seats[0].seat",
        ),
        ("/seats/0/node", json!("ghost"), "seats[0].node"),
        ("/layers/0/module", json!("ghost\u{7}"), "layers[0].module"),
        ("/nodes/0/jump", json!("a\nb\u{1b}[2J@n2"), "nodes[0].jump"),
        (
            "/nodes/0/jump",
            json!("-oProxyCommand=x@n2"),
            "nodes[0].jump",
        ),
        ("/nodes/0/jump", json!("n1"), "nodes[0].jump"),
        ("/nodes/0/identity", json!("/dev/zero"), "nodes[0].identity"),
        ("/nodes/0/root", json!("../../etc"), "nodes[0].root"),
        ("/nodes/0/root", json!("/etc"), "nodes[0].root"),
        ("/nodes/0/user", json!("deploy"), "nodes[0].sudo"),
        (
            "/nodes/0/host-key",
            json!("not a key \u{1b}[2J"),
            "nodes[0].host-key",
        ),
        ("/nodes/0/port", json!(0), "nodes[0].port"),
        ("/nodes/0/tags", json!(["bad tag\u{1b}"]), "nodes[0].tags"),
        (
            "/nodes/0/ports",
            json!({"store.listen": 20000, "queue.listen": 20000}),
            "nodes[0].ports: 20000 is given to both",
        ),
        ("/mesh-inventory", json!(0), "`mesh-inventory` 0"),
        // what `settings set` refuses: a control character (it would reach files and every
        // terminal that shows them), an undeclared key, a wrong type, a module there is none of
        (
            "/layers/0/values",
            json!({"labels": {"k": "\u{1b}]0;owned\u{7}\u{1b}[2J"}}),
            "layers[0].values",
        ),
        (
            "/layers/0/values",
            json!({"labels": {"\u{0}": 1}}),
            "layers[0].values",
        ),
        (
            "/layers/1/values",
            json!({"labels": ["a\u{8}b"]}),
            "layers[1].values",
        ),
        (
            "/layers/0/values",
            json!({"shell": "/bin/sh"}),
            "layers[0].values: app declares no setting \"shell\"",
        ),
        (
            "/layers/0/values",
            json!({"pool": "three"}),
            "layers[0].values: app: pool takes an integer",
        ),
        ("/layers/0/module", json!("ghost"), "layers[0].module"),
        // app runs on n2 only as app2 then: whose is the node layer of app?
        (
            "/assignments/2/instance",
            json!("app2"),
            "layers[1].module: app runs on n2 as app2",
        ),
        // what `assign` refuses: a module the catalogue lacks, a pin it could not make
        (
            "/assignments/0/module",
            json!("ghost"),
            "assignments[0].module",
        ),
        (
            "/assignments/2/pins",
            json!({"db": "queue@n1"}),
            "assignments[2].pins: queue@n1 (queue) does not provide db",
        ),
        (
            "/assignments/2/pins",
            json!({"db": "store@n3"}),
            "assignments[2].pins: nothing runs on n3",
        ),
        (
            "/assignments/2/pins",
            json!({"data": "store@n1"}),
            "assignments[2].pins: app has no module requirement",
        ),
        // what `place` refuses: a requirement that is no directory, a system directory
        (
            "/assignments/4/placements",
            json!({"cache": "/srv/cache"}),
            "assignments[4].placements",
        ),
        (
            "/assignments/4/placements",
            json!({"data": "/etc/ssh"}),
            "assignments[4].placements: data=\"/etc/ssh\" cannot be app's directory: /etc is the system's own",
        ),
        (
            "/assignments/4/placements",
            json!({"data": "/home"}),
            "assignments[4].placements",
        ),
        // what `seat set` refuses: a holder that does not deliver it, or does not run there
        ("/seats/0/instance", json!("store"), "seats[0].instance"),
        ("/seats/0/node", json!("n2"), "seats[0].instance"),
    ];
    let before = bytes(&mesh);
    let file = mesh.dir.path().join("hostile.json");
    let mut both_keys = good.clone();
    both_keys["nodes"][0]["host-key"] = json!(KEY);
    both_keys["nodes"][1]["host-key"] = json!(KEY);
    let docs = cases
        .into_iter()
        .map(|(at, value, field)| {
            let mut doc = good.clone();
            let (parent, key) = at.rsplit_once('/').unwrap();
            match doc.pointer_mut(parent) {
                Some(Value::Object(map)) => map.insert(key.to_string(), value),
                Some(Value::Array(list)) => Some(std::mem::replace(
                    &mut list[key.parse::<usize>().unwrap()],
                    value,
                )),
                _ => panic!("{at}"),
            };
            (doc, field)
        })
        .chain([(
            both_keys,
            "nodes[1].host-key: n1 has this host key: one machine is one node",
        )]);
    for (doc, field) in docs {
        std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        for dry in [true, false] {
            let mut args = vec!["inventory", "import", path_str(&file), "--replace"];
            if dry {
                args.push("--dry-run");
            }
            let run = mesh.run(&args).code(1);
            assert!(
                run.stderr.contains(field) && !run.stderr.contains('\u{1b}'),
                "{field} not in {}",
                run.stderr
            );
            assert!(bytes(&mesh) == before, "{field}: the inventory changed");
        }
    }
}

#[test]
fn a_name_with_a_control_character_is_printed_escaped() {
    let mesh = Mesh::new();
    mesh.run(&["node", "add", "n1", "--address", "192.0.2.1"])
        .ok();
    // written behind mesh's back, as an older mesh's import could have
    let db = rusqlite::Connection::open(mesh.inventory()).unwrap();
    db.execute_batch(
        "UPDATE nodes SET address = 'a\u{1b}]0;owned\u{7}', jump = 'x\u{1b}[2J';
         INSERT INTO tags (node, tag) VALUES ('n1', 't\u{1b}[31m');
         INSERT INTO seats (seat, instance, node) VALUES ('s\u{1b}]0;SEAT\u{7}', 'i\u{1b}[1m', 'n1');",
    )
    .unwrap();
    for args in [
        &["node", "show", "n1"][..],
        &["node", "list"],
        &["seat", "list"],
    ] {
        let run = mesh.run(args).ok();
        assert!(
            !run.stdout.contains('\u{1b}') && run.stdout.contains("\\u{1b}"),
            "{args:?}: {:?}",
            run.stdout
        );
    }
}

/// A provider and its consumer, resolved by the rules (no pin): n1 runs `kv`, n2 `kv-client`.
fn provider_and_consumer() -> Mesh {
    let mesh = Mesh::new();
    for (n, address) in [("n1", "192.0.2.1"), ("n2", "192.0.2.2")] {
        mesh.run(&["node", "add", n, "--address", address]).ok();
    }
    mesh.run(&["assign", "kv", "n1"]).ok();
    mesh.run(&["assign", "kv-client", "n2"]).ok();
    mesh
}

#[test]
fn an_import_takes_a_provider_from_its_consumers_only_as_unassign_would() {
    let mesh = provider_and_consumer();
    let good: Value = serde_json::from_str(&export(&mesh)).unwrap();
    assert_eq!(good["assignments"][0]["instance"], "kv", "{good}");
    let file = mesh.dir.path().join("hostile.json");
    // `unassign` refuses this without --force
    let unassign = mesh.run(&["unassign", "kv", "n1"]).code(1);
    assert!(
        unassign.stderr.contains("kv-client@n2"),
        "{}",
        unassign.stderr
    );
    let before = bytes(&mesh);

    // the provider's instance name kept, another module under it: kv is taken off
    let mut remodule = good.clone();
    remodule["assignments"][0]["module"] = json!("motd");
    // the provider left out of the file
    let mut dropped = good.clone();
    dropped["assignments"].as_array_mut().unwrap().remove(0);
    for (doc, field) in [
        (
            &remodule,
            "assignments[0].module: kv on n1 runs motd in the file, not kv",
        ),
        (&dropped, "assignments: kv on n1 is not in the file"),
    ] {
        std::fs::write(&file, serde_json::to_string_pretty(doc).unwrap()).unwrap();
        // a removal, as the unassign it stands for: refused without --replace
        let run = mesh.run(&["inventory", "import", path_str(&file)]).code(1);
        assert!(
            run.stderr.contains("assignment kv on n1") && run.stderr.contains("--replace"),
            "{}",
            run.stderr
        );
        assert!(bytes(&mesh) == before, "{field}: the inventory changed");
        // and it answers a consumer the file keeps: refused without --force, naming both
        let run = mesh
            .run(&["inventory", "import", path_str(&file), "--replace"])
            .code(1);
        assert!(
            run.stderr.contains(field)
                && run.stderr.contains("kv-client@n2")
                && run.stderr.contains("--force"),
            "{field} not in {}",
            run.stderr
        );
        assert!(bytes(&mesh) == before, "{field}: the inventory changed");
    }
    // a consumer taken off with its provider is no orphan
    let mut both = dropped.clone();
    both["assignments"].as_array_mut().unwrap().clear();
    std::fs::write(&file, serde_json::to_string_pretty(&both).unwrap()).unwrap();
    mesh.run(&[
        "inventory",
        "import",
        path_str(&file),
        "--replace",
        "--dry-run",
    ])
    .ok();
    // told --force, as `unassign --force`, it goes, and the consumer is held
    std::fs::write(&file, serde_json::to_string_pretty(&remodule).unwrap()).unwrap();
    mesh.run(&[
        "inventory",
        "import",
        path_str(&file),
        "--replace",
        "--force",
    ])
    .ok();
    let now: Value = serde_json::from_str(&export(&mesh)).unwrap();
    assert_eq!(now["assignments"][0]["module"], "motd", "{now}");
}
