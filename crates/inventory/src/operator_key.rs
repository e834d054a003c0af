//! Which operator key belongs to an inventory, and where it is.
//!
//! An inventory records its key's public recipient (the `operator_key` table): two inventories
//! on one laptop each have a key of their own, and one key lost leaves the other untouched.
//! The key is looked for, in order:
//!
//! - `MESH_OPERATOR_KEY` (or a path a test gives), and only there, when it is set;
//! - beside the inventory: `<inventory>.key` (`fleet.db` → `fleet.key`), where `mesh init`
//!   makes it;
//! - the place an older mesh made it, `$XDG_STATE_HOME/mesh/operator.key` (else
//!   `~/.local/state/mesh/operator.key`), so an existing inventory keeps working.
//!
//! The first there whose recipient is the one recorded is used. An inventory that records none
//! yet (made by an older mesh) takes the first key there is, and records it once it has been
//! seen to open the inventory's secrets.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use age::x25519::Identity;
use rusqlite::OptionalExtension;

use super::{Inventory, InventoryError};

/// Where an inventory's operator key may be, and the key once found.
pub(super) struct OperatorKey {
    /// Where it was told to be (`MESH_OPERATOR_KEY`, or a test's own): only there.
    told: Option<PathBuf>,
    /// Beside the inventory.
    beside: PathBuf,
    /// Where an older mesh kept it.
    older: Option<PathBuf>,
    found: OnceCell<(PathBuf, Identity)>,
    /// The found key as text, which keys a secret's digest: encoding it (bech32) for every
    /// secret file was a fiftieth of a plan of the fleet.
    pub(super) text: OnceCell<age::secrecy::SecretString>,
}

impl OperatorKey {
    /// The places to look for the key of the inventory at `inventory`.
    pub(super) fn of(inventory: &Path) -> OperatorKey {
        OperatorKey {
            told: std::env::var_os("MESH_OPERATOR_KEY")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            beside: inventory.with_extension("key"),
            older: Inventory::default_path()
                .and_then(|p| p.parent().map(|d| d.join("operator.key"))),
            found: OnceCell::new(),
            text: OnceCell::new(),
        }
    }

    /// Only `path`.
    pub(super) fn told(mut self, path: &Path) -> OperatorKey {
        self.told = Some(path.to_path_buf());
        self.found = OnceCell::new();
        self.text = OnceCell::new();
        self
    }

    /// Where a key is looked for, in order.
    fn places(&self) -> Vec<&Path> {
        match &self.told {
            Some(p) => vec![p.as_path()],
            None => std::iter::once(self.beside.as_path())
                .chain(self.older.as_deref())
                .collect(),
        }
    }

    /// Where a new key is made.
    fn home(&self) -> &Path {
        self.told.as_deref().unwrap_or(&self.beside)
    }
}

/// Whether anyone but its owner may read or write the file at `path`.
fn loose(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o077 != 0)
}

/// The key at `path`; `None` when there is none.
fn read(path: &Path) -> Result<Option<Identity>, InventoryError> {
    match mesh_ssh::files::read_text(path) {
        // as ssh refuses a private key others may read: whoever can read it opens every secret
        Ok(_) if loose(path) => Err(InventoryError::Storage(crate::StorageError::OperatorKey {
            path: path.to_path_buf(),
            why: "others may read it: make it the operator's alone with `chmod 600`".into(),
        })),
        Ok(text) => Identity::from_str(text.trim()).map(Some).map_err(|e| {
            InventoryError::Storage(crate::StorageError::OperatorKey {
                path: path.to_path_buf(),
                why: format!("it is not an age identity ({e})"),
            })
        }),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(InventoryError::Storage(crate::StorageError::OperatorKey {
            path: path.to_path_buf(),
            why: e.reason(),
        })),
    }
}

impl Inventory {
    /// Where the operator's key is (once found or made), else where it would be made.
    pub fn operator_key_path(&self) -> PathBuf {
        self.operator
            .found
            .get()
            .map_or_else(|| self.operator.home().to_path_buf(), |(p, _)| p.clone())
    }

    /// Points this inventory at another operator's key, and only there (tests).
    pub fn use_operator_key(&mut self, path: &Path) {
        let of = std::mem::replace(&mut self.operator, OperatorKey::of(&self.path));
        self.operator = of.told(path);
        // what the other key opened is not this key's to give
        self.opened.take();
    }

