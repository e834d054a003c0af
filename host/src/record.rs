//! The helper's record on each machine: what it made, what it replaced (with the kept original),
//! and what it owes units. The record is what lets an undeclare give the machine back.
//!
//! It is written atomically (temp file, fsync, rename, fsync of the directory) *before* the
//! machine is changed, so a helper killed at any point leaves a record from which the next run
//! converges, and no kept original is ever lost.

mod files;
mod kinds;
mod units;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use mesh_wire::{Cost, RecordRefusal, STATE_DIR};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) use files::{
    DirectoryEntry, FileEntry, KeysEntry, MadeFrom, Original, OwnedKey, Readers, Written,
};
pub(crate) use kinds::{
    AptRepositoryEntry, FoundAtLink, GroupEntry, SymlinkEntry, SysctlEntry, TimerEntry, UserEntry,
    UserKeys,
};
pub(crate) use units::{ContainerEntry, PackageEntry, ProcessEntry, ProcessMade, ServiceEntry};

/// Where the record and the kept originals live, and the machine they are the record of.
pub(crate) struct Paths {
    /// The helper's state directory, as this host names it.
    pub(crate) root: PathBuf,
    /// What stands for the machine's `/`: where every declared path is read and written.
    pub(crate) machine: crate::files::Root,
    /// What the helper asks of the machine beyond its files.
    pub(crate) system: Box<dyn crate::system::System>,
}

impl Default for Paths {
    fn default() -> Self {
        // A test helper (feature `test-switches`) can be pointed elsewhere; a release helper
        // keeps its state in the fixed place whatever its environment says, or whoever set it
        // could hand it a record of their own making.
        #[cfg(feature = "test-switches")]
        if let Some(root) = std::env::var_os("MESH_HOST_STATE") {
            return Paths {
                root: root.into(),
                machine: crate::files::HOST,
                system: Box::new(crate::system::Real),
            };
        }
        Paths {
            root: PathBuf::from(STATE_DIR),
            machine: crate::files::HOST,
            system: Box::new(crate::system::Real),
        }
    }
}

impl Paths {
    /// A machine whose `/` is `dir` (`mesh-host --root DIR`): its declared paths are under `dir`
    /// and so is the helper's state, in `dir/var/lib/mesh`; its units, packages and accounts are
    /// the recording machine's, kept in that state's `system/`.
    pub(crate) fn under(dir: &std::path::Path) -> Paths {
        let machine = crate::files::Root::under(dir.to_path_buf());
        let root = machine.real(std::path::Path::new(STATE_DIR));
        Paths {
            system: Box::new(crate::system::Recording::at(
                root.join(Self::SYSTEM),
                machine.clone(),
            )),
            root,
            machine,
        }
    }

    /// Where, in the state directory, a recording machine keeps its model and calls.
    pub(crate) const SYSTEM: &'static str = "system";

    pub(crate) fn record(&self) -> PathBuf {
        self.root.join("record.json")
    }
    pub(crate) fn lock(&self) -> PathBuf {
        self.root.join("lock")
    }
    pub(crate) fn originals(&self) -> PathBuf {
        self.root.join("originals")
    }
    pub(crate) fn original(&self, blob: &str) -> PathBuf {
        self.originals().join(blob)
    }
}

/// The helper's whole account of one machine.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) version: u32,
    /// Every resource the mesh has applied here and not yet undone, by id.
    pub(crate) resources: BTreeMap<String, Entry>,
    /// What the mesh owes units (a restart that failed is still owed).
    #[serde(default)]
    pub(crate) units: BTreeMap<String, UnitEntry>,
    /// The node's generation: the last push applied here, its number, time and inventory.
    /// `None`: a record from before generations (generation 0), or one no push applied yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) generation: Option<mesh_wire::Generation>,
}

