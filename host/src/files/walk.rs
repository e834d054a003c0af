//! Finding a directory without following anyone's links.
//!
//! A path is walked from `/` one component at a time, each directory opened relative to the one
//! before with `O_DIRECTORY | O_NOFOLLOW`, so the handle at the end is the directory that was
//! checked, whatever a local user renames meanwhile. A symbolic link on the way is never followed,
//! whoever made it: a link can lead two declared paths to one file (`/lib` and `/usr/lib`, so one
//! resource would keep the other's content as its "original"), or out of every rule about where a
//! path may go (`/proc/self/root/var/lib/mesh` is the helper's own state). A managed path is named
//! as it is, without links; the refusal says where the link points.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// Who besides root, and the helper itself, can add, rename or remove entries in a directory.
/// The helper runs as root on a machine; its own uid counts as root's so that its tests can run
/// as an ordinary user in a directory of their own (someone else's directory stays someone else's).
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
        } else if st.st_uid != 0 && st.st_uid != rustix::process::geteuid().as_raw() {
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

/// What stands for the machine's `/`: `/` itself, or a directory of a test's (`mesh-host --root
/// DIR`). A path is always the machine's path (`/etc/x`), checked and shown as it is; only the
/// walk begins at the root's handle, so no link under DIR leads out of it any more than a link
/// leads anywhere on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Root(Option<PathBuf>);

/// The machine's own `/`: where the helper's own state is, whatever the root of what it applies.
pub(crate) const HOST: Root = Root(None);

impl Root {
    /// `dir` stands for `/`.
    pub(crate) fn under(dir: PathBuf) -> Root {
        Root(Some(dir))
    }

    /// The directory standing for `/`, when it is not `/` itself.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.0.as_deref()
    }

    /// Where the machine's `path` is on this host: `path` itself, or `path` under the root's
    /// directory. For what cannot be reached through a walk (a process reading a file by name).
    pub(crate) fn real(&self, path: &Path) -> PathBuf {
        match &self.0 {
            None => path.to_path_buf(),
            Some(dir) => dir.join(path.strip_prefix("/").unwrap_or(path)),
        }
    }
}

/// Opens the directory at `path` under `root`; with `make`, the directories missing on the way
/// are made (mode 0755, root's) with `mkdirat` on their parent's handle.
pub(crate) fn open_dir(root: &Root, path: &Path, make: bool) -> io::Result<Dir> {
    if !path.is_absolute() {
        return Err(io::Error::other(format!(
            "{} is not an absolute path",
            path.display()
        )));
    }
    let root_fd = rustix::fs::openat(
        CWD,
        root.dir().unwrap_or(Path::new("/")),
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut here = Dir {
        writers: Writers::of(&rustix::fs::fstat(&root_fd)?),
        fd: root_fd,
        path: PathBuf::from("/"),
    };
    for c in path.components() {
        let name = match c {
            Component::Normal(n) => n,
            Component::RootDir | Component::CurDir => continue,
            Component::ParentDir | Component::Prefix(_) => {
                return Err(io::Error::other(format!(
                    "{} is not a normal path (it has `..`)",
                    path.display()
                )));
            }
        };
        here = match here.child(name) {
            Ok(dir) => dir,
            Err(Errno::NOENT) if make => {
                match rustix::fs::mkdirat(&here.fd, name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(at(&here.show(name), e)),
                }
                here.child(name).map_err(|e| refused(&here, name, e))?
            }
            Err(e) => return Err(refused(&here, name, e)),
        };
    }
    Ok(here)
}

/// The directory holding `path`, and its last component. With `make`, missing directories on the
/// way are made.
pub(crate) fn open_parent(root: &Root, path: &Path, make: bool) -> io::Result<(Dir, OsString)> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other(format!(
            "{} names no file in a directory",
            path.display()
        )));
    };
    Ok((open_dir(root, parent, make)?, name.to_os_string()))
}

/// Why `name` in `here` cannot be walked through: a link (named with where it points and who
/// could have planted it), something that is not a directory, or the system's own error.
fn refused(here: &Dir, name: &OsStr, e: Errno) -> io::Error {
    let shown = here.show(name);
    if !matches!(e, Errno::LOOP | Errno::NOTDIR) {
        return at(&shown, e);
    }
    let Ok(st) = rustix::fs::statat(&here.fd, name, AtFlags::SYMLINK_NOFOLLOW) else {
        return at(&shown, e);
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::Symlink {
        return io::Error::other(format!("{shown} is not a directory"));
    }
    let target = rustix::fs::readlinkat(&here.fd, name, Vec::new())
        .map(|t| {
            OsStr::from_bytes(t.as_bytes())
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_else(|_| "?".into());
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{shown} is a symbolic link to {target} (owned by {}, in {} which {} can write): the \
             mesh never walks through a link; name the path as it is, without links",
            crate::owners::name_of("passwd", st.st_uid),
            here.path.display(),
            here.writers
        ),
    )
}

/// A system error about `what`, keeping its kind (a missing file stays `NotFound`).
pub(crate) fn at(what: &str, e: Errno) -> io::Error {
    let e = io::Error::from(e);
    io::Error::new(e.kind(), format!("{what}: {e}"))
}