    /// Makes the operator's key if there is none; `true` when it was made now.
    pub fn ensure_operator_key(&self) -> Result<bool, InventoryError> {
        if self.find_key()?.is_some() || self.holds_secrets()? {
            self.identity()?;
            return Ok(false);
        }
        self.make_key()?;
        Ok(true)
    }

    /// Makes a new key where keys are made, and records it as the inventory's.
    fn make_key(&self) -> Result<&Identity, InventoryError> {
        let home = self.operator.home().to_path_buf();
        let made = super::sealed::make_key(&home)?;
        self.record_recipient(&made)?;
        Ok(&self.operator.found.get_or_init(|| (home, made)).1)
    }

    /// The recipient the inventory's secrets are sealed to, as recorded.
    fn recorded_recipient(&self) -> Result<Option<String>, InventoryError> {
        Ok(self
            .conn
            .query_row("SELECT recipient FROM operator_key", [], |r| r.get(0))
            .optional()?)
    }

    fn record_recipient(&self, identity: &Identity) -> Result<(), InventoryError> {
        self.conn.execute("DELETE FROM operator_key", [])?;
        self.conn.execute(
            "INSERT INTO operator_key (recipient) VALUES (?1)",
            [identity.to_public().to_string()],
        )?;
        Ok(())
    }

    /// The first key where one may be whose recipient the inventory records (any, when it
    /// records none), found once; recorded when it opens the inventory's secrets.
    fn find_key(&self) -> Result<Option<&(PathBuf, Identity)>, InventoryError> {
        if let Some(found) = self.operator.found.get() {
            return Ok(Some(found));
        }
        let recorded = self.recorded_recipient()?;
        let mut others = Vec::new();
        for place in self.operator.places() {
            let Some(identity) = read(place)? else {
                continue;
            };
            match &recorded {
                Some(want) if *want != identity.to_public().to_string() => {
                    others.push(place.display().to_string());
                }
                Some(_) => {
                    return Ok(Some(
                        self.operator
                            .found
                            .get_or_init(|| (place.to_path_buf(), identity)),
                    ));
                }
                None => {
                    if self.opens_secrets(&identity)? {
                        self.record_recipient(&identity)?;
                    }
                    return Ok(Some(
                        self.operator
                            .found
                            .get_or_init(|| (place.to_path_buf(), identity)),
                    ));
                }
            }
        }
        if others.is_empty() || !self.holds_secrets()? {
            return Ok(None);
        }
        Err(InventoryError::Storage(crate::StorageError::OperatorKey {
            path: self.operator.home().to_path_buf(),
            why: format!(
                "it is missing, and {} another inventory's key, not the one its secrets are \
                 sealed to",
                others.join(" and ") + if others.len() == 1 { " is" } else { " are" }
            ),
        }))
    }

    /// Whether `identity` opens a secret the inventory keeps (true when it keeps none).
    fn opens_secrets(&self, identity: &Identity) -> Result<bool, InventoryError> {
        let sealed: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM secrets WHERE substr(value, 1, ?1) = ?2 LIMIT 1",
                rusqlite::params![super::sealed::ARMOR.len() as i64, super::sealed::ARMOR],
                |r| r.get(0),
            )
            .optional()?;
        Ok(sealed.is_none_or(|s| age::decrypt(identity, s.as_bytes()).is_ok()))
    }

    /// The operator's key: found once; made (0600, beside the inventory unless told elsewhere)
    /// the first time it is needed while the inventory holds no secret yet. Missing while
    /// secrets are sealed to it: refused, since a new key could open none of them.
    pub(super) fn identity(&self) -> Result<&Identity, InventoryError> {
        if let Some((_, identity)) = self.find_key()? {
            return Ok(identity);
        }
        let home = self.operator.home().to_path_buf();
        if self.holds_secrets()? {
            let looked: Vec<String> = self
                .operator
                .places()
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            return Err(InventoryError::Storage(crate::StorageError::OperatorKey {
                path: home,
                why: format!(
                    "it is missing (looked for in {}), and the inventory's secrets are sealed to it",
                    looked.join(", ")
                ),
            }));
        }
        let made = self.make_key()?;
        eprintln!(
            "mesh: made the operator's key {} (mode 0600): the inventory's secrets are sealed to \
             it; keep a copy of it apart from the inventory",
            home.display()
        );
        Ok(made)
    }
}
