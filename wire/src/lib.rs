//! The wire format between `mesh` (the operator) and `mesh-host` (the helper on each machine).
//!
//! The operator sends one [`Declaration`] as JSON on the helper's stdin: everything the machine
//! should be, composed afresh at every push. The helper answers with one [`Report`] on stdout.
//! Both binaries use these types and nothing else to talk, so a field added here is added for
//! both. The helper refuses a declaration whose [`Declaration::version`] it does not know.
//!
//! The helper receives data, never shell: paths, owners and contents are fields, not commands.

mod account;
mod apt_repository;
mod container;
mod cost;
mod declaration;
mod directory;
mod exit;
mod facts;
mod file;
mod generation;
mod keys;
mod kind;
mod names;
mod package;
pub mod path;
mod process;
pub mod read;
mod ready;
mod refusal;
mod report;
mod service;
mod symlink;
mod sysctl;
#[cfg(test)]
mod tests;
mod timer;

pub use account::*;
pub use apt_repository::*;
pub use container::*;
pub use cost::*;
pub use declaration::*;
pub use directory::*;
pub use exit::*;
pub use facts::*;
pub use file::*;
pub use generation::*;
pub use keys::*;
pub use kind::*;
pub use names::*;
pub use package::*;
pub use process::*;
pub use ready::*;
pub use refusal::*;
pub use report::*;
pub use service::*;
pub use symlink::*;
pub use sysctl::*;
pub use timer::*;

/// The version of this format. Bump it when a change would be misread by an older helper.
pub const VERSION: u32 = 1;

/// Where the helper keeps itself and its record on every machine.
pub const STATE_DIR: &str = "/var/lib/mesh";

/// Exit status of the remote launcher when the helper for this content hash is not on the machine
/// yet: the operator uploads it and runs it again.
pub const EXIT_HELPER_MISSING: u32 = HelperExit::HelperMissing.status() as u32;

/// Exit status of the remote launcher when the machine is not a platform mesh has a helper for.
pub const EXIT_WRONG_PLATFORM: u32 = HelperExit::WrongPlatform.status() as u32;

/// Exit status of the remote launcher when the helper it was sent did not arrive whole, or could
/// not be written: nothing was stored, and nothing ran.
pub const EXIT_NOT_STORED: u32 = HelperExit::NotStored.status() as u32;

/// Exit status of the helper when the machine has no readable record but shows signs that the mesh
/// has been there: it refuses to touch it (a dry run too) and prints a [`RecordRefusal`] on stdout.
/// The recovery is `mesh node adopt NODE`.
pub const EXIT_RECORD_LOST: u32 = HelperExit::RecordLost.status() as u32;

/// Exit status of the helper when its record is there but cannot be trusted: it does not parse, or
/// its version is one this helper does not know. It prints a [`RecordRefusal`] on stdout.
pub const EXIT_RECORD_UNREADABLE: u32 = HelperExit::RecordUnreadable.status() as u32;

/// Seconds a helper waits for a confirmation when the declaration does not say.
pub const CONFIRM_WITHIN: u64 = 30;

/// Exit status of the helper's `confirm ID` when the change was already reverted (the deadline
/// passed): the operator reports the revert.
pub const EXIT_ALREADY_REVERTED: u32 = HelperExit::AlreadyReverted.status() as u32;

/// Exit status of the helper's `confirm ID` when the machine knows nothing of change `ID`: not
/// pending, and no note says it was confirmed or reverted (the helper keeps the last
/// [`CHANGES_NOTED`] changes' fates). Whether it stayed cannot be said.
pub const EXIT_UNKNOWN_CHANGE: u32 = HelperExit::UnknownChange.status() as u32;

/// Exit status of the helper when a change on the machine awaits its confirmation: it applies
/// nothing else, and prints the change's id on stdout. The operator keeps the node pending
/// confirmation until the machine says it was confirmed or reverted.
pub const EXIT_AWAITING: u32 = HelperExit::Awaiting.status() as u32;

/// How many changes' fates (confirmed, reverted) the helper keeps notes of, so that asking
/// again about one answers what became of it: `confirm ID` is idempotent for as long.
pub const CHANGES_NOTED: usize = 64;

/// Lower-case hex of `bytes`: how every digest reads, on both sides of the wire. A digest is
/// made for every setting a resource reads, so this writes straight into one string.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Whether `name` is a Debian package name (checked when a module is loaded, and again by the
/// helper before it is given to apt-get).
pub fn valid_package(name: &str) -> bool {
    name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
}

/// Whether `version` is a Debian version (`[epoch:]upstream[-revision]`: letters, digits and
/// `.+-~:`, starting with a digit), so that `name=version` is one argument apt-get reads as such.
pub fn valid_package_version(version: &str) -> bool {
    !version.is_empty()
        && version.len() <= 100
        && version.starts_with(|c: char| c.is_ascii_digit())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".+-~:".contains(c))
}

pub mod unit;

#[cfg(test)]
mod fixtures;
