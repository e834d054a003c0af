//! The operator's own key, and the secrets the inventory keeps sealed with it.
//!
//! No secret is ever in the inventory in clear: each is sealed (age, X25519) to the operator's
//! key, which lives outside the inventory file (beside it, mode 0600, or `MESH_OPERATOR_KEY`;
//! see `operator_key`), so a copy of the inventory alone, or an export of it in git, gives
//! nothing away. mesh opens a secret only to render it, and the rendered file is sealed again to
//! the host key of the machine that receives it (resolution's `sealed`).

use std::io::Write;
use std::path::Path;

use age::secrecy::ExposeSecret;
use age::x25519::Identity;

use super::{Inventory, InventoryError};

/// How many nodes a command composes before [`Inventory::open_ahead`] opens their secrets on
/// every core: below it, threads cost more than they save.
const OPEN_AHEAD_FROM: usize = 64;

/// Each of `sealed` that opens with `identity`, with what it opens to.
fn open_each(identity: &Identity, sealed: &[String]) -> Vec<(String, String)> {
    sealed
        .iter()
        .filter_map(|s| {
            let bytes = age::decrypt(identity, s.as_bytes()).ok()?;
            Some((s.clone(), String::from_utf8(bytes).ok()?))
        })
        .collect()
}

/// How a sealed value begins: anything else in the secrets table was written by an older mesh.
pub(super) const ARMOR: &str = "-----BEGIN AGE ENCRYPTED FILE-----";

impl Inventory {
    /// Whether any secret is sealed (to the operator's key).
    pub(super) fn holds_secrets(&self) -> Result<bool, InventoryError> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM secrets WHERE substr(value, 1, ?1) = ?2)",
            rusqlite::params![ARMOR.len() as i64, ARMOR],
            |r| r.get(0),
        )?)
    }

    /// `value` sealed to the operator's key, as the inventory keeps it.
    pub(super) fn seal(&self, value: &str) -> Result<String, InventoryError> {
        let recipient = self.identity()?.to_public();
        age::encrypt_and_armor(&recipient, value.as_bytes()).map_err(|e| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!(
                "cannot seal a secret: {e}"
            )))
        })
    }

    /// A value the inventory keeps, opened with the operator's key.
    pub(super) fn unseal(&self, sealed: &str) -> Result<String, InventoryError> {
        if let Some(value) = self.opened.borrow().get(sealed) {
            return Ok(value.clone());
        }
        let identity = self.identity()?;
        let cannot = |why: String| {
            InventoryError::Storage(crate::StorageError::OperatorKey {
                path: self.operator_key_path(),
                why: format!("a secret sealed to another key cannot be opened with it ({why})"),
            })
        };
        let bytes = age::decrypt(identity, sealed.as_bytes()).map_err(|e| cannot(e.to_string()))?;
        let value = String::from_utf8(bytes).map_err(|_| cannot("it is not UTF-8 text".into()))?;
        self.opened
            .borrow_mut()
            .insert(sealed.to_string(), value.clone());
        Ok(value)
    }

    /// Opens ahead, on every core, the kept secrets of `nodes` that are not open yet, so that
    /// composing a large fleet finds them open. Each opening is an X25519 agreement, about a
    /// tenth of a plan's time at 100,000 nodes if one core does them one by one as each node
    /// reads its own. Nothing here fails a command: a secret that does not open is left for
    /// [`Self::unseal`] to refuse, naming the key, when a node reads it.
    pub fn open_ahead(&self, nodes: &[&str]) {
        // a few nodes read their few secrets faster than threads start
        if nodes.len() < OPEN_AHEAD_FROM {
            return;
        }
        let Ok(sealed) = self.sealed_of(nodes) else {
            return;
        };
        if sealed.is_empty() {
            return;
        }
        let Ok(identity) = self.identity() else {
            return;
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let each = sealed.len().div_ceil(threads);
        let opened: Vec<(String, String)> = std::thread::scope(|s| {
            let mut here = Vec::new();
            let mut running = Vec::new();
            for chunk in sealed.chunks(each) {
                // a thread that cannot start (a process or address-space limit) fails nothing:
                // its share is opened here
                match std::thread::Builder::new()
                    .spawn_scoped(s, move || open_each(identity, chunk))
                {
                    Ok(t) => running.push(t),
                    Err(_) => here.extend(open_each(identity, chunk)),
                }
            }
            running
                .into_iter()
                .flat_map(|t| t.join().unwrap_or_default())
                .chain(here)
                .collect()
        });
        self.opened.borrow_mut().extend(opened);
    }

    /// The sealed values kept for `nodes`, not opened yet, each once.
    fn sealed_of(&self, nodes: &[&str]) -> Result<Vec<String>, InventoryError> {
        let wanted: std::collections::HashSet<&str> = nodes.iter().copied().collect();
        let opened = self.opened.borrow();
        let mut stmt = self.conn.prepare("SELECT node, value FROM secrets")?;
        let mut rows = stmt.query([])?;
        let mut out = std::collections::BTreeSet::new();
        while let Some(row) = rows.next()? {
            let node: String = row.get(0)?;
            let value: String = row.get(1)?;
            // sealed as `holds_secrets` counts it (no blank before the armor): the key is
            // then found or refused, never made, and any other row is left to `unseal`
            if wanted.contains(node.as_str())
                && value.starts_with(ARMOR)
                && !opened.contains_key(&value)
            {
                out.insert(value);
            }
        }
        Ok(out.into_iter().collect())
    }

    /// Whether a kept value is sealed (an older mesh kept them in clear).
    pub(super) fn is_sealed(value: &str) -> bool {
        value.trim_start().starts_with(ARMOR)
    }

    /// A digest of secret content keyed by the operator's key: it tells whether a secret changed
    /// without letting anyone who holds only the inventory test a guess against it.
    pub fn secret_digest(&self, content: &[u8]) -> Result<String, InventoryError> {
        let identity = match self.operator.text.get() {
            Some(text) => text,
            None => {
                let text = self.identity()?.to_string();
                self.operator.text.get_or_init(|| text)
            }
        };
        Ok(mesh_catalogue::digest(&[
            b"mesh: a secret's digest",
            identity.expose_secret().as_bytes(),
            content,
        ]))
    }
}

