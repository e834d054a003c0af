//! Allocation: the values the inventory hands out once and keeps (a host port, a generated
//! secret), asked for by resolution and made only here.
//!
//! Resolution only reads: it asks for a port ([`Inventory::allocated_port`]) or a kept secret
//! (`kept_secret`) and, where there is none yet, names it as [`Unallocated`]. The allocation step
//! ([`Inventory::allocate`]) makes exactly those, in the order they were named, so the same
//! inventory and the same question always give the same ports: the lowest free one on the node,
//! taken in turn. Whoever runs it chooses whether what it made is kept: `mesh assign` and `mesh
//! push` run it in [`Inventory::batch`]; `mesh plan`, `check` and `config` in
//! [`Inventory::trial`], so they show what a push will allocate and write nothing.

use rusqlite::{OptionalExtension, params};

use super::{Inventory, InventoryError, PORTS};

/// A value resolution needs and the inventory does not hold yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unallocated {
    /// The port of `instance`'s host requirement `name` on `node`.
    Port {
        node: String,
        instance: String,
        name: String,
    },
    /// A generated secret field of `instance` on `node`, under `provision` (a per-consumer one
    /// under its [`super::consumer_key`]).
    Secret {
        node: String,
        instance: String,
        provision: String,
        field: String,
    },
}

impl Unallocated {
    pub fn port(node: &str, instance: &str, name: &str) -> Unallocated {
        Unallocated::Port {
            node: node.to_string(),
            instance: instance.to_string(),
            name: name.to_string(),
        }
    }

    pub fn secret(node: &str, instance: &str, provision: &str, field: &str) -> Unallocated {
        Unallocated::Secret {
            node: node.to_string(),
            instance: instance.to_string(),
            provision: provision.to_string(),
            field: field.to_string(),
        }
    }
}

impl std::fmt::Display for Unallocated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unallocated::Port {
                node,
                instance,
                name,
            } => write!(f, "the port {name} of {instance} on {node}"),
            Unallocated::Secret {
                node,
                instance,
                provision,
                field,
            } => write!(
                f,
                "the generated secret {provision}.{field} of {instance} on {node}"
            ),
        }
    }
}

