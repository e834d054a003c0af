//! Nodes: where each machine is, how to log in, and its pinned host key.

use std::path::PathBuf;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Inventory, InventoryError};

/// A machine in the inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Node {
    pub name: String,
    pub address: String,
    pub port: u16,
    pub user: String,
    /// Private key file; `None` uses ssh-agent, then `~/.ssh/id_ed25519` and `id_rsa`.
    pub identity: Option<PathBuf>,
    /// Run the helper through `sudo -n` (for a user other than root).
    pub sudo: bool,
    /// The pinned host key, OpenSSH form.
    pub host_key: Option<String>,
    /// Made by `mesh lab`.
    pub lab: bool,
    /// Where the host's directories go unless placed: `<root>/<instance>/<name>`.
    pub root: String,
    /// Jump hosts of its own (`[user@]host[:port]`, comma-separated), over the ssh
    /// configuration's ProxyJump.
    pub jump: Option<String>,
    /// The port was said explicitly, so it wins over the ssh configuration's Port.
    #[serde(skip)]
    pub port_given: bool,
    /// The user was said explicitly, so it wins over the ssh configuration's User.
    #[serde(skip)]
    pub user_given: bool,
    /// A node on this machine (`node add --local DIR`): its helper runs as a child process
    /// against DIR, which stands for the machine's `/`; `None`: reached over SSH.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<PathBuf>,
}

/// The default layout's root on a node.
pub const DEFAULT_ROOT: &str = "/srv/mesh";

impl Node {
    /// A node at `address` with the defaults: port 22, root, no pinned key, both said
    /// explicitly (the ssh configuration may still name its HostName, key files and jump hosts).
    pub fn new(name: &str, address: &str) -> Node {
        Node {
            name: name.to_string(),
            address: address.to_string(),
            port: 22,
            user: "root".to_string(),
            identity: None,
            sudo: false,
            host_key: None,
            lab: false,
            root: DEFAULT_ROOT.to_string(),
            jump: None,
            port_given: true,
            user_given: true,
            local: None,
        }
    }
}

/// The machine a node reaches: where ssh really connects (after the ssh configuration's HostName,
/// the host in lower case) and the port. Two nodes with one are one machine.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NodeMachine {
    pub host: String,
    pub port: u16,
}

/// Where nodes are really reached (an ssh configuration's HostName and Port): the transport
/// answers it (`push::route`), so the inventory can refuse two nodes on one machine without
/// knowing how ssh resolves a name.
pub trait Machines {
    /// The machine `node` reaches; a node that cannot be resolved is taken as it is written.
    fn machine_of(&self, node: &Node) -> NodeMachine;
}

/// Each node is the machine its inventory entry names: its root directory for a local node,
/// else its address (lowercased) and port, with no ssh configuration in between. What adding a
/// node without one ([`Inventory::add_node`]) and the inventory's own tests go by.
pub struct AsWritten;

impl Machines for AsWritten {
    fn machine_of(&self, node: &Node) -> NodeMachine {
        match &node.local {
            Some(dir) => NodeMachine {
                host: format!("local:{}", dir.display()),
                port: 0,
            },
            None => NodeMachine {
                host: node.address.to_ascii_lowercase(),
                port: node.port,
            },
        }
    }
}

impl std::fmt::Display for NodeMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

impl Node {
    /// The pinned host key's fingerprint, if one is pinned and readable.
    pub fn host_key_fingerprint(&self) -> Option<String> {
        let key = mesh_ssh::parse_public_key(self.host_key.as_deref()?).ok()?;
        Some(mesh_ssh::fingerprint(&key))
    }
}

pub(super) const COLUMNS: &str = "name, address, port, user, identity, sudo, host_key, lab, root, jump, port_given, user_given, local";
/// How many columns [`COLUMNS`] names: a query's own columns come after them.
pub(super) const COLUMN_COUNT: usize = 13;

pub(super) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Node> {
    Ok(Node {
        name: r.get(0)?,
        address: r.get(1)?,
        port: r.get(2)?,
        user: r.get(3)?,
        identity: r.get::<_, Option<String>>(4)?.map(PathBuf::from),
        sudo: r.get(5)?,
        host_key: r.get(6)?,
        lab: r.get(7)?,
        root: r.get(8)?,
        jump: r.get(9)?,
        port_given: r.get(10)?,
        user_given: r.get(11)?,
        local: r.get::<_, Option<String>>(12)?.map(PathBuf::from),
    })
}

