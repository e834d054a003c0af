//! Every rendered path is checked with the wire's one rule: a path the definition kept can still
//! leave its place once a setting or a placement fills it in, and the node is then refused whole.

use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, Layer, Node};

use super::{ResolveError, compose};

const MODULE: &str = r#"{"name": "leaky", "version": "1", "description": "Paths from settings.",
    "settings": [
      {"name": "sub", "type": "string", "meaning": "Where under its data.", "default": "ok"},
      {"name": "conf", "type": "string", "meaning": "Its configuration file.", "default": "/etc/leaky.conf"}
    ],
    "requires": [{"name": "data", "kind": "host", "directory": {}}],
    "resources": [
      {"kind": "container", "image": "busybox", "mounts": [{"source": "${data.path}/${sub}", "target": "/data"}]},
      {"kind": "file", "path": "${conf}", "template": "t.txt"}
    ]}"#;

/// The problems composing a node with `leaky` gives, after `prepare` changed the inventory.
fn problems(prepare: impl FnOnce(&mut Inventory)) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("cat").join("leaky");
    std::fs::create_dir_all(&m).unwrap();
    std::fs::write(m.join("module.json"), MODULE).unwrap();
    std::fs::write(m.join("t.txt"), "x\n").unwrap();
    let catalogue = Catalogue::load(&[dir.path().join("cat")]).unwrap();
    let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
    inv.add_node(&Node::new("n1", "192.0.2.1")).unwrap();
    inv.assign("n1", "leaky", "leaky").unwrap();
    prepare(&mut inv);
    let node = inv.node("n1").unwrap();
    match compose(&inv, &catalogue, &node) {
        Ok(c) => {
            assert!(!c.declaration.resources.is_empty());
            Vec::new()
        }
        Err(ResolveError::Unresolved { problems, .. }) => {
            problems.iter().map(ToString::to_string).collect()
        }
        Err(e) => panic!("{e}"),
    }
}

fn set(inv: &mut Inventory, key: &str, value: &str) {
    let mut layer = Layer::new();
    layer.insert(key.into(), value.into());
    inv.set_layer("leaky", crate::inventory::LayerOf::Mesh, &layer)
        .unwrap();
}

#[test]
fn a_kept_definition_composes() {
    assert_eq!(problems(|_| {}), Vec::<String>::new());
}

#[test]
fn a_mount_source_that_leaves_its_directory_once_filled_is_refused() {
    let p = problems(|inv| set(inv, "sub", "../../etc"));
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("leaky (leaky from ")
            && p[0].contains("leaky/module.json): resources[0].mounts[0].source reads as \"")
            && p[0].contains("/leaky/data/../../etc\"")
            && p[0].contains("`..`"),
        "{}",
        p[0]
    );
}

#[test]
fn a_file_in_the_helpers_state_is_refused() {
    for state in ["/var/lib/mesh/lock", "/var/lib/mesh/record.json"] {
        let p = problems(|inv| set(inv, "conf", state));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains(&format!("resources[1].path reads as {state:?}"))
                && p[0].contains("helper's own state"),
            "{}",
            p[0]
        );
    }
}

#[test]
fn a_directory_placed_in_the_helpers_state_is_refused() {
    let p = problems(|inv| inv.place("n1", "leaky", "data", "/var/lib/mesh").unwrap());
    assert!(
        p.iter()
            .any(|p| p.contains("the directory it requires as data")
                && p.contains("helper's own state")
                && p.contains("mesh place leaky n1 data=PATH")),
        "{p:?}"
    );
}