impl Inventory {
    /// The port allocated to `instance`'s requirement `name` on `node`, if one is.
    pub fn allocated_port(
        &self,
        node: &str,
        instance: &str,
        name: &str,
    ) -> Result<Option<u16>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT port FROM ports WHERE node = ?1 AND instance = ?2 AND name = ?3",
            )?
            .query_row(params![node, instance, name], |r| r.get(0))
            .optional()?)
    }

    /// Allocates each of `wanted` the inventory does not hold yet, in order: a port is the lowest
    /// free one on its node, a secret 32 generated characters, sealed to the operator's key. One
    /// held already (named twice, or allocated since) is left as it is.
    pub fn allocate(&self, wanted: &[Unallocated]) -> Result<(), InventoryError> {
        for want in wanted {
            match want {
                Unallocated::Port {
                    node,
                    instance,
                    name,
                } => {
                    if self.allocated_port(node, instance, name)?.is_none() {
                        self.allocate_port(node, instance, name)?;
                    }
                }
                Unallocated::Secret {
                    node,
                    instance,
                    provision,
                    field,
                } => {
                    if self
                        .kept_secret(node, instance, provision, field)?
                        .is_none()
                    {
                        let sealed = self.seal(&super::answers::generate_password()?)?;
                        self.conn.execute(
                            "INSERT INTO secrets (node, instance, provision, field, value)
                             VALUES (?1, ?2, ?3, ?4, ?5)",
                            params![node, instance, provision, field, sealed],
                        )?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Gives `instance`'s requirement `name` on `node` the lowest port free there.
    fn allocate_port(&self, node: &str, instance: &str, name: &str) -> Result<(), InventoryError> {
        let taken: Vec<u16> = self
            .conn
            .prepare_cached("SELECT port FROM ports WHERE node = ?1")?
            .query_map([node], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let port = PORTS.clone().find(|p| !taken.contains(p)).ok_or_else(|| {
            InventoryError::Storage(crate::StorageError::Corrupt(format!(
                "{node} has no free port left"
            )))
        })?;
        self.conn
            .prepare_cached(
                "INSERT INTO ports (node, instance, name, port) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![node, instance, name, port])?;
        Ok(())
    }

    /// Seals every secret an older mesh kept in clear; how many there were. Reading one gives it
    /// as it is: sealing it is a write, made by the commands that allocate.
    pub fn seal_kept_in_clear(&self) -> Result<usize, InventoryError> {
        let clear: Vec<(i64, String)> = self
            .conn
            .prepare("SELECT rowid, value FROM secrets WHERE substr(value, 1, ?1) != ?2")?
            .query_map(
                params![super::sealed::ARMOR.len() as i64, super::sealed::ARMOR],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .collect::<Result<Vec<(i64, String)>, _>>()?
            .into_iter()
            .filter(|(_, v)| !Self::is_sealed(v))
            .collect();
        for (row, value) in &clear {
            self.conn.execute(
                "UPDATE secrets SET value = ?2 WHERE rowid = ?1",
                params![row, self.seal(value)?],
            )?;
        }
        Ok(clear.len())
    }
}

#[cfg(test)]
mod tests {
    use super::Unallocated;
    use crate::{Inventory, Node};

    fn inventory(dir: &std::path::Path) -> Inventory {
        let mut inv = Inventory::init(&dir.join("inv.db")).unwrap();
        inv.use_operator_key(&dir.join("operator.key"));
        inv.add_node(&Node::new("n", "127.0.0.1")).unwrap();
        inv
    }

    #[test]
    fn ports_are_allocated_in_the_order_asked_each_the_lowest_free_and_kept_ever_after() {
        let dir = tempfile::tempdir().unwrap();
        let inv = inventory(dir.path());
        assert_eq!(inv.allocated_port("n", "a", "listen").unwrap(), None);
        let wanted = [
            Unallocated::port("n", "b", "listen"),
            Unallocated::port("n", "a", "listen"),
            Unallocated::port("n", "b", "listen"),
        ];
        inv.allocate(&wanted).unwrap();
        assert_eq!(inv.allocated_port("n", "b", "listen").unwrap(), Some(20000));
        assert_eq!(inv.allocated_port("n", "a", "listen").unwrap(), Some(20001));
        // asked again, nothing moves
        inv.allocate(&[Unallocated::port("n", "a", "listen")])
            .unwrap();
        assert_eq!(inv.allocated_port("n", "a", "listen").unwrap(), Some(20001));
    }

    #[test]
    fn a_generated_secret_is_made_once_sealed_and_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let inv = inventory(dir.path());
        assert_eq!(inv.kept_secret("n", "kv", "kv", "password").unwrap(), None);
        let want = [Unallocated::secret("n", "kv", "kv", "password")];
        inv.allocate(&want).unwrap();
        let made = inv
            .kept_secret("n", "kv", "kv", "password")
            .unwrap()
            .unwrap();
        assert_eq!(made.chars().count(), 32);
        inv.allocate(&want).unwrap();
        assert_eq!(
            inv.kept_secret("n", "kv", "kv", "password").unwrap(),
            Some(made.clone())
        );
        let kept: String = inv
            .conn
            .query_row("SELECT value FROM secrets", [], |r| r.get(0))
            .unwrap();
        assert!(Inventory::is_sealed(&kept) && !kept.contains(&made));
    }

    #[test]
    fn a_secret_an_older_mesh_kept_in_clear_is_read_as_it_is_and_sealed_by_the_allocating_commands()
    {
        let dir = tempfile::tempdir().unwrap();
        let inv = inventory(dir.path());
        inv.conn
            .execute(
                "INSERT INTO secrets (node, instance, provision, field, value)
                 VALUES ('n', 'kv', 'kv', 'password', 'in-clear')",
                [],
            )
            .unwrap();
        let kept = || -> String {
            inv.conn
                .query_row("SELECT value FROM secrets", [], |r| r.get(0))
                .unwrap()
        };
        // reading writes nothing
        assert_eq!(
            inv.kept_secret("n", "kv", "kv", "password").unwrap(),
            Some("in-clear".into())
        );
        assert_eq!(kept(), "in-clear");
        assert_eq!(inv.seal_kept_in_clear().unwrap(), 1);
        assert!(Inventory::is_sealed(&kept()) && !kept().contains("in-clear"));
        assert_eq!(
            inv.kept_secret("n", "kv", "kv", "password").unwrap(),
            Some("in-clear".into())
        );
        assert_eq!(inv.seal_kept_in_clear().unwrap(), 0);
    }
}
