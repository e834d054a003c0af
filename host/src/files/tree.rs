//! Directories on the machine, by handle: made with `mkdirat`, owner and mode set on the opened
//! directory, removed with `unlinkat(AT_REMOVEDIR)`, and trees (a process's bundle) removed or
//! pruned without ever following a link out of them.

use std::collections::BTreeSet;
use std::ffi::{CStr, OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode};
use rustix::io::Errno;

use super::Root;
use super::set_on_handle;
use super::walk::{Dir, Writers, at, open_dir, open_dir_at, open_parent};

impl Root {
    /// Owner, group and mode of the directory at `path`, or `None` if nothing is there. Anything
    /// else there (a file, a link) is refused.
    pub(crate) fn dir_meta(&self, path: &Path) -> io::Result<Option<(u32, u32, u32)>> {
        let (dir, name) = match open_parent(self, path, false) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(&dir.fd, &name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                Ok(Some((st.st_uid, st.st_gid, st.st_mode & 0o7777)))
            }
            Ok(_) => Err(io::Error::other(
                "is there and is not a directory; the mesh leaves it alone",
            )),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(at(&dir.show(&name), e)),
        }
    }

    /// Makes the directory `path` and those missing above it (mode 0755, root's).
    pub(crate) fn make_dir(&self, path: &Path) -> io::Result<()> {
        open_dir(self, path, true).map(drop)
    }

    /// Sets owner and mode of the directory `path`, on its handle (opened without following a link),
    /// and makes its entry durable.
    ///
    /// Refused where someone but root can write the parent: they could rename the directory away
    /// and put another (root's, holding what they may not read) in its place between two pushes,
    /// and the mesh would hand that one to the owner it declares.
    pub(crate) fn set_dir_owner_mode(
        &self,
        path: &Path,
        uid: u32,
        gid: u32,
        mode: u32,
    ) -> io::Result<()> {
        let (parent, name) = open_parent(self, path, false)?;
        if parent.writers != Writers::Root {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is in {}, which {} can write: a directory there can be swapped for another, \
                 so the mesh sets no owner or mode in it; place it under a directory only root \
                 can write",
                    parent.show(&name),
                    parent.path.display(),
                    parent.writers
                ),
            ));
        }
        let fd = open_dir_at(&parent.fd, &name).map_err(|e| refuse_link(&parent, &name, e))?;
        set_on_handle(&fd, uid, gid, mode)?;
        Ok(rustix::fs::fsync(&parent.fd)?)
    }

    /// Makes the helper's own directory `path`: root's, `mode`, whatever it was before. One that
    /// is so already, in a directory only root can write, is left untouched: a run that changes
    /// nothing then writes nothing here and waits on no disk (each `fsync` a journal commit,
    /// which machines sharing a disk take in turn).
    pub(crate) fn private_dir(&self, path: &Path, mode: u32) -> io::Result<()> {
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        if self.is_dir_of(path, (uid, gid, mode))? {
            return Ok(());
        }
        self.make_dir(path)?;
        self.set_dir_owner_mode(path, uid, gid, mode)
    }

    /// Whether `path` is a directory (not a link to one) of exactly this owner, group and mode,
    /// in a directory only root can write.
    fn is_dir_of(&self, path: &Path, want: (u32, u32, u32)) -> io::Result<bool> {
        let (dir, name) = match open_parent(self, path, false) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        if dir.writers != Writers::Root {
            return Ok(false);
        }
        Ok(
            match rustix::fs::statat(&dir.fd, &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => {
                    FileType::from_raw_mode(st.st_mode) == FileType::Directory
                        && (st.st_uid, st.st_gid, st.st_mode & 0o7777) == want
                }
                Err(_) => false,
            },
        )
    }

    /// Whether the directory `path` is empty, counting as absent what is in `gone` (what a dry run
    /// would have removed before it: the real run removes it first); `None` when no directory is there.
    pub(crate) fn dir_is_empty(
        &self,
        path: &Path,
        gone: &BTreeSet<PathBuf>,
    ) -> io::Result<Option<bool>> {
        if self.dir_meta(path)?.is_none() || gone.contains(path) {
            return Ok(None);
        }
        let dir = open_dir(self, path, false)?;
        Ok(Some(
            entries(&dir.fd)?
                .iter()
                .all(|name| gone.contains(&path.join(name))),
        ))
    }

    /// Removes the directory `path` if it is empty (the kernel checks, so nothing put there meanwhile
    /// is lost).
    pub(crate) fn remove_dir(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = open_parent(self, path, false)?;
        rustix::fs::unlinkat(&dir.fd, &name, AtFlags::REMOVEDIR)
            .map_err(|e| at(&dir.show(&name), e))
    }

    /// Removes `path` and everything under it; a link in it is removed, never followed.
    pub(crate) fn remove_tree(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = match open_parent(self, path, false) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        remove_tree_at(&dir.fd, &name).map_err(|e| at(&path.display().to_string(), e))?;
        Ok(rustix::fs::fsync(&dir.fd)?)
    }
}