/// Makes [`Entry`] from the list of kinds, `each_entry!` over it and each entry's `From`; `$d`
/// is a `$`, for the dispatch macro's own variables.
macro_rules! entries {
    ($d:tt $($(#[$attr:meta])* $variant:ident($entry:ident),)*) => {
        /// One applied resource.
        #[derive(Debug, Clone, Serialize, Deserialize)]
        #[serde(tag = "kind", rename_all = "lowercase")]
        pub(crate) enum Entry {
            $($(#[$attr])* $variant($entry),)*
        }

        /// `$body` with `$e` bound to the entry inside `$entry`, whatever its kind: with the
        /// wire's `each_spec`, the only place the helper names every kind.
        macro_rules! each_entry {
            ($d entry:expr, $d e:ident => $d body:expr) => {
                match $d entry {
                    $($crate::record::Entry::$variant($d e) => $d body,)*
                }
            };
        }
        pub(crate) use each_entry;

        $(
            impl From<$entry> for Entry {
                fn from(e: $entry) -> Entry {
                    Entry::$variant(e)
                }
            }
        )*
    };
}

entries! { $
    File(FileEntry),
    Keys(KeysEntry),
    Service(ServiceEntry),
    Directory(DirectoryEntry),
    Package(PackageEntry),
    Process(ProcessEntry),
    Container(ContainerEntry),
    Symlink(SymlinkEntry),
    Sysctl(SysctlEntry),
    Timer(TimerEntry),
    Group(GroupEntry),
    User(UserEntry),
    #[serde(rename = "apt-repository")]
    AptRepository(AptRepositoryEntry),
}

impl Entry {
    /// What undeclaring this would do, for the plan.
    pub(crate) fn undo(&self) -> mesh_wire::Undo {
        let mut undo = mesh_wire::Undo::default();
        each_entry!(self, e => e.undo_into(&mut undo));
        undo
    }
}

/// What the mesh knows about a unit.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct UnitEntry {
    /// A reload or restart a change called for and that has not succeeded yet.
    #[serde(default)]
    pub(crate) owed: Cost,
}

/// The version of the record this helper writes, and the only one it reads.
pub(crate) const VERSION: u32 = 1;

/// Why the record could not be loaded.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// Reading it failed.
    Io(io::Error),
    /// It is there but cannot be trusted: the machine is refused until the operator acts.
    Refused(RecordRefusal),
}

impl Record {
    /// An empty record of the current version.
    pub(crate) fn new() -> Record {
        Record {
            version: VERSION,
            ..Record::default()
        }
    }

    /// Reads the record; `None` when there is none (a new machine, or one whose record was lost:
    /// the caller tells them apart, see `signs`). A record that does not parse or whose version
    /// this helper does not know is refused, never taken for an empty one.
    pub(crate) fn load(paths: &Paths) -> Result<Option<Record>, LoadError> {
        match crate::files::HOST.read(&paths.record()) {
            Ok(Some(found)) => {
                Record::parse(&found.bytes, &paths.record().display().to_string()).map(Some)
            }
            Ok(None) => Ok(None),
            Err(e) => Err(LoadError::Io(e)),
        }
    }

    /// The record in `bytes`, read from `place`: its version first, so a newer record is named
    /// for what it is rather than for a field this helper does not know.
    pub(crate) fn parse(bytes: &[u8], place: &str) -> Result<Record, LoadError> {
        let unreadable = |reason: String| {
            LoadError::Refused(RecordRefusal::Unreadable {
                record: place.to_string(),
                reason,
            })
        };
        let value: Value = serde_json::from_slice(bytes).map_err(|e| unreadable(e.to_string()))?;
        let version = value
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| unreadable("it has no version".into()))?;
        if version != u64::from(VERSION) {
            return Err(LoadError::Refused(RecordRefusal::UnknownVersion {
                record: place.to_string(),
                version,
                known: VERSION,
            }));
        }
        serde_json::from_value(value).map_err(|e| unreadable(e.to_string()))
    }

    /// Writes the record atomically. A record the machine holds already, byte for byte, root's
    /// and 0600 (a run that changed nothing), is not written again: it is as durable as it was.
    pub(crate) fn save(&self, paths: &Paths) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        let euid = rustix::process::geteuid().as_raw();
        if let Ok(Some(found)) = crate::files::HOST.read(&paths.record())
            && found.bytes == bytes
            && (found.uid, found.mode) == (euid, 0o600)
        {
            return Ok(());
        }
        crate::files::HOST.write_atomically(&paths.record(), &bytes, None, 0o600)
    }
}

/// `root:root 0755`, by the machine's names where it has them.
pub(crate) fn owner_mode((uid, gid, mode): (u32, u32, u32)) -> String {
    format!(
        "{}:{} {mode:04o}",
        crate::owners::name_of("passwd", uid),
        crate::owners::name_of("group", gid)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test runs itself again in a process of its own with MESH_HOST_STATE set (setting it
    /// in this one would need `unsafe`).
    #[test]
    #[cfg(not(feature = "test-switches"))]
    fn a_helper_built_without_test_switches_keeps_its_state_whatever_the_environment() {
        const CHILD: &str = "record::tests::a_helper_built_without_test_switches_keeps_its_state_whatever_the_environment";
        if std::env::var_os("MESH_HOST_STATE").is_some() {
            assert_eq!(Paths::default().root, PathBuf::from(STATE_DIR));
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", CHILD, "--test-threads=1"])
            .env("MESH_HOST_STATE", "/tmp/a-record-of-someone-elses-making")
            .output()
            .unwrap();
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
            "with MESH_HOST_STATE set: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn undoing_a_made_directory_is_promised_only_if_empty() {
        let entry = Entry::Directory(DirectoryEntry {
            path: "/srv/mesh/kv/data".into(),
            created: true,
            original: None,
            parents_made: vec![],
        });
        let undo = entry.undo();
        assert!(undo.deletes.is_empty(), "{undo:?}");
        assert_eq!(undo.deletes_if_empty, vec!["/srv/mesh/kv/data"]);
    }

    #[test]
    fn giving_a_file_back_names_what_its_readers_pay() {
        let file = |cost| {
            Entry::File(FileEntry {
                path: "/etc/x.conf".into(),
                created: true,
                original: None,
                original_lost: false,
                written: None,
                readers: Readers {
                    units: vec!["x.service".into()],
                    cost,
                },
                parents_made: vec!["/etc/x".into()],
            })
        };
        let reload = file(Cost::Reload).undo();
        assert_eq!(reload.deletes, vec!["/etc/x.conf"]);
        assert_eq!(reload.deletes_if_empty, vec!["/etc/x"]);
        assert_eq!(reload.reloads, vec!["x.service"]);
        assert_eq!(file(Cost::Restart).undo().restarts, vec!["x.service"]);
        let free = file(Cost::None).undo();
        assert!(free.reloads.is_empty() && free.restarts.is_empty());
    }

    #[test]
    fn settling_a_condition_says_deleted_kept_or_nothing() {
        let mut undo = mesh_wire::Undo {
            deletes_if_empty: vec!["/a".into(), "/b".into(), "/c".into()],
            ..Default::default()
        };
        undo.settle(|p| p == "/a", |p| p == "/b");
        assert_eq!(undo.deletes, vec!["/a"]);
        assert_eq!(undo.keeps, vec!["/b"]);
        assert!(undo.deletes_if_empty.is_empty());
    }
}
