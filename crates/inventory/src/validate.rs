//! The one check of what the inventory stores, for the commands that store it (`node add`,
//! `node set`, `assign`, `place`, `seat`, `settings`) and for `inventory import` alike: nothing
//! reaches the inventory that a command would refuse, whichever way it comes in.

use std::path::{Path, PathBuf};

use super::answers::PORTS;
use super::nodes::{Node, valid_address, valid_name, valid_user};
use mesh_ssh::PublicKeyError;
use mesh_ssh::proxy_jump::JumpError;
use mesh_wire::path::PathError;

/// A field that cannot be stored, named as the exported document names it (`root`, `host-key`,
/// `instance`), and why, quoting the value (so a control character in it shows, never acts).
#[derive(Debug, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct Invalid {
    pub field: &'static str,
    pub reason: NodeError,
}

fn invalid(field: &'static str, reason: NodeError) -> Invalid {
    Invalid { field, reason }
}

/// Why a node's field cannot be stored, carrying the value refused.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error(
        "{0:?} cannot name a node: use letters, digits, '-', '_' and '.', starting with a letter"
    )]
    Name(String),
    #[error("{0:?} is not a host name or an IP address")]
    Address(String),
    #[error("0 is not a port sshd listens on")]
    PortZero,
    #[error("{0:?} is not a login name (lower-case letters, digits, '_' and '-')")]
    User(String),
    #[error("the helper runs as root; a node logged in to as {0:?} needs sudo")]
    NoSudo(String),
    #[error(transparent)]
    Jump(#[from] JumpError),
    /// A key file or a local node's root given as a relative path.
    #[error("{:?} is not an absolute path", .0.display())]
    NotAbsolute(PathBuf),
    /// A local node's root that is not UTF-8 or holds a control character.
    #[error("{:?} is not a path mesh keeps", .0.display())]
    NotKept(PathBuf),
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("a node on this machine is not reached through jump hosts")]
    LocalJump,
    #[error("{:?} is not an identity file (a regular file holding a key)", .0.display())]
    NotAnIdentity(PathBuf),
    #[error("no identity file at {:?}: {source}", .path.display())]
    NoIdentity {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{root:?} cannot hold the instances' directories: {why}")]
    RootPath { root: String, why: PathError },
    #[error("{root:?} cannot hold the instances' directories: {why}")]
    SystemRoot { root: String, why: SystemDirectory },
    #[error("not an OpenSSH public key ({0}); `mesh node trust` pins one")]
    HostKey(PublicKeyError),
}

/// Why a directory is the system's or others' (never one a host hands to a module).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SystemDirectory {
    /// In or one of [`SYSTEM`] (the one named).
    #[error("{0} is the system's own")]
    Own(&'static str),
    /// One of [`SHARED`].
    #[error("{0} holds others' files")]
    Shared(String),
    #[error("{0} is a user's home")]
    Home(String),
}

/// A name refused by [`check_word`]: what it was to name (`an instance`) and the name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{name:?} cannot name {what}: use lower case letters, digits and '-', starting with a letter"
)]
pub struct WordError {
    pub what: String,
    pub name: String,
}

/// A port refused by [`check_port`]: not in [`PORTS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{port} is not a port the host gives out ({start}-{end})",
    port = .0,
    start = PORTS.start(),
    end = PORTS.end()
)]
pub struct PortError(pub u16);

/// The system's own directories: instances' directories never go in them. `/root` is root's
/// home (its keys); `/var/run` and `/var/lock` are `/run` by another name; the package manager's,
/// systemd's and the mesh's own state are under `/var/lib`.
const SYSTEM: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/boot",
    "/run",
    "/proc",
    "/sys",
    "/dev",
    "/root",
    "/var/run",
    "/var/lock",
    "/var/lib/dpkg",
    "/var/lib/apt",
    "/var/lib/systemd",
    "/var/lib/mesh",
    "/var/cache/apt",
    "/lost+found",
];

/// Directories every machine has that hold others' files: a directory in them is fine, but one of
/// them handed to a module's owner gives it everything they hold (`/home` every user's home,
/// `/tmp` everyone's files, `/root` root's keys).
const SHARED: &[&str] = &[
    "/",
    "/home",
    "/tmp",
    "/var",
    "/var/tmp",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/spool",
    "/var/mail",
    "/var/opt",
    "/var/local",
    "/var/backups",
    "/srv",
    "/opt",
    "/mnt",
    "/media",
];

