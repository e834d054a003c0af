//! What a path and a mode the mesh sends to a machine may be: one rule, checked in three places.
//!
//! The operator's parser checks what a module writes literally, its resolver checks every path
//! once settings and requirements are filled in, and the helper checks every path it receives
//! before it touches anything, because it runs as root and trusts no sender blindly. All three
//! call [`check`], [`check_mode`] and [`Spec::check`] here, so they cannot disagree.

use std::fmt;

use crate::{STATE_DIR, Spec};

/// Where a path is meant to be, which decides what it may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// On the machine, anywhere but the helper's own state ([`STATE_DIR`]): a file, a keys file,
    /// a directory, a mount's source, a working directory, a node's root, a placement.
    Machine,
    /// A process's bundle: exactly one directory of `STATE_DIR/bundles`, the one area of the
    /// helper's state a declaration may name.
    Bundle,
    /// Inside a container (a mount's target): the machine's rules about its own state do not
    /// apply there.
    Container,
    /// A file of a bundle, relative to the bundle's directory.
    InBundle,
}

/// Which rule a path breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// Empty.
    Empty,
    /// Not starting with `/` where an absolute path is wanted.
    NotAbsolute,
    /// Starting with `/` where a relative path is wanted.
    NotRelative,
    /// `/` itself.
    Root,
    /// A `.` or `..` component.
    Dots(&'static str),
    /// Two slashes in a row: an empty component.
    DoubleSlash,
    /// Ending in `/`.
    TrailingSlash,
    /// A NUL or another control character.
    Control(char),
    /// Under the helper's own state directory.
    HelperState,
    /// Under a kernel's file system (`/proc`, `/sys`, `/dev`): interfaces, not files, and a way
    /// around every other rule (`/proc/self/root/…` is `/`).
    Kernel(&'static str),
    /// A bundle that is not one directory of the helper's bundle area.
    NotABundle,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Empty => write!(f, "it is empty"),
            PathError::NotAbsolute => write!(f, "it is not absolute (start it with /)"),
            PathError::NotRelative => {
                write!(f, "it must be relative to the bundle's directory")
            }
            PathError::Root => write!(f, "it is / itself"),
            PathError::Dots(d) => write!(
                f,
                "it has a `{d}` component; write the path without `.` and `..`"
            ),
            PathError::DoubleSlash => write!(f, "it has an empty component (`//`)"),
            PathError::TrailingSlash => write!(f, "it ends in /"),
            PathError::Control(c) => {
                write!(f, "it holds the control character {}", c.escape_unicode())
            }
            PathError::HelperState => write!(
                f,
                "it is under {STATE_DIR}, the helper's own state (its lock, record and kept \
                 originals), which no module may name"
            ),
            PathError::Kernel(top) => write!(
                f,
                "it is under {top}, the kernel's interfaces, not files the mesh may manage"
            ),
            PathError::NotABundle => write!(
                f,
                "a bundle is one directory of {STATE_DIR}/bundles, named after its unit"
            ),
        }
    }
}

impl std::error::Error for PathError {}

/// The kernel's file systems: nothing there is a file the mesh may manage.
const KERNEL: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Checks `path` for `place`: absolute (relative for [`Place::InBundle`]), normal (no `.` or
/// `..`, no `//`, no trailing `/`), no control character, not `/`, and on the machine not under
/// [`STATE_DIR`] unless it is a process's own bundle directory.
pub fn check(path: &str, place: Place) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if let Some(c) = path.chars().find(|c| c.is_control()) {
        return Err(PathError::Control(c));
    }
    let rest = match (place, path.strip_prefix('/')) {
        (Place::InBundle, Some(_)) => return Err(PathError::NotRelative),
        (Place::InBundle, None) => path,
        (_, None) => return Err(PathError::NotAbsolute),
        (_, Some("")) => return Err(PathError::Root),
        (_, Some(rest)) => rest,
    };
    if rest.ends_with('/') {
        return Err(PathError::TrailingSlash);
    }
    for component in rest.split('/') {
        match component {
            "" => return Err(PathError::DoubleSlash),
            "." => return Err(PathError::Dots(".")),
            ".." => return Err(PathError::Dots("..")),
            _ => {}
        }
    }
    let in_state = path == STATE_DIR
        || path
            .strip_prefix(STATE_DIR)
            .is_some_and(|p| p.starts_with('/'));
    let kernel = KERNEL
        .into_iter()
        .find(|top| path == *top || path.strip_prefix(top).is_some_and(|p| p.starts_with('/')));
    match place {
        Place::Machine if in_state => Err(PathError::HelperState),
        Place::Machine | Place::Bundle if kernel.is_some() => {
            Err(PathError::Kernel(kernel.unwrap_or_default()))
        }
        Place::Bundle => {
            let bundles = format!("{STATE_DIR}/bundles/");
            match path.strip_prefix(&bundles) {
                Some(unit) if !unit.contains('/') => Ok(()),
                _ => Err(PathError::NotABundle),
            }
        }
        _ => Ok(()),
    }
}

