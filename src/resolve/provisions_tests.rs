//! The built-in `kv` makes a login and a password for each consumer.

use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, Node};
use crate::wire::Spec;

// composed as a push composes them: allocating what the inventories built here never did
use super::allocation::compose;

pub(super) struct Mesh {
    dir: tempfile::TempDir,
    pub(super) inv: Inventory,
    pub(super) cat: Catalogue,
}

impl Mesh {
    /// The private half of the host key pinned for n1, which its secret files are sealed to.
    fn n1_key(&self) -> std::path::PathBuf {
        self.dir.path().join("n1_host_key")
    }
}

/// Three nodes: `kv` on n1, a `kv-client` on n2 and on n3.
pub(super) fn mesh() -> Mesh {
    let dir = tempfile::tempdir().unwrap();
    let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
    for (n, address) in [
        ("n1", "192.0.2.1"),
        ("n2", "192.0.2.2"),
        ("n3", "192.0.2.3"),
    ] {
        inv.add_node(&Node::new(n, address)).unwrap();
    }
    // n1's secret files are sealed to its host key: a key made here, so the test can open them
    let key = dir.path().join("n1_host_key");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(made.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let mut n1 = inv.node("n1").unwrap();
    n1.host_key = Some(
        public
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" "),
    );
    inv.put_node(&n1).unwrap();
    inv.use_operator_key(&dir.path().join("operator.key"));
    inv.assign("n1", "kv", "kv").unwrap();
    inv.assign("n2", "kv-client", "kv-client").unwrap();
    inv.assign("n3", "kv-client", "kv-client").unwrap();
    Mesh {
        dir,
        inv,
        cat: Catalogue::load(&[]).unwrap(),
    }
}