/// The system directory `path` is in (`/etc/ssh`: "/etc is the system's own"), or is (`/home`:
/// "/home is shared with every user"), or a user's home (`/home/alice`); `None` for a directory a
/// host may make and give to a module.
pub fn system_directory(path: &str) -> Option<SystemDirectory> {
    let under = |dir: &str| {
        path == dir
            || path
                .strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if let Some(s) = SYSTEM.iter().find(|s| under(s)) {
        return Some(SystemDirectory::Own(s));
    }
    if SHARED.contains(&path) {
        return Some(SystemDirectory::Shared(path.to_string()));
    }
    path.strip_prefix("/home/")
        .filter(|user| !user.contains('/'))
        .map(|_| SystemDirectory::Home(path.to_string()))
}

impl Node {
    /// Whether the node can be stored: a valid name, an address, a port, a login name (not root
    /// needs sudo), jump hosts, an identity that is a key file, a root for the instances'
    /// directories, and a host key that is one.
    pub fn validate(&self) -> Result<(), Invalid> {
        if !valid_name(&self.name) {
            return Err(invalid("name", NodeError::Name(self.name.clone())));
        }
        if !valid_address(&self.address) {
            return Err(invalid("address", NodeError::Address(self.address.clone())));
        }
        if self.port == 0 {
            return Err(invalid("port", NodeError::PortZero));
        }
        if !valid_user(&self.user) {
            return Err(invalid("user", NodeError::User(self.user.clone())));
        }
        if self.user != "root" && !self.sudo {
            return Err(invalid("sudo", NodeError::NoSudo(self.user.clone())));
        }
        if let Some(jump) = &self.jump {
            mesh_ssh::proxy_jump::check_jump(&self.name, jump)
                .map_err(|e| invalid("jump", e.into()))?;
        }
        if let Some(identity) = &self.identity {
            check_identity(identity).map_err(|e| invalid("identity", e))?;
        }
        check_root(&self.root).map_err(|e| invalid("root", e))?;
        if let Some(dir) = &self.local {
            check_local(dir, self.jump.is_some()).map_err(|e| invalid("local", e))?;
        }
        if let Some(key) = &self.host_key {
            mesh_ssh::parse_public_key(key)
                .map_err(|e| invalid("host-key", NodeError::HostKey(e)))?;
        }
        Ok(())
    }
}

/// A local node's root: an absolute path to a directory (the machine's `/` for its helper),
/// reached directly, never through a jump host.
fn check_local(dir: &Path, jump: bool) -> Result<(), NodeError> {
    if !dir.is_absolute() {
        return Err(NodeError::NotAbsolute(dir.to_path_buf()));
    }
    if dir.to_str().is_none_or(|d| d.chars().any(char::is_control)) {
        return Err(NodeError::NotKept(dir.to_path_buf()));
    }
    if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Err(NodeError::NotADirectory(dir.to_path_buf()));
    }
    if jump {
        return Err(NodeError::LocalJump);
    }
    Ok(())
}

