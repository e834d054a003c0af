//! Files on the machine, safe against a local user racing the helper: reading what is there, and
//! writing so nothing half-written is ever seen.
//!
//! Every operation works on directory handles reached by [`walk`] (no link followed that root did
//! not make), opens with `O_NOFOLLOW`, checks what it opened with `fstat` on the handle, and
//! changes owner and mode on the handle, never by path. A temp file is created exclusively under
//! an unpredictable name. A regular file with more than one name, in a directory someone other
//! than root can write, is neither read nor changed: it may be a hard link to any file.

mod tree;
mod walk;

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Gid, Mode, OFlags, Stat, Uid};
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use walk::{Dir, Writers, at, open_parent};
pub(crate) use walk::{HOST, Root};

/// The largest file the helper reads (to compare, to keep as an original): 16 MiB.
const MAX_FILE: u64 = 16 << 20;

/// A file as found on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) bytes: Vec<u8>,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    /// Permission bits only (no file type).
    pub(crate) mode: u32,
}

impl Root {
    /// Reads a regular file, or `None` when nothing is at `path`.
    pub(crate) fn read(&self, path: &Path) -> io::Result<Option<Found>> {
        let (dir, name) = match open_parent(self, path, false) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some((fd, st)) = open_file(&dir, &name)? else {
            return Ok(None);
        };
        // a file someone else can write may be made any size (a sparse one costs them nothing): a
        // managed file is configuration, and a larger one is refused rather than read or kept
        if st.st_size > MAX_FILE as i64 {
            return Err(io::Error::other(format!(
                "{} is {} bytes; the mesh reads and keeps files of at most {} MiB",
                dir.show(&name),
                st.st_size,
                MAX_FILE >> 20
            )));
        }
        let mut bytes = Vec::new();
        File::from(fd).take(MAX_FILE + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(io::Error::other(format!(
                "{} grew past {} MiB while it was read",
                dir.show(&name),
                MAX_FILE >> 20
            )));
        }
        Ok(Some(Found {
            bytes,
            uid: st.st_uid,
            gid: st.st_gid,
            mode: st.st_mode & 0o7777,
        }))
    }

    /// Whether anything (a link included, never followed) is at `path`.
    pub(crate) fn exists(&self, path: &Path) -> io::Result<bool> {
        let (dir, name) = match open_parent(self, path, false) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(&dir.fd, &name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(at(&dir.show(&name), e)),
        }
    }

    /// Writes `bytes` to `path` so that a reader sees the old or the new content, never a part: a
    /// temp file of a random name made exclusively in the same directory (mode 0600 while it is
    /// written), its owner and mode set on the handle, fsync, rename within the directory's handle,
    /// fsync of the directory. `owner` is `(uid, gid)`, or `None` to keep the writer's.
    pub(crate) fn write_atomically(
        &self,
        path: &Path,
        bytes: &[u8],
        owner: Option<(u32, u32)>,
        mode: u32,
    ) -> io::Result<()> {
        let (dir, name) = open_parent(self, path, false).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => io::Error::other(format!(
                "its directory {} does not exist",
                path.parent().unwrap_or(path).display()
            )),
            _ => e,
        })?;
        let tmp = temp_name()?;
        let fd = rustix::fs::openat(
            &dir.fd,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| at(&dir.show(OsStr::new(&tmp)), e))?;
        let result = (|| {
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            if let Some((uid, gid)) = owner {
                rustix::fs::fchown(&file, Some(Uid::from_raw(uid)), Some(Gid::from_raw(gid)))?;
            }
            // after chown: chown clears setuid bits
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
            file.sync_all()?;
            rustix::fs::renameat(&dir.fd, tmp.as_str(), &dir.fd, &name)?;
            rustix::fs::fsync(&dir.fd)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&dir.fd, tmp.as_str(), AtFlags::empty());
        }
        result.map_err(|e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    }

    /// Sets owner and mode of an existing regular file without touching its content (or its mtime).
    pub(crate) fn set_owner_mode(
        &self,
        path: &Path,
        uid: u32,
        gid: u32,
        mode: u32,
    ) -> io::Result<()> {
        let (dir, name) = open_parent(self, path, false)?;
        let (fd, _) = open_file(&dir, &name)?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is gone", path.display()),
            )
        })?;
        set_on_handle(&fd, uid, gid, mode)
    }

    /// Removes whatever is at `path` (a link itself, never what it points to), durably.
    pub(crate) fn remove(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = match open_parent(self, path, false) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        match rustix::fs::unlinkat(&dir.fd, &name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(at(&dir.show(&name), e)),
        }
        Ok(rustix::fs::fsync(&dir.fd)?)
    }

    /// Makes `path` a symbolic link to `target` (whatever was at `path` replaced), durably; missing
    /// directories on the way are made.
    pub(crate) fn link(&self, path: &Path, target: &Path) -> io::Result<()> {
        let (dir, name) = open_parent(self, path, true)?;
        match rustix::fs::unlinkat(&dir.fd, &name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(at(&dir.show(&name), e)),
        }
        rustix::fs::symlinkat(target, &dir.fd, &name).map_err(|e| at(&dir.show(&name), e))?;
        Ok(rustix::fs::fsync(&dir.fd)?)
    }
}

