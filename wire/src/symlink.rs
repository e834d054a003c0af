//! A symbolic link the mesh makes: where it is and what it points at.

use serde::{Deserialize, Serialize};

/// A link at `path` pointing at `target`. Both are checked as machine paths
/// ([`crate::path::check`]): absolute, no `..`, never under the helper's state or a kernel's
/// file system, so a link never becomes a way around the rules a file is held to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymlinkSpec {
    pub path: String,
    pub target: String,
}

#[cfg(test)]
mod tests {
    use crate::{Spec, SymlinkSpec};

    fn link(path: &str, target: &str) -> Spec {
        Spec::Symlink(SymlinkSpec {
            path: path.into(),
            target: target.into(),
        })
    }

    #[test]
    fn a_link_is_held_to_the_machine_path_rule_at_both_ends() {
        assert!(link("/etc/app/current", "/srv/app/v2").check().is_ok());
        let refused = |s: Spec| s.check().unwrap_err().field;
        assert_eq!(refused(link("/var/lib/mesh/record.json", "/tmp/x")), "path");
        assert_eq!(
            refused(link("/etc/x", "/proc/self/root/etc/shadow")),
            "target"
        );
        assert_eq!(refused(link("/etc/x", "../shadow")), "target");
        assert_eq!(refused(link("/etc/x", "/var/lib/mesh")), "target");
    }
}