/// Whether `name` can name a node: letters, digits, `-`, `_` and `.`, starting with a letter.
pub fn valid_name(name: &str) -> bool {
    name.len() <= 63
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

pub use mesh_wire::{valid_address, valid_user};

impl Inventory {
    /// Adds a node; refuses a name already taken, and an address and port another node has.
    pub fn add_node(&self, node: &Node) -> Result<(), InventoryError> {
        self.add_node_in(node, &AsWritten)
    }

    /// Adds a node; refuses a name already taken, and a machine another node reaches as `config`
    /// resolves both (an ssh configuration alias of a node's address is that node).
    pub fn add_node_in(&self, node: &Node, config: &dyn Machines) -> Result<(), InventoryError> {
        if self.node_opt(&node.name)?.is_some() {
            return Err(InventoryError::Refused(crate::Refusal::NodeExists {
                name: node.name.clone(),
            }));
        }
        self.refuse_same_machine(node, config)?;
        self.put_node(node)
    }

    /// Changes what the inventory says of an existing node in place: its assignments, layers,
    /// placements, pins, tags and history are kept. Refuses a machine another node reaches as
    /// `config` resolves both.
    pub fn edit_node_in(&self, node: &Node, config: &dyn Machines) -> Result<(), InventoryError> {
        self.node(&node.name)?;
        self.refuse_same_machine(node, config)?;
        self.put_node(node)
    }

    /// Two nodes on one machine would each undo the other's modules at every push.
    fn refuse_same_machine(
        &self,
        node: &Node,
        config: &dyn Machines,
    ) -> Result<(), InventoryError> {
        let machine = config.machine_of(node);
        let other = self
            .nodes()?
            .into_iter()
            .find(|o| o.name != node.name && config.machine_of(o) == machine);
        match other {
            Some(other) => Err(InventoryError::Refused(crate::Refusal::SameAddress {
                name: node.name.clone(),
                other: other.name,
                address: machine.host,
                port: machine.port,
            })),
            None => Ok(()),
        }
    }

    /// Adds a node or replaces what the inventory says of it (assignments are kept).
    pub fn put_node(&self, node: &Node) -> Result<(), InventoryError> {
        write_node(&self.conn, node)
    }

    /// Every node, by name.
    pub fn nodes(&self) -> Result<Vec<Node>, InventoryError> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {COLUMNS} FROM nodes ORDER BY name"))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every node's name, in order. Inside a [`Inventory::batch`] they are read once; nothing
    /// in a batch adds or removes a node.
    pub fn node_names_list(&self) -> Result<std::rc::Rc<Vec<String>>, InventoryError> {
        if let Some(names) = self.names.borrow().as_ref() {
            return Ok(names.clone());
        }
        let names: Vec<String> = self
            .conn
            .prepare_cached("SELECT name FROM nodes ORDER BY name")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let names = std::rc::Rc::new(names);
        if !self.conn.is_autocommit() {
            self.names.replace(Some(names.clone()));
        }
        Ok(names)
    }

    pub fn node_opt(&self, name: &str) -> Result<Option<Node>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM nodes WHERE name = ?1"))?
            .query_row([name], from_row)
            .optional()?)
    }

    /// The node called `name`, or a refusal listing the nodes there are.
    pub fn node(&self, name: &str) -> Result<Node, InventoryError> {
        match self.node_opt(name)? {
            Some(n) => Ok(n),
            None => Err(InventoryError::Refused(crate::Refusal::NoNode {
                name: name.to_string(),
                known: self.node_names()?,
            })),
        }
    }

    fn node_names(&self) -> Result<String, InventoryError> {
        let names: Vec<String> = self.nodes()?.into_iter().map(|n| n.name).collect();
        Ok(if names.is_empty() {
            "none yet; `mesh node add`".into()
        } else {
            names.join(", ")
        })
    }

    /// Removes a node, its assignments, its layers and what it was sent. Its push history stays.
    pub fn remove_node(&self, name: &str) -> Result<(), InventoryError> {
        self.node(name)?;
        // its tags go with it (a cascade): a node added again under its name has none
        self.forget_tags();
        self.forget_node_layers();
        self.conn
            .execute("DELETE FROM layers WHERE node = ?1", [name])?;
        self.conn
            .execute("DELETE FROM nodes WHERE name = ?1", [name])?;
        Ok(())
    }

    /// Pins a host key (OpenSSH public key form); refuses one another node has pinned (one
    /// machine is one node).
    pub fn pin_host_key(&self, name: &str, key: &str) -> Result<(), InventoryError> {
        let node = Node {
            host_key: Some(key.to_string()),
            ..self.node(name)?
        };
        if let Some(other) = self.pinned_elsewhere(&node)? {
            return Err(InventoryError::Refused(crate::Refusal::SameHostKey {
                name: name.to_string(),
                other,
            }));
        }
        self.conn.execute(
            "UPDATE nodes SET host_key = ?2 WHERE name = ?1",
            params![name, key],
        )?;
        Ok(())
    }

    /// The node other than `node` that has `node`'s host key pinned, if one has.
    pub fn pinned_elsewhere(&self, node: &Node) -> Result<Option<String>, InventoryError> {
        let Some(mine) = node.host_key_fingerprint() else {
            return Ok(None);
        };
        Ok(self
            .nodes()?
            .into_iter()
            .find(|o| o.name != node.name && o.host_key_fingerprint().as_ref() == Some(&mine))
            .map(|o| o.name))
    }
}