/// Makes a new key at `path`.
pub(super) fn make_key(path: &Path) -> Result<Identity, InventoryError> {
    let made = Identity::generate();
    write_key(path, made.to_string().expose_secret())?;
    Ok(made)
}

/// Writes the key, 0600 from its first byte, in a folder of mode 0700 made if missing.
fn write_key(path: &Path, text: &str) -> Result<(), InventoryError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| {
        InventoryError::Storage(crate::StorageError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    super::private_parent(path)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    file.write_all(format!("{text}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::Inventory;
    use crate::{InventoryError, Node};

    #[test]
    fn a_secret_is_kept_sealed_and_opens_only_with_the_operators_key() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        let key = dir.path().join("keys/operator.key");
        inv.use_operator_key(&key);
        inv.add_node(&Node::new("n", "127.0.0.1")).unwrap();
        let wanted = [crate::Unallocated::secret("n", "kv", "kv", "password")];
        inv.allocate(&wanted).unwrap();
        let value = inv
            .kept_secret("n", "kv", "kv", "password")
            .unwrap()
            .unwrap();
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let kept: String = inv
            .conn
            .query_row("SELECT value FROM secrets", [], |r| r.get(0))
            .unwrap();
        assert!(Inventory::is_sealed(&kept) && !kept.contains(&value));
        assert_eq!(
            inv.kept_secret("n", "kv", "kv", "password").unwrap(),
            Some(value.clone())
        );

        // a key others may read is refused, as ssh refuses such a private key
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        inv.use_operator_key(&key);
        let said = inv
            .kept_secret("n", "kv", "kv", "password")
            .unwrap_err()
            .to_string();
        assert!(
            said.contains("chmod 600") && !said.contains(&value),
            "{said}"
        );
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();

        // the same inventory without its key reveals nothing, and says which key and why
        std::fs::remove_file(&key).unwrap();
        inv.use_operator_key(&key);
        let refused = inv.kept_secret("n", "kv", "kv", "password").unwrap_err();
        assert!(matches!(
            refused,
            InventoryError::Storage(crate::StorageError::OperatorKey { .. })
        ));
        let said = refused.to_string();
        assert!(said.contains(&key.display().to_string()) && !said.contains(&value));
        assert!(!key.exists(), "no new key is made over sealed secrets");
    }
}

#[cfg(test)]
mod open_ahead_tests {
    use super::{ARMOR, Inventory, OPEN_AHEAD_FROM};
    use crate::Node;

    /// An inventory in a directory of its own, with the operator's key to be at `operator.key`
    /// beside it, and `n` nodes (`n0`, `n1` …), each at an address of its own.
    fn fleet(n: usize) -> (tempfile::TempDir, Inventory, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.use_operator_key(&dir.path().join("operator.key"));
        let names: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        for (i, name) in names.iter().enumerate() {
            inv.add_node(&Node::new(name, &format!("127.0.1.{i}")))
                .unwrap();
        }
        (dir, inv, names)
    }

    #[test]
    fn a_fleets_secrets_opened_ahead_on_every_core_are_what_each_node_reads_and_one_sealed_to_another_key_is_still_refused()
     {
        let (dir, inv, names) = fleet(OPEN_AHEAD_FROM + 6);
        let (path, key) = (dir.path().join("inv.db"), dir.path().join("operator.key"));
        let mut values = Vec::new();
        for n in &names {
            inv.allocate(&[crate::Unallocated::secret(n, "kv", "kv", "password")])
                .unwrap();
            values.push(inv.kept_secret(n, "kv", "kv", "password").unwrap().unwrap());
        }
        // one more node whose secret is sealed to a key this operator does not hold
        inv.add_node(&Node::new("stranger", "127.0.0.1")).unwrap();
        let other = age::x25519::Identity::generate().to_public();
        let foreign = age::encrypt_and_armor(&other, b"not yours").unwrap();
        inv.conn
            .execute(
                "INSERT INTO secrets (node, instance, provision, field, value)
                 VALUES ('stranger', 'kv', 'kv', 'password', ?1)",
                [&foreign],
            )
            .unwrap();
        drop(inv);

        let mut inv = Inventory::open(&path).unwrap();
        inv.use_operator_key(&key);
        let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
        all.push("stranger");
        // a few nodes are left to read their own
        inv.open_ahead(&all[..OPEN_AHEAD_FROM - 1]);
        assert!(inv.opened.borrow().is_empty());
        inv.open_ahead(&all);
        assert_eq!(inv.opened.borrow().len(), names.len());
        for (n, value) in names.iter().zip(&values) {
            assert_eq!(
                inv.kept_secret(n, "kv", "kv", "password").unwrap().as_ref(),
                Some(value)
            );
        }
        assert_eq!(
            inv.opened.borrow().len(),
            names.len(),
            "every one was open already"
        );
        let refused = inv
            .kept_secret("stranger", "kv", "kv", "password")
            .unwrap_err();
        assert!(
            refused.to_string().contains("sealed to another key"),
            "{refused}"
        );
    }

    /// A row that only looks sealed after its leading blank (an inventory edited by hand, or
    /// damaged) is no secret `holds_secrets` counts: opening it ahead must not make a key a
    /// plan of a few nodes would not have made.
    #[test]
    fn opening_ahead_makes_no_key_where_the_inventory_holds_no_secret_sealed_to_one() {
        let (dir, inv, names) = fleet(OPEN_AHEAD_FROM);
        let key = dir.path().join("operator.key");
        inv.conn
            .execute(
                "INSERT INTO secrets (node, instance, provision, field, value)
                 VALUES ('n0', 'gone', 'gone', 'password', ?1)",
                [format!(
                    "\n{ARMOR}\nYWdl\n-----END AGE ENCRYPTED FILE-----\n"
                )],
            )
            .unwrap();
        assert!(!key.exists());
        let all: Vec<&str> = names.iter().map(String::as_str).collect();
        inv.open_ahead(&all);
        assert!(!key.exists(), "a plan that reads no secret made a key");
    }
}
