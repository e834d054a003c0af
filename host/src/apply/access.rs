//! The operator's data a process or container is given access to: a path the operator named,
//! which the helper never creates, chowns, chmods or removes. It only checks that the path is
//! there (a missing one fails the process or container, clearly, rather than being made), and
//! has systemd mount it read-only for the process when only reading was asked
//! (`BindReadOnlyPaths=`); a container gets it as a bind mount (`ContainerSpec::binds`).

use super::Failure;
use mesh_wire::Access;

/// Fails, naming it, on the first path that is not on the machine or cannot be written into a
/// unit file as it is.
pub(super) fn present(root: &crate::files::Root, access: &[Access]) -> Result<(), Failure> {
    for a in access {
        // systemd splits these settings on spaces and colons and unquotes them
        if a.path
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, ':' | '"' | '\'' | '\\'))
        {
            return Err(format!(
                "the operator's data {} at {:?}: a path with a space, colon, quote or backslash \
                 cannot be given to a process or container; name another with `mesh place`",
                a.name, a.path
            )
            .into());
        }
        // looked at only, never opened for writing: following a link here changes nothing
        if let Err(e) = std::fs::metadata(root.real(std::path::Path::new(&a.path))) {
            return Err(format!(
                "the operator's data {} at {} is not on this machine ({e}); the mesh never \
                 creates it: make it there, or name another path with `mesh place`",
                a.name, a.path
            )
            .into());
        }
    }
    Ok(())
}

/// The unit file's lines for `access`: read-only paths mounted so for this process alone.
pub(super) fn unit_lines(access: &[Access]) -> String {
    access
        .iter()
        .filter(|a| !a.write)
        .map(|a| format!("BindReadOnlyPaths={}\n", a.path.replace('%', "%%")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{present, unit_lines};
    use mesh_wire::Access;

    fn access(path: &str, write: bool) -> Access {
        Access {
            name: "media".into(),
            path: path.into(),
            write,
        }
    }

    #[test]
    fn a_missing_path_fails_and_is_not_made() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("media");
        let said = present(
            &crate::files::HOST,
            &[access(missing.to_str().unwrap(), false)],
        )
        .unwrap_err()
        .to_string();
        assert!(said.contains("never creates it"), "{said}");
        assert!(!missing.exists());
        assert!(
            present(
                &crate::files::HOST,
                &[access(dir.path().to_str().unwrap(), false)]
            )
            .is_ok()
        );
        assert!(present(&crate::files::HOST, &[access("/srv/a b", false)]).is_err());
    }

    #[test]
    fn only_read_access_is_mounted_read_only() {
        assert_eq!(
            unit_lines(&[access("/srv/media", false), access("/srv/up", true)]),
            "BindReadOnlyPaths=/srv/media\n"
        );
    }
}