/// What is at a path, never following a link there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum At {
    Nothing,
    /// A symbolic link, and what it points at.
    Link(std::path::PathBuf),
    /// A regular file.
    File,
    /// A directory, a device, a socket or a pipe: never replaced by a link.
    Other(&'static str),
}

impl Root {
    /// What is at `path` (a link is read, never followed).
    pub(crate) fn what_is_at(&self, path: &Path) -> io::Result<At> {
        let (dir, name) = match open_parent(self, path, false) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(At::Nothing),
            Err(e) => return Err(e),
        };
        let st = match rustix::fs::statat(&dir.fd, &name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => return Ok(At::Nothing),
            Err(e) => return Err(at(&dir.show(&name), e)),
        };
        Ok(match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => {
                let target = rustix::fs::readlinkat(&dir.fd, &name, Vec::new())
                    .map_err(|e| at(&dir.show(&name), e))?;
                let target: std::ffi::OsString =
                    std::os::unix::ffi::OsStringExt::from_vec(target.into_bytes());
                At::Link(target.into())
            }
            FileType::RegularFile => At::File,
            FileType::Directory => At::Other("a directory"),
            _ => At::Other("a device, socket or pipe"),
        })
    }
}

/// Root's uid and gid, as this helper can give them: one that is not root (a test's, under
/// `mesh-host --root`) gives its own, which counts as root's here as it does for who may write
/// a directory (`walk::Writers`).
pub(crate) fn root_ids() -> (u32, u32) {
    let uid = rustix::process::geteuid();
    if uid.is_root() {
        (0, 0)
    } else {
        (uid.as_raw(), rustix::process::getegid().as_raw())
    }
}

/// Lower-case hex sha256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    mesh_wire::hex(&Sha256::digest(bytes))
}

impl Root {
    /// The ancestors of `path` that do not exist yet, deepest first: the directories writing it would
    /// have to make.
    pub(crate) fn missing_ancestors(&self, path: &Path) -> Vec<String> {
        path.ancestors()
            .skip(1)
            .take_while(|p| {
                !p.as_os_str().is_empty() && std::fs::symlink_metadata(self.real(p)).is_err()
            })
            .map(|p| p.display().to_string())
            .collect()
    }

    /// Opens (creating it if missing) the lock file `path`: never through a link, root's, mode 0600.
    pub(crate) fn open_lock(&self, path: &Path) -> io::Result<File> {
        let (dir, name) = open_parent(self, path, false)?;
        let fd = rustix::fs::openat(
            &dir.fd,
            &name,
            OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| at(&dir.show(&name), e))?;
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::other(format!(
                "{} is not a regular file",
                dir.show(&name)
            )));
        }
        Ok(File::from(fd))
    }
}

/// Opens the regular file `name` in `dir` to read, or `None` if there is nothing there. A link,
/// a directory, a device, or a file with more than one name in a directory someone other than
/// root can write, is refused.
fn open_file(dir: &Dir, name: &OsStr) -> io::Result<Option<(OwnedFd, Stat)>> {
    let shown = dir.show(name);
    // NONBLOCK: a FIFO planted here must not hang the helper
    let fd = match rustix::fs::openat(
        &dir.fd,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) => return Err(not_regular(&shown)),
        Err(e) => return Err(at(&shown, e)),
    };
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(not_regular(&shown));
    }
    if st.st_nlink > 1 && dir.writers != Writers::Root {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{shown} has {} names (a hard link) and {} can write in {}: it may be any file \
                 on the machine, so the mesh neither reads nor changes it; remove the other names \
                 or the file",
                st.st_nlink,
                dir.writers,
                dir.path.display()
            ),
        ));
    }
    Ok(Some((fd, st)))
}

fn not_regular(shown: &str) -> io::Error {
    io::Error::other(format!(
        "{shown} is not a regular file (a directory, link or device is never replaced)"
    ))
}

/// Owner, then mode (chown clears setuid bits), on an open handle.
fn set_on_handle(fd: &OwnedFd, uid: u32, gid: u32, mode: u32) -> io::Result<()> {
    rustix::fs::fchown(fd, Some(Uid::from_raw(uid)), Some(Gid::from_raw(gid)))?;
    rustix::fs::fchmod(fd, Mode::from_raw_mode(mode))?;
    Ok(())
}

/// A temp file's name no one can guess: `.mesh-` and 128 random bits.
fn temp_name() -> io::Result<String> {
    Ok(format!(".mesh-{}.tmp", random_hex()?))
}

/// 128 random bits in lower-case hex: a name no one can guess.
pub(crate) fn random_hex() -> io::Result<String> {
    let mut random = [0u8; 16];
    rustix::rand::getrandom(&mut random, rustix::rand::GetRandomFlags::empty())?;
    Ok(mesh_wire::hex(&random))
}

#[cfg(test)]
pub(crate) mod tests;
