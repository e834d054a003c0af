//! One operator key per inventory: `mesh init` makes the key beside the
//! inventory, each inventory finds its own (the one whose recipient it records), so two
//! inventories on one laptop never share a key and losing one key leaves the other untouched;
//! an inventory whose key an older mesh kept in the old place keeps working. No machine needed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::util::{Mesh, Run, fed};

/// Takes an API token from the operator.
const TOKENED: &str = r#"{
  "name": "tokened", "version": "1", "description": "Reads an API token the operator gives it.",
  "provides": [{"name": "api", "fields": {"token": {"type": "string", "secret": true, "from": "operator"}}}],
  "resources": [{"kind": "file", "path": "/etc/tokened.token", "mode": "0600", "secret": true, "template": "token"}]
}"#;

/// An operator's laptop: a home of its own, no MESH_OPERATOR_KEY, inventories anywhere.
struct Laptop {
    mesh: Mesh,
    home: tempfile::TempDir,
}

impl Laptop {
    /// `mesh ARGS` on `inventory`, with `input` on stdin.
    fn run(&self, inventory: &Path, args: &[&str], input: &str) -> Run {
        let mut cmd = self.mesh.command(args);
        cmd.env("MESH_INVENTORY", inventory)
            .env_remove("MESH_OPERATOR_KEY")
            .env("HOME", self.home.path())
            .env("XDG_STATE_HOME", self.home.path().join("state"));
        fed(cmd, input)
    }

    /// Where an older mesh kept the operator's key.
    fn old_place(&self) -> PathBuf {
        self.home.path().join("state/mesh/operator.key")
    }

    /// An inventory with one node and the operator's token `token` set in it.
    fn inventory(&self, inventory: &Path, token: &str) {
        self.run(inventory, &["init"], "").ok();
        self.run(
            inventory,
            &["node", "add", "n1", "--address", "192.0.2.1"],
            "",
        )
        .ok();
        self.run(inventory, &["assign", "tokened", "n1"], "").ok();
        self.set(inventory, token).ok();
    }

    fn set(&self, inventory: &Path, token: &str) -> Run {
        self.run(
            inventory,
            &["secret", "set", "tokened", "api.token", "--node", "n1"],
            &format!("{token}\n"),
        )
    }
}

/// The token `inventory` keeps, opened with the key at `key`.
fn token(inventory: &Path, key: &Path) -> String {
    let db = rusqlite::Connection::open(inventory).expect("the inventory opens");
    let sealed: String = db
        .query_row("SELECT value FROM secrets", [], |r| r.get(0))
        .expect("a secret");
    let text = std::fs::read_to_string(key).expect("the key");
    let identity = age::x25519::Identity::from_str(text.trim()).expect("an age identity");
    let plain = age::decrypt(&identity, sealed.as_bytes()).expect("sealed to this key");
    String::from_utf8(plain).expect("text")
}

#[test]
fn two_inventories_have_a_key_each_and_one_lost_key_leaves_the_other_working() {
    let laptop = Laptop {
        mesh: Mesh::bare(),
        home: tempfile::tempdir().expect("a home"),
    };
    laptop
        .mesh
        .module("tokened", TOKENED, &[("token", "${api.token}\n")]);
    let (one, two) = (
        tempfile::tempdir().expect("a folder"),
        tempfile::tempdir().expect("a folder"),
    );
    let (fleet, lab) = (one.path().join("fleet.db"), two.path().join("lab.db"));
    laptop.inventory(&fleet, "alpha");
    laptop.inventory(&lab, "bravo");

    // each key beside its inventory, the operator's alone, and none in the old shared place
    let (fleet_key, lab_key) = (one.path().join("fleet.key"), two.path().join("lab.key"));
    for key in [&fleet_key, &lab_key] {
        let mode = std::fs::metadata(key)
            .expect("a key beside the inventory")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{}", key.display());
    }
    assert!(!laptop.old_place().exists());
    assert_ne!(
        std::fs::read(&fleet_key).unwrap(),
        std::fs::read(&lab_key).unwrap()
    );
    assert_eq!(token(&fleet, &fleet_key), "alpha");
    assert_eq!(token(&lab, &lab_key), "bravo");

    // one key lost: its inventory refuses, naming the key; the other goes on as before
    std::fs::remove_file(&fleet_key).unwrap();
    let refused = laptop.set(&fleet, "again").code(1).stderr;
    assert!(
        refused.contains(&fleet_key.display().to_string()) && refused.contains("missing"),
        "{refused}"
    );
    assert!(
        !fleet_key.exists(),
        "no new key is made over sealed secrets"
    );
    laptop.set(&lab, "charlie").ok();
    assert_eq!(token(&lab, &lab_key), "charlie");

    // an inventory whose key an older mesh kept in the old place keeps working, and records it
    let older = one.path().join("older.db");
    laptop.inventory(&older, "delta");
    std::fs::create_dir_all(laptop.old_place().parent().unwrap()).unwrap();
    std::fs::rename(one.path().join("older.key"), laptop.old_place()).unwrap();
    rusqlite::Connection::open(&older)
        .unwrap()
        .execute("DELETE FROM operator_key", [])
        .unwrap();
    laptop.set(&older, "echo").ok();
    assert_eq!(token(&older, &laptop.old_place()), "echo");
    // the lost key's inventory never takes that one for its own
    let still = laptop.set(&fleet, "again").code(1).stderr;
    assert!(still.contains("another inventory's key"), "{still}");
    laptop.set(&lab, "foxtrot").ok();
}
