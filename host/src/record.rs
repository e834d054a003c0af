//! The helper's record on each machine: what it made, what it replaced (with the kept original),
//! and what it owes units. The record is what lets an undeclare give the machine back.
//!
//! It is written atomically (temp file, fsync, rename, fsync of the directory) *before* the
//! machine is changed, so a helper killed at any point leaves a record from which the next run
//! converges, and no kept original is ever lost.

mod kinds;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use mesh_wire::{Cost, RecordRefusal, STATE_DIR, SettingUse};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) use kinds::{
    AptRepositoryEntry, FoundAtLink, GroupEntry, SymlinkEntry, SysctlEntry, TimerEntry, UserEntry,
    UserKeys,
};

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

/// One applied resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum Entry {
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

/// A container the mesh runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ContainerEntry {
    pub(crate) name: String,
    /// The spec it runs, once it does (to name what changed, and the host directories kept).
    pub(crate) spec: Option<mesh_wire::ContainerSpec>,
}

/// A directory the mesh made, or whose owner and mode it set.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DirectoryEntry {
    pub(crate) path: String,
    /// The mesh made it: removed when undeclared, if empty.
    pub(crate) created: bool,
    /// Owner, group and mode it had before the mesh set them (a directory the mesh did not make).
    pub(crate) original: Option<(u32, u32, u32)>,
    /// Parents the mesh made for it, deepest first: removed after it when empty.
    #[serde(default)]
    pub(crate) parents_made: Vec<String>,
}

/// A package the mesh asked for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PackageEntry {
    pub(crate) name: String,
    /// The mesh installed it (it was not there before).
    pub(crate) installed: bool,
    /// The version installed when the mesh first saw it; `None`: it was not installed.
    #[serde(default)]
    pub(crate) found: Option<String>,
    /// The mesh removed it or moved its version: undeclaring it installs `found` again.
    #[serde(default)]
    pub(crate) changed: bool,
}

/// A unit the mesh created: its unit file and its bundle.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ProcessEntry {
    pub(crate) unit: String,
    pub(crate) unit_file: String,
    pub(crate) bundle_dir: String,
    /// Its environment file (root's only), when it has an environment; records written before
    /// environment files have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) env_file: Option<String>,
    /// sha256 of the unit file, environment and bundle last written: a change restarts the unit.
    pub(crate) digest: Option<String>,
    /// What it was last made from, for the cost of the next change; `None` (an older record, an
    /// adopted process): the next change restarts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) made_from: Option<ProcessMade>,
}

/// What a process was last made from: a change of its frame (unit file, environment, the
/// bundle's names and modes) restarts it; a bundle file that moved costs what moved in it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ProcessMade {
    /// sha256 of the unit file, the environment and the bundle's names and modes.
    pub(crate) frame: String,
    /// Each bundle file by its path in the bundle.
    pub(crate) bundle: BTreeMap<String, Written>,
}

impl Entry {
    /// What undeclaring this would do, for the plan.
    pub(crate) fn undo(&self) -> mesh_wire::Undo {
        let mut undo = mesh_wire::Undo::default();
        match self {
            Entry::File(f) => {
                if f.original_lost {
                    // left as it is: nothing to promise
                } else if f.original.is_some() {
                    undo.restores.push(f.path.clone());
                    f.readers.pay_into(&mut undo);
                } else if f.created {
                    undo.deletes.push(f.path.clone());
                    undo.deletes_if_empty.extend(f.parents_made.iter().cloned());
                    f.readers.pay_into(&mut undo);
                }
            }
            Entry::Keys(k) => {
                if k.originals_lost {
                    // left as they are: nothing to promise
                } else if k.created {
                    // the keys go back; the file goes only if nothing else was put in it
                    undo.deletes_if_empty.push(k.path.clone());
                    k.readers.pay_into(&mut undo);
                } else {
                    undo.restores.push(k.path.clone());
                    k.readers.pay_into(&mut undo);
                }
            }
            Entry::Service(s) => {
                if s.started && s.leave_running {
                    undo.leaves_running.push(s.unit.clone());
                } else if s.started {
                    undo.stops.push(s.unit.clone());
                    if !s.stop_runs.is_empty() {
                        undo.stop_runs.insert(s.unit.clone(), s.stop_runs.clone());
                    }
                }
            }
            Entry::Directory(d) => {
                if d.created {
                    // data outlives the module: only the helper, at that moment, can tell
                    undo.deletes_if_empty.push(d.path.clone());
                    undo.deletes_if_empty.extend(d.parents_made.iter().cloned());
                } else if let Some(found) = d.original {
                    undo.owners
                        .push(format!("{} ({})", d.path, owner_mode(found)));
                }
            }
            Entry::Package(p) => {
                if let (true, Some(found)) = (p.changed, &p.found) {
                    undo.restores.push(format!("package {}={found}", p.name));
                }
            }
            Entry::Timer(t) => t.undo_into(&mut undo),
            Entry::Group(g) => g.undo_into(&mut undo),
            Entry::User(u) => u.undo_into(&mut undo),
            Entry::Sysctl(s) => s.undo_into(&mut undo),
            Entry::AptRepository(a) => a.undo_into(&mut undo),
            Entry::Symlink(l) => l.undo_into(&mut undo),
            Entry::Container(c) => {
                undo.stops.push(format!("container {}", c.name));
            }
            Entry::Process(p) => {
                undo.stops.push(p.unit.clone());
                undo.deletes.push(p.unit_file.clone());
                undo.deletes.push(p.bundle_dir.clone());
                undo.deletes.extend(p.env_file.iter().cloned());
            }
        }
        undo
    }
}

