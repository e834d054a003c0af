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
        ("/mesh-inventory", json!(0), "`mesh-inventory` 0"),
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