/// A key file as the inventory keeps it: an absolute path to a regular file (never a device or
/// a pipe a read would hang on or never finish).
fn check_identity(path: &Path) -> Result<(), NodeError> {
    if !path.is_absolute() {
        return Err(NodeError::NotAbsolute(path.to_path_buf()));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(NodeError::NotAnIdentity(path.to_path_buf())),
        Err(source) => Err(NodeError::NoIdentity {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Where the instances' directories go: a path a machine's directory may have, not one of the
/// system's own directories.
fn check_root(root: &str) -> Result<(), NodeError> {
    if let Err(why) = check_place(root) {
        return Err(NodeError::RootPath {
            root: root.to_string(),
            why,
        });
    }
    // the root itself is only made (if missing), never handed over: a shared one such as /srv
    // may hold the instances' directories
    match system_directory(root).filter(|_| !SHARED.contains(&root) || root == "/") {
        Some(why) => Err(NodeError::SystemRoot {
            root: root.to_string(),
            why,
        }),
        None => Ok(()),
    }
}

/// A directory on a machine, as `mesh place` and a node's root take it.
pub fn check_place(path: &str) -> Result<(), mesh_wire::path::PathError> {
    mesh_wire::path::check(path, mesh_wire::path::Place::Machine)
}

/// Whether `name` can name an instance, a module, a requirement, a setting or a seat: lower
/// case letters, digits and '-', starting with a letter (as a module's own names are).
pub fn valid_word(name: &str) -> bool {
    mesh_catalogue::setting::valid_name(name)
}

/// Checks a name of the kind `what` (`an instance`, `a module`) with [`valid_word`].
pub fn check_word(what: &str, name: &str) -> Result<(), WordError> {
    if valid_word(name) {
        Ok(())
    } else {
        Err(WordError {
            what: what.to_string(),
            name: name.to_string(),
        })
    }
}

/// A port the host gave out: in [`PORTS`].
pub fn check_port(port: u16) -> Result<(), PortError> {
    if PORTS.contains(&port) {
        Ok(())
    } else {
        Err(PortError(port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_node_is_refused_where_its_root_is_not_an_absolute_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let local = |path: &Path| Node {
            local: Some(path.to_path_buf()),
            ..Node::new("box", "localhost")
        };
        assert!(local(dir.path()).validate().is_ok());
        for bad in [
            Path::new("relative/dir"),
            &file,
            &dir.path().join("missing"),
        ] {
            let e = local(bad).validate().unwrap_err();
            assert_eq!(e.field, "local", "{bad:?}");
        }
        let jumping = Node {
            jump: Some("bastion".into()),
            ..local(dir.path())
        };
        assert_eq!(jumping.validate().unwrap_err().field, "local");
    }

    #[test]
    fn a_node_is_refused_naming_the_field() {
        let ok = Node::new("web1", "192.0.2.1");
        assert!(ok.validate().is_ok());
        let field = |n: Node| n.validate().unwrap_err().field;
        assert_eq!(
            field(Node {
                port: 0,
                ..ok.clone()
            }),
            "port"
        );
        assert_eq!(
            field(Node {
                user: "deploy".into(),
                ..ok.clone()
            }),
            "sudo"
        );
        for root in ["../../etc", "/etc", "/etc/mesh", "/", "/usr/local"] {
            assert_eq!(
                field(Node {
                    root: root.into(),
                    ..ok.clone()
                }),
                "root",
                "{root}"
            );
        }
        for jump in ["web1", "a\nb\u{1b}[2J@node1", "-oProxyCommand=x@node1"] {
            assert_eq!(
                field(Node {
                    jump: Some(jump.into()),
                    ..ok.clone()
                }),
                "jump",
                "{jump:?}"
            );
        }
        for identity in ["/dev/zero", "relative/key", "/nonexistent/key"] {
            assert_eq!(
                field(Node {
                    identity: Some(identity.into()),
                    ..ok.clone()
                }),
                "identity",
                "{identity}"
            );
        }
        assert_eq!(
            field(Node {
                host_key: Some("not a key \u{1b}[2J".into()),
                ..ok.clone()
            }),
            "host-key"
        );
        assert!(
            Node {
                root: "/srv/data".into(),
                ..ok
            }
            .validate()
            .is_ok()
        );
    }

    #[test]
    fn a_system_or_shared_directory_is_never_a_directory_the_host_hands_over() {
        for path in [
            "/etc/ssh",
            "/etc",
            "/usr",
            "/usr/local/bin",
            "/root",
            "/boot",
            "/home",
            "/tmp",
            "/run",
            "/run/sshd",
            "/",
            "/var",
            "/var/lib",
            "/srv",
            "/home/alice",
            "/proc/1",
            "/dev/shm",
            "/lib64",
            // found by an attacker: accepted before
            "/var/run/x",
            "/root/.ssh",
            "/root/x",
            "/var/lib/systemd",
            "/var/lib/dpkg",
            "/var/lib/apt",
            "/var/lib/mesh/kv",
            "/lost+found",
        ] {
            assert!(system_directory(path).is_some(), "{path}");
        }
        for path in [
            "/srv/kv",
            "/mnt/disk2/kv",
            "/home/alice/kv",
            "/var/lib/kv",
            "/etcetera",
        ] {
            assert_eq!(system_directory(path), None, "{path}");
        }
        // a node's root is only made, never handed over: /srv may hold the instances' folders
        assert!(check_root("/srv").is_ok());
        assert!(check_root("/etc/mesh").is_err() && check_root("/").is_err());
    }

    #[test]
    fn words_have_no_control_character_and_no_path() {
        assert!(valid_word("kv-client") && valid_word("m2"));
        for bad in ["../../x", "x\ny", "z\u{1b}[1m", "ghost\u{7}", "", "-a"] {
            assert!(check_word("an instance", bad).is_err(), "{bad:?}");
        }
        assert!(check_port(20000).is_ok() && check_port(22).is_err());
        // the typed reasons say what the strings said
        assert_eq!(
            check_word("an instance", "-a").unwrap_err().to_string(),
            "\"-a\" cannot name an instance: use lower case letters, digits and '-', starting \
             with a letter"
        );
        assert_eq!(
            check_port(22).unwrap_err().to_string(),
            format!(
                "22 is not a port the host gives out ({}-{})",
                PORTS.start(),
                PORTS.end()
            )
        );
        assert_eq!(
            check_root("/etc/mesh").unwrap_err().to_string(),
            "\"/etc/mesh\" cannot hold the instances' directories: /etc is the system's own"
        );
    }
}