/// A file the mesh wrote.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    pub(crate) path: String,
    /// The file did not exist before the mesh: undeclaring removes it.
    pub(crate) created: bool,
    /// The file that was there before, kept to be put back.
    pub(crate) original: Option<Original>,
    /// The file was there before the mesh, but what it was is lost (adopted after the record was
    /// lost): undeclaring leaves it as it is and says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) original_lost: bool,
    /// What the mesh last wrote, if it got that far.
    pub(crate) written: Option<Written>,
    /// The units that read it and what a change costs them: giving it back is a change too.
    #[serde(default)]
    pub(crate) readers: Readers,
    /// Directories the mesh made to hold it, deepest first: removed with it when empty.
    #[serde(default)]
    pub(crate) parents_made: Vec<String>,
}

/// The units that read a file and what a change to it costs them, as last declared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Readers {
    pub(crate) units: Vec<String>,
    pub(crate) cost: Cost,
}

impl Readers {
    /// What giving the file back costs its readers, named in `undo`.
    fn pay_into(&self, undo: &mut mesh_wire::Undo) {
        let list = match self.cost {
            Cost::None => return,
            Cost::Reload => &mut undo.reloads,
            Cost::Restart => &mut undo.restarts,
        };
        list.extend(self.units.iter().cloned());
    }
}

/// A kept original: its bytes are in `originals/<blob>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Original {
    pub(crate) blob: String,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) mode: u32,
}

/// What the mesh last wrote into a file, and from what.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Written {
    pub(crate) sha256: String,
    pub(crate) source: String,
    pub(crate) settings: BTreeMap<String, SettingUse>,
}

/// Keys the mesh wrote into a shared JSON file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct KeysEntry {
    pub(crate) path: String,
    /// The file did not exist before the mesh: once every owned key is given back and nothing
    /// else is in it, it is removed.
    pub(crate) created: bool,
    /// Every key the mesh has taken, by its dotted path.
    pub(crate) owned: BTreeMap<String, OwnedKey>,
    /// What the keys were last made from, for the cost of the next change.
    pub(crate) made_from: Option<MadeFrom>,
    /// The units that read the file and what a change costs them.
    #[serde(default)]
    pub(crate) readers: Readers,
    /// What the keys were before the mesh is lost (adopted after the record was lost):
    /// undeclaring leaves them as they are and says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) originals_lost: bool,
}

/// One key the mesh took in a shared file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OwnedKey {
    /// Its path of object keys from the top.
    pub(crate) path: Vec<String>,
    /// What was there before the mesh; `None`: the key was absent.
    pub(crate) original: Option<Value>,
    /// How many of its parent objects the mesh had to create (removed again when empty).
    pub(crate) parents_made: usize,
    /// What the mesh last put there, once it has.
    pub(crate) written: Option<Value>,
}

/// What a keys resource was last made from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MadeFrom {
    pub(crate) source: String,
    pub(crate) settings: BTreeMap<String, SettingUse>,
}

/// A unit the mesh has put in a state: what it first found, recorded once and never overwritten,
/// and what the mesh itself did, so undeclaring undoes exactly that.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ServiceEntry {
    pub(crate) unit: String,
    /// Running when first found; `None`: its state could not be told.
    pub(crate) found_running: Option<bool>,
    /// Enabled when first found; `None`: neither (static, generated) or unknown.
    pub(crate) found_enabled: Option<bool>,
    /// The mesh started it (it was not running).
    #[serde(default)]
    pub(crate) started: bool,
    /// The mesh stopped it (it was running).
    #[serde(default)]
    pub(crate) stopped: bool,
    /// The mesh enabled it (it was disabled).
    #[serde(default)]
    pub(crate) enabled: bool,
    /// The mesh disabled it (it was enabled).
    #[serde(default)]
    pub(crate) disabled: bool,
    /// What stopping it runs (its `ExecStop=` and `ExecStopPost=`), as systemd said at the last
    /// run that declared it: the plan shows it beside a stop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) stop_runs: Vec<String>,
    /// The module, as last declared, says to leave it running when it is undeclared.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) leave_running: bool,
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

    /// Writes the record atomically.
    pub(crate) fn save(&self, paths: &Paths) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
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