fn remove_tree_at(parent: &OwnedFd, name: &OsStr) -> Result<(), Errno> {
    match open_dir_at(parent, name) {
        Ok(fd) => {
            for entry in entries(&fd)? {
                remove_tree_at(&fd, &entry)?;
            }
            rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)
        }
        Err(Errno::LOOP | Errno::NOTDIR) => rustix::fs::unlinkat(parent, name, AtFlags::empty()),
        Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e),
    }
}

impl Root {
    /// Removes every file under the directory `path` that is not in `keep`, and the subdirectories
    /// left empty; a link is a file here, removed and never followed.
    pub(crate) fn prune(&self, path: &Path, keep: &BTreeSet<PathBuf>) -> io::Result<()> {
        let dir = open_dir(self, path, false)?;
        prune_at(&dir.fd, path, keep, true, &mut Vec::new())
            .map_err(|e| at(&path.display().to_string(), e))
    }

    /// The files under the directory `path` that are not in `keep`: what [`prune`] would remove.
    /// A directory that is not there holds none.
    pub(crate) fn strays(&self, path: &Path, keep: &BTreeSet<PathBuf>) -> io::Result<Vec<PathBuf>> {
        let dir = match open_dir(self, path, false) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut found = Vec::new();
        prune_at(&dir.fd, path, keep, false, &mut found)
            .map_err(|e| at(&path.display().to_string(), e))?;
        Ok(found)
    }
}

fn prune_at(
    fd: &OwnedFd,
    path: &Path,
    keep: &BTreeSet<PathBuf>,
    remove: bool,
    found: &mut Vec<PathBuf>,
) -> Result<(), Errno> {
    for name in entries(fd)? {
        let here = path.join(&name);
        match open_dir_at(fd, &name) {
            Ok(sub) => {
                prune_at(&sub, &here, keep, remove, found)?;
                if remove && entries(&sub)?.is_empty() {
                    rustix::fs::unlinkat(fd, &name, AtFlags::REMOVEDIR)?;
                }
            }
            Err(Errno::LOOP | Errno::NOTDIR) if !keep.contains(&here) => {
                if remove {
                    rustix::fs::unlinkat(fd, &name, AtFlags::empty())?;
                }
                found.push(here);
            }
            Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The names in a directory, without `.` and `..`.
fn entries(fd: &OwnedFd) -> Result<Vec<OsString>, Errno> {
    let mut names = Vec::new();
    let mut dir = rustix::fs::Dir::read_from(fd)?;
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let name: &CStr = entry.file_name();
        let bytes = name.to_bytes();
        if bytes != b"." && bytes != b".." {
            names.push(OsStr::from_bytes(bytes).to_os_string());
        }
    }
    Ok(names)
}

/// Why a directory could not be opened: a link there is named as one.
fn refuse_link(parent: &Dir, name: &OsStr, e: Errno) -> io::Error {
    match e {
        Errno::LOOP | Errno::NOTDIR => io::Error::other(format!(
            "{} is not a directory (a link is never followed to set an owner or mode)",
            parent.show(name)
        )),
        e => at(&parent.show(name), e),
    }
}

impl Root {
    /// Makes the directory `path` (its parent must be there) and hands it to `uid`:`gid` with
    /// `mode`, on its handle: a user's own `~/.ssh`. Only a directory made here, still root's when
    /// opened, is handed over; one found there is left as it is (`Ok(false)`).
    pub(crate) fn make_dir_for(
        &self,
        path: &Path,
        uid: u32,
        gid: u32,
        mode: u32,
    ) -> io::Result<bool> {
        let (parent, name) = open_parent(self, path, false)?;
        match rustix::fs::mkdirat(&parent.fd, &name, Mode::from_raw_mode(0o700)) {
            Ok(()) => {}
            Err(Errno::EXIST) => return Ok(false),
            Err(e) => return Err(at(&parent.show(&name), e)),
        }
        let fd = open_dir_at(&parent.fd, &name).map_err(|e| at(&parent.show(&name), e))?;
        if rustix::fs::fstat(&fd)?.st_uid != 0 {
            return Err(io::Error::other(format!(
                "{} was replaced while it was made: left as it is",
                parent.show(&name)
            )));
        }
        set_on_handle(&fd, uid, gid, mode)?;
        rustix::fs::fsync(&parent.fd)?;
        Ok(true)
    }
}