/// What a mode is for: a file (or keys file, or bundle file) or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeOf {
    File,
    Directory,
}

/// Which rule a mode breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeError {
    /// More than the permission bits (above 0o7777).
    NotAMode(u32),
    /// The setuid bit: whoever runs the file runs it as its owner.
    Setuid(u32),
    /// The setgid bit: whoever runs the file (or makes a file in the directory) gets its group.
    Setgid(u32),
    /// The sticky bit on a file, which means nothing there.
    StickyFile(u32),
    /// Writable by every user of the machine.
    WorldWritable(u32),
}

impl fmt::Display for ModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModeError::NotAMode(m) => write!(f, "{m:o} is not a mode (at most 7777)"),
            ModeError::Setuid(m) => write!(
                f,
                "{m:04o} sets setuid (4000): anyone who runs it would run it as its owner; drop it"
            ),
            ModeError::Setgid(m) => write!(
                f,
                "{m:04o} sets setgid (2000): it would hand out its group; drop it"
            ),
            ModeError::StickyFile(m) => write!(
                f,
                "{m:04o} sets the sticky bit (1000), which a file has no use for; drop it"
            ),
            ModeError::WorldWritable(m) => write!(
                f,
                "{m:04o} is writable by every user of the machine; drop the last digit's 2 \
                 (e.g. 0644 or 0755)"
            ),
        }
    }
}

impl std::error::Error for ModeError {}

/// Refuses a mode the mesh will not set: setuid, setgid, sticky on a file, world-writable.
pub fn check_mode(mode: u32, of: ModeOf) -> Result<(), ModeError> {
    if mode > 0o7777 {
        Err(ModeError::NotAMode(mode))
    } else if mode & 0o4000 != 0 {
        Err(ModeError::Setuid(mode))
    } else if mode & 0o2000 != 0 {
        Err(ModeError::Setgid(mode))
    } else if mode & 0o1000 != 0 && of == ModeOf::File {
        Err(ModeError::StickyFile(mode))
    } else if mode & 0o002 != 0 {
        Err(ModeError::WorldWritable(mode))
    } else {
        Ok(())
    }
}

/// A path or mode of a resource that breaks the rule: the field (as module.json names it), what
/// it holds, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub field: String,
    /// The path, or the mode in octal.
    pub value: String,
    pub reason: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}: {}", self.field, self.value, self.reason)
    }
}

impl std::error::Error for Refusal {}

