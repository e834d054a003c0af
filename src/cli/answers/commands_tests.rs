//! The answers of the inventory's and catalogue's commands, from fixed values.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

#[test]
fn init_says_the_inventory_and_the_operator_key() {
    insta::assert_json_snapshot!(Created {
        created: "inventory",
        path: Path::new("/home/op/.local/state/mesh/inventory.db"),
        operator_key: Path::new("/home/op/.config/mesh/operator-key"),
        operator_key_made: true,
        catalogue: &[std::path::PathBuf::from("/home/op/modules")],
    });
}

#[test]
fn what_a_command_did_is_one_document_under_done() {
    let did = serde_json::to_value(AssignDone::Unassigned {
        node: "n1",
        instance: "web",
    })
    .unwrap();
    insta::assert_json_snapshot!(Done { done: vec![did] });
}

#[test]
fn assign_unassign_place_and_seat_say_what_they_did_under_its_verb() {
    insta::assert_json_snapshot!(
        "assigned",
        json!([
            AssignDone::Pinned {
                node: "n2",
                instance: "app",
                requirement: "db",
                provider: "store@n1".into()
            },
            AssignDone::Assigned {
                node: "n2",
                module: "app",
                instance: "app"
            },
            AssignDone::Unassigned {
                node: "n2",
                instance: "app"
            },
            AssignDone::Placed {
                node: "n2",
                instance: "app",
                directory: "data",
                path: "/srv/elsewhere"
            },
            SeatHeld {
                seat: "jobs",
                instance: "queue",
                node: "n1"
            },
        ])
    );
}

#[test]
fn a_secret_set_or_rotated_is_named_never_shown() {
    let named = || SecretNamed {
        node: "n1",
        instance: "tokened",
        secret: "api.token",
    };
    insta::assert_json_snapshot!(
        "secret",
        json!([SecretDone::Set(named()), SecretDone::Rotated(named())])
    );
}

#[test]
fn a_layer_shown_says_whose_it_is_and_what_it_replaced() {
    let layer: Layer = json!({"greeting": "hi"}).as_object().unwrap().clone();
    let history = vec![HistoryEntry {
        at: "2026-01-02 03:04:05".into(),
        action: "set".into(),
        replaced: None,
    }];
    insta::assert_json_snapshot!(
        "layer_shown",
        json!([
            LayerShown {
                module: "demo",
                node: None,
                tag: Some("web"),
                layer: Some(&layer),
                history: &history
            },
            LayerShown {
                module: "demo",
                node: Some("n1"),
                tag: None,
                layer: None,
                history: &[]
            },
        ])
    );
}

#[test]
fn a_module_shown_says_its_settings_contracts_resources_and_rollout() {
    let json = br#"{
      "name": "m", "version": "1", "description": "A module.",
      "settings": [{"name": "port", "type": "integer", "meaning": "Its port.", "default": 80, "cost": "restart"}],
      "requires": [{"name": "db", "kind": "module", "provision": "db", "fields": {"host": {"type": "string"}, "password": {"type": "string", "secret": true}}},
                   {"name": "data", "kind": "host", "directory": {}}],
      "provides": [{"name": "jobs", "seat": true, "fields": {"host": {"type": "string", "value": "x"}}}],
      "rollout": {"max-unavailable": 1},
      "resources": [{"kind": "file", "path": "/etc/m.conf", "template": "m.conf"}]
    }"#;
    let m = crate::catalogue::parse_module(
        "m",
        json,
        &BTreeMap::from([("m.conf".to_string(), b"port ${port}\n".to_vec())]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    insta::assert_json_snapshot!(ModuleShown::new(&m));
}

#[test]
fn history_shows_a_push_with_its_report_and_a_kept_generation_with_its_resources() {
    let row = PushRow {
        id: 12,
        node: "n1".into(),
        started_at: "2026-01-02 03:04:05".into(),
        finished_at: "2026-01-02 03:04:09".into(),
        outcome: "failed".into(),
        reason: Some("n1: timed out".into()),
        digest: "d1".into(),
        generation: None,
    };
    insta::assert_json_snapshot!(
        "push_shown",
        PushShown {
            push: &row,
            report: None
        }
    );
    let resources: Vec<Resource> = serde_json::from_value(json!([{
        "id": "m:file:/etc/m.conf", "instance": "m", "module": "m 1",
        "kind": "file", "path": "/etc/m.conf", "owner": "root", "group": "root", "mode": 420,
        "content": "port 80\n", "source": "s", "settings": {}, "cost": "none", "units": []
    }]))
    .unwrap();
    insta::assert_json_snapshot!(
        "generation_shown",
        GenerationShown {
            node: "n1",
            generation: 3,
            push: 12,
            inventory: "inv-a",
            pushed_at: 1_700_000_000,
            resources: &resources,
        }
    );
}

#[test]
fn an_export_says_where_and_an_import_what_it_changes() {
    let (added, none) = (vec!["node n4".to_string()], vec![]);
    insta::assert_json_snapshot!(
        "inventory",
        json!([
            Exported {
                exported: Path::new("/tmp/fleet.json")
            },
            Imported {
                dry_run: true,
                added: &added,
                changed: &none,
                removed: &none
            },
        ])
    );
}

#[test]
fn a_release_says_each_node_and_the_generation_it_left() {
    insta::assert_json_snapshot!(json!([
        Released {
            node: "n1",
            released: Some(2)
        },
        Released {
            node: "n2",
            released: None
        },
    ]));
}

#[test]
fn lists_of_pushes_seats_and_facts_are_the_rows_as_stored() {
    let row = PushRow {
        id: 12,
        node: "n1".into(),
        started_at: "2026-01-02 03:04:05".into(),
        finished_at: "2026-01-02 03:04:09".into(),
        outcome: "applied".into(),
        reason: None,
        digest: "d1".into(),
        generation: Some(3),
    };
    insta::assert_json_snapshot!("history_list", [row]);
    let seat = crate::inventory::Seat {
        seat: "jobs".into(),
        instance: "queue".into(),
        node: "n1".into(),
        set_at: "2026-01-02 03:04:05".into(),
    };
    insta::assert_json_snapshot!("seat_list", [seat]);
    let facts = serde_json::from_value(json!({
        "os": {"id": "debian", "version": "12", "codename": "bookworm"},
        "arch": "x86_64", "kernel": "6.1.0", "memory": {"mib": 2048}, "cpus": 2,
        "hostname": "n1", "interfaces": [{"name": "eth0", "ipv4": ["192.0.2.1"], "ipv6": []}]
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    let list = [
        NodeFacts {
            node: "n1".into(),
            seen_at: Some("2026-01-02 03:04:05 UTC".into()),
            facts: Some(facts),
        },
        NodeFacts {
            node: "n2".into(),
            seen_at: None,
            facts: None,
        },
    ];
    insta::assert_json_snapshot!("facts", list);
}
