//! `Include`: which files a line names, as OpenSSH finds them. `~/` is `$HOME` (else the passwd
//! home) and `~user/` that user's, as glob(3)'s `GLOB_TILDE` takes them in OpenSSH; a
//! relative path is read from `~/.ssh` for the user's file and `/etc/ssh` for the system's; `*`
//! and `?` are globs (in any part of the path, not matching a leading `.`), the files found in
//! byte order, as glob(3) sorts them. A file not there is no file.

use std::path::{Component, Path, PathBuf};

use super::Local;
use super::reason::Reason;
use super::values::wildcard;

/// Includes inside includes deeper than this are refused (OpenSSH's READCONF_MAX_DEPTH).
pub(super) const MAX_DEPTH: usize = 16;
/// More included files than this in one configuration is refused: no real one has that many,
/// and a configuration written to multiply them must not cost more.
pub(super) const MAX_FILES: usize = 256;

/// Where the user's file's relative Includes are read from.
pub(super) fn user_dir(local: &Local) -> PathBuf {
    local.include_home().unwrap_or(Path::new("")).join(".ssh")
}

/// The files `arg` names, relative ones under `dir`.
pub(super) fn expand(arg: &str, dir: &Path, local: &Local) -> Result<Vec<PathBuf>, Reason> {
    let path = match arg.strip_prefix('~') {
        Some(rest) => {
            let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
            let home = if user.is_empty() {
                local.include_home().map(Path::to_path_buf)
            } else {
                local.home_of(user)
            };
            let home = home.ok_or_else(|| Reason::NoHome {
                arg: arg.to_string(),
                user: user.to_string(),
            })?;
            home.join(tail)
        }
        None => dir.join(arg),
    };
    let mut found = vec![PathBuf::new()];
    for part in path.components() {
        let name = match part {
            Component::Normal(name) => name.to_string_lossy(),
            other => {
                found.iter_mut().for_each(|f| f.push(other));
                continue;
            }
        };
        if !name.contains(['*', '?']) {
            found.iter_mut().for_each(|f| f.push(&*name));
            continue;
        }
        found = found
            .iter()
            .flat_map(|parent| matching(parent, &name))
            .collect();
    }
    found.sort();
    Ok(found)
}

/// The entries of `parent` that `pattern` takes.
fn matching(parent: &Path, pattern: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') || pattern.starts_with('.'))
        .filter(|n| wildcard(pattern, n))
        .map(|n| parent.join(n))
        .collect()
}