impl Spec {
    /// Every path and mode of the resource checked; the first that breaks the rule is refused.
    pub fn check(&self) -> Result<(), Refusal> {
        for (field, path, place) in self.paths() {
            check(path, place).map_err(|e| Refusal {
                field,
                value: path.to_string(),
                reason: e.to_string(),
            })?;
        }
        for (field, mode, of) in self.modes() {
            check_mode(mode, of).map_err(|e| Refusal {
                field,
                value: format!("{mode:04o}"),
                reason: e.to_string(),
            })?;
        }
        self.check_fields()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(path: &str, place: Place) -> PathError {
        match check(path, place) {
            Ok(()) => panic!("{path:?} accepted for {place:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_normal_absolute_path_is_accepted() {
        for p in [
            "/etc/motd",
            "/srv/mesh/kv/data",
            "/var/lib/meshy",
            "/var/lib",
        ] {
            assert_eq!(check(p, Place::Machine), Ok(()), "{p}");
        }
    }

    #[test]
    fn each_rule_is_named() {
        assert_eq!(refused("", Place::Machine), PathError::Empty);
        assert_eq!(refused("etc/motd", Place::Machine), PathError::NotAbsolute);
        assert_eq!(refused("/", Place::Machine), PathError::Root);
        assert_eq!(
            refused("/srv/kv/../../etc", Place::Machine),
            PathError::Dots("..")
        );
        assert_eq!(refused("/srv/./kv", Place::Machine), PathError::Dots("."));
        assert_eq!(refused("/srv//kv", Place::Machine), PathError::DoubleSlash);
        assert_eq!(
            refused("/srv/kv/", Place::Machine),
            PathError::TrailingSlash
        );
        assert_eq!(
            refused("/etc/mo\0td", Place::Machine),
            PathError::Control('\0')
        );
        assert_eq!(
            refused("/etc/\u{1b}[2J", Place::Machine),
            PathError::Control('\u{1b}')
        );
        assert_eq!(
            refused("/etc/a\nb", Place::Container),
            PathError::Control('\n')
        );
    }

    #[test]
    fn the_kernels_file_systems_are_refused_on_the_machine() {
        for (p, top) in [
            ("/proc/self/root/var/lib/mesh/lock", "/proc"),
            ("/proc", "/proc"),
            ("/sys/kernel/x", "/sys"),
            ("/dev/sda", "/dev"),
        ] {
            assert_eq!(refused(p, Place::Machine), PathError::Kernel(top), "{p}");
        }
        // only the top itself: /devices or /process are other names
        assert_eq!(check("/srv/proc/x", Place::Machine), Ok(()));
        assert_eq!(check("/devices/x", Place::Machine), Ok(()));
        // inside a container, /dev is the container's own
        assert_eq!(check("/dev/shm", Place::Container), Ok(()));
    }

    #[test]
    fn the_helpers_state_is_refused_on_the_machine() {
        for p in [
            "/var/lib/mesh",
            "/var/lib/mesh/lock",
            "/var/lib/mesh/record.json",
            "/var/lib/mesh/originals/x",
            "/var/lib/mesh/bundles/kv",
        ] {
            assert_eq!(refused(p, Place::Machine), PathError::HelperState, "{p}");
        }
        // inside a container it is the container's own
        assert_eq!(check("/var/lib/mesh", Place::Container), Ok(()));
    }

    #[test]
    fn a_bundle_is_one_directory_of_the_bundle_area() {
        assert_eq!(check("/var/lib/mesh/bundles/kv", Place::Bundle), Ok(()));
        for p in [
            "/var/lib/mesh/bundles",
            "/var/lib/mesh/bundles/kv/x",
            "/var/lib/mesh/lock",
            "/etc/kv",
        ] {
            assert_eq!(refused(p, Place::Bundle), PathError::NotABundle, "{p}");
        }
        assert_eq!(
            refused("/var/lib/mesh/bundles/../lock", Place::Bundle),
            PathError::Dots("..")
        );
    }

    #[test]
    fn a_bundle_file_is_relative_and_normal() {
        assert_eq!(check("bin/run.sh", Place::InBundle), Ok(()));
        assert_eq!(refused("/run.sh", Place::InBundle), PathError::NotRelative);
        assert_eq!(refused("../run.sh", Place::InBundle), PathError::Dots(".."));
        assert_eq!(refused("a//b", Place::InBundle), PathError::DoubleSlash);
        assert_eq!(refused("", Place::InBundle), PathError::Empty);
    }

    #[test]
    fn modes_that_hand_out_power_are_refused() {
        assert_eq!(check_mode(0o644, ModeOf::File), Ok(()));
        assert_eq!(check_mode(0o755, ModeOf::Directory), Ok(()));
        assert_eq!(check_mode(0o1750, ModeOf::Directory), Ok(()));
        for (mode, of, refused) in [
            (0o4777, ModeOf::File, ModeError::Setuid(0o4777)),
            (0o2755, ModeOf::Directory, ModeError::Setgid(0o2755)),
            (0o1644, ModeOf::File, ModeError::StickyFile(0o1644)),
            (0o666, ModeOf::File, ModeError::WorldWritable(0o666)),
            (0o1777, ModeOf::Directory, ModeError::WorldWritable(0o1777)),
            (0o10644, ModeOf::File, ModeError::NotAMode(0o10644)),
        ] {
            assert_eq!(check_mode(mode, of), Err(refused), "{mode:o}");
        }
    }

    #[test]
    fn a_spec_names_the_field_that_breaks_the_rule() {
        let spec = Spec::Container(crate::fixtures::container_mounting("/srv/c/data/../../etc"));
        let e = match spec.check() {
            Ok(()) => panic!("accepted"),
            Err(e) => e,
        };
        assert_eq!(e.field, "mounts[0].source");
        assert!(e.to_string().contains("`..`"), "{e}");
    }
}
