//! The environment of a process or container, kept where only root reads it: a file of mode 0600
//! owned by root under the helper's state directory. systemd reads a process's file as root
//! (`EnvironmentFile=`) before it drops privileges; the docker CLI reads a container's
//! (`--env-file`). So no value, a secret one least of all, is ever in a world-readable unit file,
//! in `systemctl show`, or on a command line that `ps` shows.

use super::Failure;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::files;
use crate::record::Paths;

/// The folder of environment files, root's alone.
fn dir(paths: &Paths) -> PathBuf {
    paths.root.join("env")
}

/// Where a process unit's (`app.service`) or a container's environment file is.
pub(super) fn path(paths: &Paths, name: &str, container: bool) -> PathBuf {
    let kind = if container { "container" } else { "process" };
    dir(paths).join(format!("{name}.{kind}.env"))
}

/// Writes `text` to `at`, root's only (0600), atomically; its folder is made 0700 if missing.
pub(super) fn write(paths: &Paths, at: &Path, text: &str) -> Result<(), Failure> {
    let folder = dir(paths);
    // root's and 0700 before any file is written into it, whatever was there before
    files::HOST
        .private_dir(&folder, 0o700)
        .map_err(|e| format!("{}: {e}", folder.display()))?;
    files::HOST
        .write_atomically(at, text.as_bytes(), Some(files::root_ids()), 0o600)
        .map_err(|e| format!("{}: {e}", at.display()))
        .map_err(Failure::from)
}

/// Removes an environment file; one already gone is fine.
pub(super) fn remove(at: &Path) -> Result<(), Failure> {
    files::HOST
        .remove(at)
        .map_err(|e| format!("{}: cannot remove it: {e}", at.display()))
        .map_err(Failure::from)
}

/// A process's environment as systemd's `EnvironmentFile=` reads it (systemd.exec(5)): one
/// `KEY="VALUE"` per variable. Inside double quotes systemd takes every character as it is,
/// newlines included, except that a backslash escapes `"`, `\`, `` ` `` and `$`; a value is never
/// expanded. Names and values were checked (`mesh_wire::unit`): no NUL or stray control
/// character reaches here.
pub(super) fn systemd_text(environment: &BTreeMap<String, String>) -> String {
    let mut out = String::from("# Written by mesh: this process's environment, root's only.\n");
    for (name, value) in environment {
        out.push_str(name);
        out.push_str("=\"");
        for c in value.chars() {
            if matches!(c, '"' | '\\' | '`' | '$') {
                out.push('\\');
            }
            out.push(c);
        }
        out.push_str("\"\n");
    }
    out
}

/// A container's environment as `docker run --env-file` reads it: `KEY=VALUE` per line, the
/// value taken as it is (no quotes, no escapes), so a value cannot span lines; the check refused
/// such a value before this (`mesh_wire::unit::check_env_value`).
pub(super) fn docker_text(environment: &BTreeMap<String, String>) -> String {
    let mut out = String::from("# Written by mesh: this container's environment, root's only.\n");
    for (name, value) in environment {
        out.push_str(&format!("{name}={value}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::MetadataExt;

    use super::{docker_text, path, systemd_text, write};
    use crate::apply::testkit::sandbox;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn systemd_values_are_quoted_so_they_arrive_as_they_are() {
        let text = systemd_text(&env(&[
            ("PLAIN", "s3cret"),
            (
                "HARD",
                "a \"b\" \\c `d` $HOME ${X} 100% 'e'\nsecond line\t#not a comment",
            ),
        ]));
        assert_eq!(
            text,
            "# Written by mesh: this process's environment, root's only.\n\
             HARD=\"a \\\"b\\\" \\\\c \\`d\\` \\$HOME \\${X} 100% 'e'\nsecond line\t#not a comment\"\n\
             PLAIN=\"s3cret\"\n"
        );
    }

    #[test]
    fn docker_values_are_one_line_each() {
        assert_eq!(
            docker_text(&env(&[("A", "x y \"z\" $V"), ("B", "")])),
            "# Written by mesh: this container's environment, root's only.\nA=x y \"z\" $V\nB=\n"
        );
    }

    #[test]
    fn the_file_is_root_only() {
        let (_dir, paths) = sandbox();
        std::fs::create_dir_all(&paths.root).unwrap();
        let at = path(&paths, "app.service", false);
        assert!(at.ends_with("env/app.service.process.env"));
        if std::fs::metadata("/proc/self")
            .map(|m| m.uid())
            .unwrap_or(1)
            != 0
        {
            return; // owning it by root needs root
        }
        write(&paths, &at, "K=\"v\"\n").unwrap();
        let file = std::fs::metadata(&at).unwrap();
        assert_eq!(
            (file.uid(), file.gid(), file.mode() & 0o7777),
            (0, 0, 0o600)
        );
        let folder = std::fs::metadata(at.parent().unwrap()).unwrap();
        assert_eq!(folder.mode() & 0o7777, 0o700);
    }
}