/// What `node`'s file at a path ending in `end` would hold.
fn file(m: &Mesh, node: &str, end: &str) -> String {
    let n = m.inv.node(node).unwrap();
    let c = compose(&m.inv, &m.cat, &n).unwrap();
    c.declaration
        .resources
        .iter()
        .find_map(|r| match &r.spec {
            Spec::File(f) if f.path.ends_with(end) => Some(match &f.sealed {
                Some(sealed) => open(m, &sealed.age),
                None => f.content.clone(),
            }),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{node} has no file *{end}"))
}

/// A secret file sealed to n1, opened with its host key.
fn open(m: &Mesh, armored: &str) -> String {
    let key = std::fs::File::open(m.n1_key()).unwrap();
    let identity = age::ssh::Identity::from_buffer(std::io::BufReader::new(key), None).unwrap();
    String::from_utf8(age::decrypt(&identity, armored.as_bytes()).unwrap()).unwrap()
}

/// The password a consumer is answered with.
fn password(m: &Mesh, node: &str) -> String {
    let n = m.inv.node(node).unwrap();
    let a = m.inv.assignments(Some(node)).unwrap().remove(0);
    let (answers, problems) = super::allocation::answers(&m.inv, &m.cat, &n, &a).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    answers.values["store.password"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn each_consumer_gets_its_own_login_and_password_reaching_only_its_own_keys() {
    let m = mesh();
    let acl = file(&m, "n1", "/auth.conf");
    let (p2, p3) = (password(&m, "n2"), password(&m, "n3"));
    assert_ne!(p2, p3);
    assert_eq!(p2.len(), 32);
    assert!(acl.contains("user default off"), "{acl}");
    for (login, p) in [("kv-client_n2", &p2), ("kv-client_n3", &p3)] {
        let line = format!(
            "user {login} on >{p} resetkeys ~{login}:* resetchannels &{login}:* -@all +@read "
        );
        assert!(
            acl.lines().any(|l| l.starts_with(&line)
                && l.contains(" -@keyspace ")
                && l.contains(
                    " -@scripting -client|tracking -client|caching -client|getredir \
                     -client|trackinginfo "
                )),
            "no {line:?} in the provider's file"
        );
        // nothing gives scripting back: an endless script stalls every login
        assert!(!acl.contains("+eval") && !acl.contains("+script"), "{acl}");
    }
    // the same answer every time
    assert_eq!(password(&m, "n2"), p2);

    // a consumer taken away is withdrawn from the provider's declaration, which names it so
    // that its secret can go once the machine confirmed
    let n1 = m.inv.node("n1").unwrap();
    assert!(compose(&m.inv, &m.cat, &n1).unwrap().withdrawn.is_empty());
    m.inv.unassign("n3", "kv-client").unwrap();
    let acl = file(&m, "n1", "/auth.conf");
    assert!(!acl.contains("kv-client_n3"), "n3's login stays");
    assert!(acl.contains("kv-client_n2"));
    let withdrawn = compose(&m.inv, &m.cat, &n1).unwrap().withdrawn;
    assert_eq!(
        withdrawn,
        [super::provisions::Withdrawn {
            instance: "kv".into(),
            provision: "kv".into(),
            login: "kv-client_n3".into(),
        }]
    );
    withdrawn[0].forget(&m.inv, "n1").unwrap();
    assert!(compose(&m.inv, &m.cat, &n1).unwrap().withdrawn.is_empty());
    assert_eq!(password(&m, "n2"), p2, "the others keep theirs");
}

#[test]
fn a_consumer_whose_module_breaks_keeps_its_login_and_its_secret_at_the_provider() {
    let mut m = mesh();
    let before = file(&m, "n1", "/auth.conf");
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("kv-client");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("module.json"), "{ not json").unwrap();
    m.cat = Catalogue::load(&[dir.path().to_path_buf()]).unwrap();
    assert!(m.cat.module("kv-client").is_err());
    let n1 = m.inv.node("n1").unwrap();
    let c = compose(&m.inv, &m.cat, &n1).unwrap();
    assert!(c.withdrawn.is_empty(), "{:?}", c.withdrawn);
    assert_eq!(file(&m, "n1", "/auth.conf"), before);
}

#[test]
fn a_consumer_on_another_node_waits_until_its_provision_is_made_there() {
    let m = mesh();
    let n2 = m.inv.node("n2").unwrap();
    let c = compose(&m.inv, &m.cat, &n2).unwrap();
    assert_eq!(c.held.len(), 1, "{:?}", c.held);
    assert_eq!(c.held[0].waiting_for.as_deref(), Some("kv@n1"));
    // nothing of it is delivered
    assert!(
        c.declaration.resources.is_empty(),
        "{:?}",
        c.declaration.resources
    );
    // the provider itself waits for nobody
    let n1 = m.inv.node("n1").unwrap();
    let provider = compose(&m.inv, &m.cat, &n1).unwrap();
    assert!(provider.held.is_empty());

    // once n1's helper confirmed its (sealed) file with n2's login in it, n2 waits no more
    let mut m = m;
    let started = m.inv.now().unwrap();
    let ids = m.inv.begin_pushes(&started, &[("n1", "d")]).unwrap();
    let record = crate::inventory::PushRecord {
        node: "n1".into(),
        started_at: started,
        digest: "d".into(),
        outcome: "applied".into(),
        reason: None,
        report: Some(crate::wire::Report {
            version: crate::wire::VERSION,
            mode: crate::wire::Mode::Apply,
            hostname: "n1".into(),
            host_keys: Vec::new(),
            new_machine: false,
            resources: provider
                .declaration
                .resources
                .iter()
                .map(|r| crate::wire::Outcome {
                    id: r.id.clone(),
                    state: crate::wire::State::Created,
                    detail: String::new(),
                    undo: None,
                    seen: Vec::new(),
                    micros: 0,
                })
                .collect(),
            units: vec![],
            adoption: None,
            awaiting: None,
            reverted: Vec::new(),
            pending: None,
            generation: None,
            facts: None,
            steps: Vec::new(),
            generation_not_kept: None,
        }),
    };
    m.inv
        .finish_push(ids[0], &record, Some(&provider.declaration))
        .unwrap();
    let c = compose(&m.inv, &m.cat, &n2).unwrap();
    assert!(c.held.is_empty(), "{:?}", c.held);
    assert!(!c.declaration.resources.is_empty());
}
