//! The helper as the local transport keeps it under a node's root, and why running it there is
//! safe. The local helper runs as the operator, so whoever can change its bytes runs code as the
//! operator. Two guards, both on every run (found by a review):
//!
//! - the root is refused while a directory from it down to the helper's (`DIR`, `DIR/var`, ...,
//!   `DIR/var/lib/mesh/bin`) or the helper itself is owned by another user than the operator or
//!   root, or is writable by its group or by others: another user could swap the file between
//!   its check and its exec;
//! - the stored file is read and its sha256 checked before each run: one whose bytes are not
//!   the helper's is never run, but treated as missing, so the push stores it again (over it,
//!   by rename).
//!
//! Storing writes a fresh file beside it (created, never opened where it already is, so a link
//! planted there is not followed) and renames it over the name only once its sha256 is right.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::push::Helper;

/// Why the helper under a node's root may not be run or stored: a directory or the file another
/// user could change, or what failed reading, unpacking or writing it, naming the path.
#[derive(Debug, thiserror::Error)]
pub(super) enum StoreError {
    #[error("{} has no directory", .0.display())]
    NoDirectory(PathBuf),
    #[error("{} is not under {}", .dir.display(), .root.display())]
    NotUnder { dir: PathBuf, root: PathBuf },
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("reading {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} belongs to user {owner}, not to the operator (user {operator}) or root: another user \
         could change the helper run as the operator; refused",
        .path.display()
    )]
    NotTheOperators {
        path: PathBuf,
        owner: u32,
        operator: u32,
    },
    #[error(
        "{} is writable by its group or by others (mode {mode:o}): another user could change \
         the helper run as the operator; refused (`chmod go-w` it)",
        .path.display()
    )]
    Writable { path: PathBuf, mode: u32 },
    #[error("creating {}: {source}", .dir.display())]
    Create {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("unpacking the helper: {0}")]
    Unpack(std::io::Error),
    #[error(
        "the helper arrived incomplete or changed (its sha256 is not {sha256}): nothing stored"
    )]
    Changed { sha256: String },
    #[error("storing the helper at {}: {source}", .path.display())]
    Store {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What a run finds where the helper lives.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Found {
    /// The helper this mesh carries, safe to run.
    Ready,
    /// Not there, or not the helper's bytes: to be stored (again).
    Missing,
}

/// Whether the helper at `path` (under `root`) may be run: `Err` names what makes the root
/// unsafe.
pub(super) fn check(root: &Path, path: &Path, helper: &Helper) -> Result<Found, StoreError> {
    let read = |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    };
    let Some(dir) = path.parent() else {
        return Err(StoreError::NoDirectory(path.to_path_buf()));
    };
    if !guarded(root, dir)? {
        return Ok(Found::Missing);
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(read(e)),
    };
    if !meta.is_file() {
        return Ok(Found::Missing);
    }
    only_the_operators(path, &meta)?;
    let bytes = std::fs::read(path).map_err(read)?;
    Ok(if sha256(&bytes) == helper.sha256() {
        Found::Ready
    } else {
        Found::Missing
    })
}

/// Whether every directory from `root` down to `dir` is the operator's alone; `false` when one
/// is not there yet (nothing is stored), `Err` naming the first that another user could change.
fn guarded(root: &Path, dir: &Path) -> Result<bool, StoreError> {
    let below = dir.strip_prefix(root).map_err(|_| StoreError::NotUnder {
        dir: dir.to_path_buf(),
        root: root.to_path_buf(),
    })?;
    let mut at = root.to_path_buf();
    let mut steps = vec![at.clone()];
    for part in below.components() {
        at.push(part);
        steps.push(at.clone());
    }
    for step in steps {
        match std::fs::symlink_metadata(&step) {
            Ok(meta) if meta.is_dir() => only_the_operators(&step, &meta)?,
            Ok(_) => return Err(StoreError::NotADirectory(step)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(source) => return Err(StoreError::Read { path: step, source }),
        }
    }
    Ok(true)
}

/// `Err` when `path` is owned by another user than the operator or root, or is writable by its
/// group or by others.
fn only_the_operators(path: &Path, meta: &std::fs::Metadata) -> Result<(), StoreError> {
    let operator = nix::unistd::geteuid().as_raw();
    if meta.uid() != operator && meta.uid() != 0 {
        return Err(StoreError::NotTheOperators {
            path: path.to_path_buf(),
            owner: meta.uid(),
            operator,
        });
    }
    if meta.mode() & 0o022 != 0 {
        return Err(StoreError::Writable {
            path: path.to_path_buf(),
            mode: meta.mode() & 0o7777,
        });
    }
    Ok(())
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Unpacks the helper, checks its sha256, writes it to a new file beside `path` and only then
/// gives it its name, in a directory only the operator can change.
pub(super) fn store(root: &Path, path: &Path, helper: &Helper) -> Result<(), StoreError> {
    let dir = path
        .parent()
        .ok_or_else(|| StoreError::NoDirectory(path.to_path_buf()))?;
    // 0755 whatever the umask allows more of: a group-writable directory is refused
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
        .map_err(|source| StoreError::Create {
            dir: dir.to_path_buf(),
            source,
        })?;
    guarded(root, dir)?;
    let mut unpacked = Vec::with_capacity(helper.unpacked_len());
    flate2::read::GzDecoder::new(helper.gzipped())
        .read_to_end(&mut unpacked)
        .map_err(StoreError::Unpack)?;
    if sha256(&unpacked) != helper.sha256() {
        return Err(StoreError::Changed {
            sha256: helper.sha256().to_string(),
        });
    }
    let part = part_beside(path);
    let _ = std::fs::remove_file(&part);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .open(&part)
        .and_then(|mut f| f.write_all(&unpacked).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::rename(&part, path));
    written.map_err(|source| {
        let _ = std::fs::remove_file(&part);
        StoreError::Store {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// The file a store writes before renaming it: one per process, so two mesh runs storing at
/// once do not write into each other's.
fn part_beside(path: &Path) -> PathBuf {
    path.with_extension(format!("part.{}", std::process::id()))
}