/// Adds a node or replaces its row (assignments, secrets and confirmed state stay): the one
/// statement that writes a node, for commands and for an import's transaction.
pub(super) fn write_node(conn: &rusqlite::Connection, node: &Node) -> Result<(), InventoryError> {
    conn.execute(
        "INSERT INTO nodes (name, address, port, user, identity, sudo, host_key, lab, root,
             jump, port_given, user_given, local)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (name) DO UPDATE SET address = ?2, port = ?3, user = ?4, identity = ?5,
             sudo = ?6, host_key = ?7, lab = ?8, root = ?9, jump = ?10, port_given = ?11,
             user_given = ?12, local = ?13",
        params![
            node.name,
            node.address,
            node.port,
            node.user,
            node.identity
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned()),
            node.sudo,
            node.host_key,
            node.lab,
            node.root,
            node.jump,
            node.port_given,
            node.user_given,
            node.local
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{AsWritten, Node, valid_address, valid_user};
    use crate::{Inventory, InventoryError};

    #[test]
    fn one_address_and_port_is_one_node_and_an_edit_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&Node::new("web1", "192.0.2.1")).unwrap();
        inv.assign("web1", "motd", "motd").unwrap();
        inv.tag("web1", &["eu".into()]).unwrap();
        let twin = inv.add_node(&Node::new("web1b", "192.0.2.1")).unwrap_err();
        assert!(
            matches!(&twin, InventoryError::Refused(crate::Refusal::SameAddress { other, .. }) if other == "web1"),
            "{twin}"
        );
        // another port on the same machine is another sshd
        let other_port = Node {
            port: 2222,
            ..Node::new("web2", "192.0.2.1")
        };
        inv.add_node(&other_port).unwrap();
        let onto_web1 = inv
            .edit_node_in(&Node::new("web2", "192.0.2.1"), &AsWritten)
            .unwrap_err();
        assert!(matches!(
            onto_web1,
            InventoryError::Refused(crate::Refusal::SameAddress { .. })
        ));
        let moved = Node {
            port: 2200,
            ..inv.node("web1").unwrap()
        };
        inv.edit_node_in(&moved, &AsWritten).unwrap();
        assert_eq!(inv.node("web1").unwrap().port, 2200);
        assert_eq!(inv.assignments(Some("web1")).unwrap().len(), 1);
        assert_eq!(inv.tags_of("web1").unwrap(), ["eu"]);
    }

    #[test]
    fn an_address_is_a_host_name_or_an_ip_address() {
        for good in [
            "web1",
            "web-1.example.org",
            "10.214.7.2",
            "::1",
            "[fe80::1]",
            "2001:db8::2",
        ] {
            assert!(valid_address(good), "{good}");
        }
        for bad in [
            "",
            "-oProxyCommand=x",
            "a b",
            "a\nb",
            "a\0b",
            "host;rm",
            "[]",
            "a/b",
        ] {
            assert!(!valid_address(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_user_is_a_login_name() {
        assert!(valid_user("root") && valid_user("deploy_1") && valid_user("_svc"));
        for bad in ["", "Root", "-x", "a b", "a\nb", "a:b", &"x".repeat(33)] {
            assert!(!valid_user(bad), "{bad:?}");
        }
    }
}
