//! Finding a directory without following anyone's links.
//!
//! A path is walked from `/` one component at a time, each directory opened relative to the one
//! before with `O_DIRECTORY | O_NOFOLLOW`, so the handle at the end is the directory that was
//! checked, whatever a local user renames meanwhile. A symbolic link on the way is followed only
//! when root made it in a directory only root can write (`/var/run -> /run`); any other link is
//! refused, naming who could have planted it.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// How many links one walk follows before it gives up (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// Who besides root can add, rename or remove entries in a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writers {
    Root,
    User(u32),
    Group(u32),
    Anyone,
}

impl Writers {
    pub(crate) fn of(st: &Stat) -> Writers {
        if st.st_mode & 0o002 != 0 {
            Writers::Anyone
        } else if st.st_uid != 0 {
            // its owner can always chmod it open
            Writers::User(st.st_uid)
        } else if st.st_mode & 0o020 != 0 && st.st_gid != 0 {
            Writers::Group(st.st_gid)
        } else {
            Writers::Root
        }
    }
}

impl fmt::Display for Writers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Writers::Root => write!(f, "only root"),
            Writers::User(uid) => write!(f, "user {}", crate::owners::name_of("passwd", *uid)),
            Writers::Group(gid) => write!(f, "group {}", crate::owners::name_of("group", *gid)),
            Writers::Anyone => write!(f, "every user"),
        }
    }
}

/// An open directory, the path it was reached by, and who can write in it.
#[derive(Debug)]
pub(crate) struct Dir {
    pub(crate) fd: OwnedFd,
    pub(crate) path: PathBuf,
    pub(crate) writers: Writers,
}

impl Dir {
    /// `name` in this directory, for messages.
    pub(crate) fn show(&self, name: &OsStr) -> String {
        self.path.join(name).display().to_string()
    }

    /// Opens the subdirectory `name`, never through a link.
    pub(crate) fn child(&self, name: &OsStr) -> Result<Dir, Errno> {
        let fd = open_dir_at(&self.fd, name)?;
        let st = rustix::fs::fstat(&fd)?;
        Ok(Dir {
            fd,
            path: self.path.join(name),
            writers: Writers::of(&st),
        })
    }
}

/// `openat(dir, name, O_DIRECTORY | O_NOFOLLOW)`.
pub(crate) fn open_dir_at(dir: &OwnedFd, name: &OsStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Opens the directory at `path`; with `make`, the directories missing on the way are made
/// (mode 0755, root's) with `mkdirat` on their parent's handle.
pub(crate) fn open_dir(path: &Path, make: bool) -> io::Result<Dir> {
    if !path.is_absolute() {
        return Err(io::Error::other(format!(
            "{} is not an absolute path",
            path.display()
        )));
    }
    let root_fd = rustix::fs::openat(
        CWD,
        "/",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let root = Dir {
        writers: Writers::of(&rustix::fs::fstat(&root_fd)?),
        fd: root_fd,
        path: PathBuf::from("/"),
    };
    let mut stack = vec![root];
    let mut todo: VecDeque<OsString> = components(path).into();
    let mut steps = 0;
    while let Some(name) = todo.pop_front() {
        if name == ".." {
            if stack.len() > 1 {
                stack.pop();
            }
            continue;
        }
        let Some(here) = stack.last() else { break };
        match here.child(&name) {
            Ok(dir) => {
                stack.push(dir);
                continue;
            }
            Err(Errno::NOENT) if make => {
                match rustix::fs::mkdirat(&here.fd, &name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(at(&here.show(&name), e)),
                }
                todo.push_front(name);
            }
            Err(Errno::LOOP | Errno::NOTDIR) => {
                let target = followable(here, &name)?;
                if target.is_absolute() {
                    stack.truncate(1);
                }
                for c in components(&target).into_iter().rev() {
                    todo.push_front(c);
                }
            }
            Err(e) => return Err(at(&here.show(&name), e)),
        }
        steps += 1;
        if steps > MAX_LINKS {
            return Err(io::Error::other(format!(
                "{}: too many links (or a directory that keeps disappearing) on the way",
                path.display()
            )));
        }
    }
    stack
        .pop()
        .ok_or_else(|| io::Error::other(format!("{}: no directory", path.display())))
}

/// The directory holding `path`, and its last component. With `make`, missing directories on the
/// way are made.
pub(crate) fn open_parent(path: &Path, make: bool) -> io::Result<(Dir, OsString)> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other(format!(
            "{} names no file in a directory",
            path.display()
        )));
    };
    Ok((open_dir(parent, make)?, name.to_os_string()))
}

/// Where the link `name` in `here` points, if the walk may follow it: root made it, in a
/// directory only root can write. Anything that is not a link is not a directory.
fn followable(here: &Dir, name: &OsStr) -> io::Result<PathBuf> {
    let shown = here.show(name);
    let st =
        rustix::fs::statat(&here.fd, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| at(&shown, e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Symlink {
        return Err(io::Error::other(format!("{shown} is not a directory")));
    }
    if here.writers != Writers::Root || st.st_uid != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{shown} is a symbolic link (owned by {}) in {}, which {} can write: the mesh \
                 does not follow a link someone else could have planted; make {shown} a real \
                 directory or declare the path it points to",
                crate::owners::name_of("passwd", st.st_uid),
                here.path.display(),
                here.writers
            ),
        ));
    }
    let target = rustix::fs::readlinkat(&here.fd, name, Vec::new()).map_err(|e| at(&shown, e))?;
    Ok(PathBuf::from(OsStr::from_bytes(target.as_bytes())))
}

fn components(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// A system error about `what`, keeping its kind (a missing file stays `NotFound`).
pub(crate) fn at(what: &str, e: Errno) -> io::Error {
    let e = io::Error::from(e);
    io::Error::new(e.kind(), format!("{what}: {e}"))
}
