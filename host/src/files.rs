//! Files on the machine: reading what is there, and writing so nothing half-written is ever seen.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use sha2::{Digest, Sha256};

/// A file as found on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) bytes: Vec<u8>,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    /// Permission bits only (no file type).
    pub(crate) mode: u32,
}

/// Reads a regular file, or `None` when nothing is at `path`.
pub(crate) fn read(path: &Path) -> io::Result<Option<Found>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file (a directory, link or device is never replaced)",
            path.display()
        )));
    }
    Ok(Some(Found {
        bytes: fs::read(path)?,
        uid: meta.uid(),
        gid: meta.gid(),
        mode: meta.mode() & 0o7777,
    }))
}

/// Writes `bytes` to `path` so that a reader sees the old or the new content, never a part:
/// a temp file in the same directory with its owner and mode set, fsync, rename, fsync of the
/// directory. `owner` is `(uid, gid)`, or `None` to keep the writer's.
pub(crate) fn write_atomically(
    path: &Path,
    bytes: &[u8],
    owner: Option<(u32, u32)>,
    mode: u32,
) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("a path with no directory"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("a path with no file name"))?;
    if !dir.is_dir() {
        return Err(io::Error::other(format!(
            "its directory {} does not exist",
            dir.display()
        )));
    }
    let tmp = dir.join(format!(
        ".{}.mesh-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
        }
        // after chown: chown clears setuid bits
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Sets owner and mode of an existing file without touching its content (or its mtime).
pub(crate) fn set_owner_mode(path: &Path, uid: u32, gid: u32, mode: u32) -> io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

/// Removes a file and makes the removal durable.
pub(crate) fn remove(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Lower-case hex sha256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Makes a directory's entries durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The ancestors of `path` that do not exist yet, deepest first: the directories writing it would
/// have to make.
pub(crate) fn missing_ancestors(path: &Path) -> Vec<String> {
    path.ancestors()
        .skip(1)
        .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
        .map(|p| p.display().to_string())
        .collect()
}

/// Removes directories the mesh made, deepest first, stopping at the first that holds anything
/// (someone else's file may be in it now: then it and those above it stay).
pub(crate) fn remove_empty(made: &[String]) {
    for dir in made {
        if fs::remove_dir(dir).is_err() {
            break;
        }
    }
}
