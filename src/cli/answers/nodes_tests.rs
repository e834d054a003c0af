//! The answers of `mesh node …` and `mesh lab …`, from fixed values.

use serde_json::json;

use super::*;

fn node() -> Node {
    Node {
        port: 2222,
        jump: Some("ops@bastion".into()),
        ..Node::new("web1", "192.0.2.1")
    }
}

#[test]
fn a_node_added_says_its_name_and_a_local_one_its_root() {
    insta::assert_json_snapshot!(
        "node_added",
        [
            NodeAdded {
                added: "web1",
                local: None
            },
            NodeAdded {
                added: "box",
                local: Some(Path::new("/tmp/box"))
            },
        ]
    );
}

#[test]
fn a_node_listed_is_the_node_as_stored_with_its_tags() {
    insta::assert_json_snapshot!(NodeListed {
        node: node(),
        tags: vec!["web".into()],
    });
}

#[test]
fn a_node_shown_says_each_field_it_is_reached_by_and_where_it_came_from() {
    let n = node();
    let assignments = vec![Assignment {
        node: "web1".into(),
        instance: "site".into(),
        module: "web".into(),
    }];
    let sourced = |value, source: &str| Sourced {
        value,
        source: source.into(),
    };
    let fields = ResolvedFields(vec![
        (
            "hostname",
            Reached::One(sourced(json!("192.0.2.1"), "inventory")),
        ),
        ("port", Reached::One(sourced(json!(2222), "inventory"))),
        (
            "identity_files",
            Reached::Many(vec![sourced(json!("/root/.ssh/id_ed25519"), "default")]),
        ),
        ("known_hosts_files", Reached::Many(vec![])),
        (
            "host_key_alias",
            Reached::One(sourced(json!(null), "default")),
        ),
    ]);
    let tags = vec!["web".to_string()];
    insta::assert_json_snapshot!(
        "node_shown",
        NodeShown {
            node: &n,
            tags: &tags,
            assignments: &assignments,
            resolved: Resolved::Fields(fields),
        }
    );
    insta::assert_json_snapshot!(
        "node_shown_unreachable",
        NodeShown {
            node: &n,
            tags: &[],
            assignments: &[],
            resolved: Resolved::Error {
                error: "no such jump host".into()
            },
        }
    );
}

#[test]
fn a_node_tagged_untagged_edited_pinned_and_removed_says_what_moved() {
    let (moved, now) = (vec!["eu".to_string()], vec!["web".to_string()]);
    let n = node();
    let changed = vec!["port 22 -> 2222".to_string()];
    insta::assert_json_snapshot!(
        "node_changes",
        json!([
            Retagged {
                node: "web1",
                added: Some(&moved),
                removed: None,
                tags: &now
            },
            Retagged {
                node: "web1",
                added: None,
                removed: Some(&moved),
                tags: &now
            },
            NodeEdited {
                node: &n,
                changed: &changed
            },
            Pinned {
                pinned: "web1",
                algorithm: "ssh-ed25519",
                fingerprint: "SHA256:abc",
                replaced: None
            },
            NodeRemoved {
                removed: "web1",
                dropped_hold: None
            },
            NodeRemoved {
                removed: "web2",
                dropped_hold: Some(Generation { generation: 3 })
            },
        ])
    );
}

#[test]
fn a_lab_says_each_machine_it_booted_rebuilt_stopped_and_runs() {
    insta::assert_json_snapshot!(
        "lab",
        json!([
            LabUp {
                machine: LabMachine::Up("node1"),
                address: "10.64.0.2",
                port: 22
            },
            LabUp {
                machine: LabMachine::Rebuilt("node1"),
                address: "10.64.0.2",
                port: 22
            },
            LabDown { down: "64" },
            LabStopped { stopped: "node2" },
            LabStatus {
                name: "node1",
                address: "10.64.0.2",
                port: 22,
                state: "running"
            },
        ])
    );
}
