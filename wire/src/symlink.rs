//! A symbolic link the mesh makes: where it is and what it points at.

use crate::path::Place;
use serde::{Deserialize, Serialize};

/// A link at `path` pointing at `target`. Both are checked as machine paths
/// ([`crate::path::check`]): absolute, no `..`, never under the helper's state or a kernel's
/// file system, so a link never becomes a way around the rules a file is held to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymlinkSpec {
    pub path: String,
    pub target: String,
}

impl crate::SpecKind for SymlinkSpec {
    const KIND: &'static str = "symlink";

    fn at(&self) -> &str {
        &self.path
    }

    fn paths(&self) -> Vec<(String, &str, Place)> {
        vec![
            ("path".into(), self.path.as_str(), Place::Machine),
            ("target".into(), self.target.as_str(), Place::Machine),
        ]
    }

    fn claims(&self) -> Vec<(String, &'static str)> {
        vec![(self.path.clone(), "symlink")]
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        crate::named(&[("target", old.target != self.target)])
    }

    fn plan_text(&self) -> String {
        format!("link -> {}\n", self.target)
    }

    fn removal(&self) -> String {
        format!(
            "{}: removed, and what the mesh found there (a file or a link) put back",
            self.path
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::{Spec, SymlinkSpec};

    fn link(path: &str, target: &str) -> Spec {
        Spec::from(SymlinkSpec {
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
