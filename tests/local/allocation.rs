//! Resolution only reads: a port or a generated secret a node needs and the
//! inventory has not allocated yet is allocated by `mesh assign` and `mesh push`, in one
//! transaction; `mesh plan`, `check` and `config` show what the push will allocate and write
//! nothing.

use std::path::Path;

use super::Mesh;

/// `store` as first assigned: one port, in one file.
const STORE_V1: &str = r#"{
  "name": "store", "version": "1", "description": "A store on a port the host gives it.",
  "requires": [{"name": "admin", "kind": "host", "port": {}}],
  "resources": [{"kind": "file", "path": "/etc/store.conf", "owner": "demo", "group": "demo", "mode": "0644", "template": "store.conf"}]
}"#;

/// `store` a catalogue update later: a second port, and a password the mesh generates for its
/// clients (which no file of its own reads: a local node has no host key a secret file could be
/// sealed to).
const STORE_V2: &str = r#"{
  "name": "store", "version": "2", "description": "A store on ports the host gives it.",
  "requires": [{"name": "admin", "kind": "host", "port": {}}, {"name": "listen", "kind": "host", "port": {}}],
  "provides": [{"name": "db", "fields": {
    "port": {"type": "integer", "value": "${listen.port}"},
    "password": {"type": "string", "secret": true, "generate": true}}}],
  "resources": [{"kind": "file", "path": "/etc/store.conf", "owner": "demo", "group": "demo", "mode": "0644", "template": "store.conf"}]
}"#;

const DB: &str = r#"{"description": "A database.", "fields": {
  "port": {"type": "integer"}, "password": {"type": "string", "secret": true}}}"#;

impl Mesh {
    fn store(&self, json: &str, template: &str) {
        let cat = self.dir.path().join("catalogue");
        std::fs::create_dir_all(cat.join("store")).unwrap();
        std::fs::create_dir_all(cat.join("contracts")).unwrap();
        std::fs::write(cat.join("store/module.json"), json).unwrap();
        std::fs::write(cat.join("store/store.conf"), template).unwrap();
        std::fs::write(cat.join("contracts/db.json"), DB).unwrap();
    }

    fn inventory(&self) -> std::path::PathBuf {
        self.dir.path().join("inventory.db")
    }
}

/// Every row the allocation step writes: the ports and the secrets, as SQL.
fn allocated(inventory: &Path) -> Vec<String> {
    let db = rusqlite::Connection::open(inventory).unwrap();
    let mut rows = Vec::new();
    for sql in [
        "SELECT node || ' ' || instance || ' ' || name || ' ' || port FROM ports ORDER BY 1",
        "SELECT node || ' ' || instance || ' ' || provision || ' ' || field || ' ' || value
         FROM secrets ORDER BY 1",
    ] {
        let mut stmt = db.prepare(sql).unwrap();
        let found = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        rows.extend(found.map(Result::unwrap));
    }
    rows
}

#[test]
fn a_plan_check_and_config_of_a_new_port_and_generated_secret_write_nothing_and_the_push_allocates_what_the_plan_showed()
 {
    let mesh = Mesh::new();
    let root = mesh.root("box");
    mesh.store(STORE_V1, "admin ${admin.port}\n");
    mesh.run(&["node", "add", "box", "--local", root.to_str().unwrap()])
        .ok();
    mesh.run(&["assign", "store", "box"]).ok();
    // assigning allocated its port: the plan reads it
    assert_eq!(allocated(&mesh.inventory()), ["box store admin 20000"]);
    mesh.run(&["push", "box"]).ok();
    let conf = root.join("etc/store.conf");
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), "admin 20000\n");

    // the module now requires another port and generates a secret: nothing has them yet
    mesh.store(STORE_V2, "admin ${admin.port}\nlisten ${listen.port}\n");
    let before = std::fs::read(mesh.inventory()).unwrap();
    let plan = mesh.run(&["plan", "box", "--diff"]).ok().stdout;
    assert!(plan.contains("+listen 20001"), "{plan}");
    // compared whole, not printed: a difference would print the file
    let unchanged = || std::fs::read(mesh.inventory()).unwrap() == before;
    assert!(
        unchanged(),
        "a plan leaves the inventory byte for byte as it was"
    );
    let config = mesh.run(&["config", "store", "--node", "box"]).ok().stdout;
    assert!(
        config.contains("listen.port") && config.contains("20001"),
        "{config}"
    );
    assert!(config.contains("db.password"), "{config}");
    assert!(config.contains("(secret: not shown)"), "{config}");
    assert!(unchanged(), "config leaves the inventory as it was");
    // a check records what the machine said (its facts), and allocates nothing
    let check = mesh.run(&["check", "box", "--diff"]).code(4).stdout;
    assert!(check.contains("+listen 20001"), "{check}");
    assert_eq!(allocated(&mesh.inventory()), ["box store admin 20000"]);

    // the push allocates what the plan showed, and the plan's thrown-away secret changes nothing
    mesh.run(&["push", "box"]).ok();
    assert_eq!(
        std::fs::read_to_string(&conf).unwrap(),
        "admin 20000\nlisten 20001\n"
    );
    let now = allocated(&mesh.inventory());
    assert_eq!(
        now[..2],
        ["box store admin 20000", "box store listen 20001"]
    );
    assert!(
        now.len() == 3 && now[2].starts_with("box store db password -----BEGIN AGE"),
        "{now:?}"
    );
    let plan = mesh.run(&["plan", "box"]).ok().stdout;
    assert!(!plan.contains("store.conf"), "{plan}");
}
