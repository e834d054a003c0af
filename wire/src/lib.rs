//! The wire format between `mesh` (the operator) and `mesh-host` (the helper on each machine).
//!
//! The operator sends one [`Declaration`] as JSON on the helper's stdin: everything the machine
//! should be, composed afresh at every push. The helper answers with one [`Report`] on stdout.
//! Both binaries use these types and nothing else to talk, so a field added here is added for
//! both. The helper refuses a declaration whose [`Declaration::version`] it does not know.
//!
//! The helper receives data, never shell: paths, owners and contents are fields, not commands.

pub mod path;
pub mod read;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of this format. Bump it when a change would be misread by an older helper.
pub const VERSION: u32 = 1;

/// Where the helper keeps itself and its record on every machine.
pub const STATE_DIR: &str = "/var/lib/mesh";

/// Exit status of the remote launcher when the helper for this content hash is not on the machine
/// yet: the operator uploads it and runs it again.
pub const EXIT_HELPER_MISSING: u32 = 90;

/// Exit status of the remote launcher when the machine is not a platform mesh has a helper for.
pub const EXIT_WRONG_PLATFORM: u32 = 91;

/// Exit status of the helper when the machine has no readable record but shows signs that the mesh
/// has been there: it refuses to touch it (a dry run too) and prints a [`RecordRefusal`] on stdout.
/// The recovery is `mesh node adopt NODE`.
pub const EXIT_RECORD_LOST: u32 = 20;

/// Exit status of the helper when its record is there but cannot be trusted: it does not parse, or
/// its version is one this helper does not know. It prints a [`RecordRefusal`] on stdout.
pub const EXIT_RECORD_UNREADABLE: u32 = 21;

/// Seconds a helper waits for a confirmation when the declaration does not say.
pub const CONFIRM_WITHIN: u64 = 30;

/// Exit status of the helper's `confirm ID` when the change was already reverted (the deadline
/// passed): the operator reports the revert.
pub const EXIT_ALREADY_REVERTED: u32 = 30;

/// Why a helper refused to touch a machine: it cannot trust what it knows of the machine, and
/// applying anyway would take the mesh's own work for the host's (and lose the real originals).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "refused", rename_all = "kebab-case")]
pub enum RecordRefusal {
    /// There is no record, and yet the machine shows signs of the mesh.
    Lost {
        /// Where the record should be.
        record: String,
        /// What was found, in words (each names a path, unit or container).
        found: Vec<String>,
    },
    /// The record does not parse.
    Unreadable { record: String, reason: String },
    /// The record is of a version this helper does not know (a newer mesh wrote it).
    UnknownVersion {
        record: String,
        version: u64,
        known: u32,
    },
}

impl RecordRefusal {
    /// The helper's exit status for this refusal.
    pub fn exit_code(&self) -> u32 {
        match self {
            RecordRefusal::Lost { .. } => EXIT_RECORD_LOST,
            RecordRefusal::Unreadable { .. } | RecordRefusal::UnknownVersion { .. } => {
                EXIT_RECORD_UNREADABLE
            }
        }
    }
}

impl std::fmt::Display for RecordRefusal {
    /// What was found, without the node's name or the fix (each side adds its own).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordRefusal::Lost { record, found } => write!(
                f,
                "the helper's record {record} is missing, yet the machine shows signs of the mesh: {}",
                found.join("; ")
            ),
            RecordRefusal::Unreadable { record, reason } => {
                write!(f, "the helper's record {record} cannot be read: {reason}")
            }
            RecordRefusal::UnknownVersion {
                record,
                version,
                known,
            } => write!(
                f,
                "the helper's record {record} is version {version}, and this helper knows only \
                 version {known} (a newer mesh wrote it)"
            ),
        }
    }
}

/// Everything one node should be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declaration {
    /// [`VERSION`] of the sender.
    pub version: u32,
    /// The node's name in the inventory, so the helper's record says whose it is.
    pub node: String,
    /// Every resource, in the order they are applied. An empty list is meaningful: it undoes
    /// everything the mesh did on the machine.
    pub resources: Vec<Resource>,
    /// The operator's inventory holds what this machine's helper confirmed before: a machine
    /// with no record has then lost it, whatever else it shows (its whole state directory may be
    /// gone), and is refused until adopted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expects_record: bool,
    /// Seconds the helper waits for the operator's confirmation over a new connection when the
    /// push changes a resource that asks for it; `None`: [`CONFIRM_WITHIN`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm_within: Option<u64>,
    /// Resources no longer declared whose last declaration asked for confirmation (the operator
    /// knows them from what the node confirmed; a record written by an older helper does not
    /// say): taking them off the machine is confirmed like a change to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confirm_removals: Vec<String>,
}

/// One thing on a machine, with an id that stays the same from push to push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// Stable id: `<instance>:<kind>:<what>`, e.g. `motd:file:/etc/motd`.
    pub id: String,
    /// The assignment (instance) that declares it.
    pub instance: String,
    /// The module (and its version) that declares it, for reports.
    pub module: String,
    /// A change to it can cut the operator off (sshd, network, firewall): the helper keeps what
    /// it needs to put the machine back, applies, and reverts by itself unless the operator
    /// confirms over a new connection within [`Declaration::confirm_within`] seconds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm: bool,
    /// What kind of resource, and its details.
    #[serde(flatten)]
    pub spec: Spec,
}

/// The kinds of resource, each with what it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Spec {
    /// A whole file the mesh owns.
    File(FileSpec),
    /// Keys the mesh owns inside a shared JSON file (ADR 102: it writes into the file, never over
    /// it).
    Keys(KeysSpec),
    /// An existing systemd unit: the state the mesh wants it in.
    Service(ServiceSpec),
    /// A directory with owner and mode.
    Directory(DirectorySpec),
    /// A package installed with the machine's package manager (left installed when undeclared).
    Package(PackageSpec),
    /// A systemd service the mesh creates and runs, with the files it runs.
    Process(ProcessSpec),
    /// A container run with the machine's Docker.
    Container(ContainerSpec),
}

impl Spec {
    /// The kind's name as the catalogue and reports spell it.
    pub fn kind(&self) -> &'static str {
        match self {
            Spec::File(_) => "file",
            Spec::Keys(_) => "keys",
            Spec::Service(_) => "service",
            Spec::Directory(_) => "directory",
            Spec::Package(_) => "package",
            Spec::Process(_) => "process",
            Spec::Container(_) => "container",
        }
    }

    /// Where the resource is, as an operator names it: a path, a unit or a package.
    pub fn target(&self) -> &str {
        match self {
            Spec::File(f) => &f.path,
            Spec::Keys(k) => &k.path,
            Spec::Service(sv) => &sv.unit,
            Spec::Directory(d) => &d.path,
            Spec::Package(p) => &p.name,
            Spec::Process(p) => &p.unit,
            Spec::Container(c) => &c.name,
        }
    }

    /// What a file-like resource is made from and who pays for its changes; `None` for a
    /// service.
    pub fn costing(&self) -> Option<&Costing> {
        match self {
            Spec::File(f) => Some(&f.costing),
            Spec::Keys(k) => Some(&k.costing),
            _ => None,
        }
    }
}

/// A directory the mesh makes (or sets owner and mode of). Made by the mesh: removed when
/// undeclared if empty, kept (and said so) while it holds anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectorySpec {
    pub path: String,
    pub owner: String,
    pub group: String,
    pub mode: u32,
}

/// A package by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageSpec {
    pub name: String,
}

/// Whether `name` is a Debian package name (checked when a module is loaded, and again by the
/// helper before it is given to apt-get).
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

pub fn valid_package(name: &str) -> bool {
    name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
}

pub mod unit;

#[cfg(test)]
mod fixtures;

/// A service unit the mesh writes, enables and starts; restarted when its unit or bundle changes;
/// stopped, disabled and removed with its bundle when undeclared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSpec {
    /// The unit's name, e.g. `web-server.service`.
    pub unit: String,
    /// One sentence for the unit's Description.
    pub description: String,
    /// The command and its arguments (written to ExecStart quoted, never through a shell).
    pub command: Vec<String>,
    /// The user it runs as (a name or a uid).
    pub user: String,
    /// Environment variables.
    pub environment: BTreeMap<String, String>,
    /// The variables among them that carry a secret (a definition's declared exception): their
    /// values are never shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_environment: Vec<String>,
    /// The values of the secret variables, sealed to the machine's host key: each one's value in
    /// `environment` is then empty, and only the helper on that machine opens it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sealed_environment: BTreeMap<String, Sealed>,
    /// The working directory; the bundle's directory when not said.
    pub working_directory: Option<String>,
    /// systemd's Restart= policy: `no`, `on-failure`, `always`.
    pub restart: String,
    /// Where the bundle goes: `/var/lib/mesh/bundles/<unit>`.
    pub bundle_dir: String,
    /// The files it runs, relative to the bundle directory.
    pub bundle: Vec<BundleFile>,
    /// The operator's data it may reach: paths the mesh never creates, owns or removes; one not
    /// on the machine fails the process, and one read-only is mounted so for it alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access: Vec<Access>,
}

/// Access to a path the operator named (`mesh place`): the mesh only checks that it is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// The requirement's name, for messages.
    pub name: String,
    /// Absolute path on the machine.
    pub path: String,
    /// Read-write; otherwise the process sees it read-only (systemd `BindReadOnlyPaths=`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub write: bool,
}

/// One file of a process's bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFile {
    /// Relative to the bundle directory, no `..`.
    pub path: String,
    pub content: String,
    pub mode: u32,
    /// The template's digest: a change of it restarts the process.
    #[serde(default)]
    pub source: String,
    /// The settings and requirement fields it reads: a change of only these costs what they
    /// declare (a `none` setting read in a bundle file does not restart the process).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, SettingUse>,
}

impl BundleFile {
    /// What a change of this bundle file's content costs its process, from what it was last
    /// made from (`None`: a new file, or one whose making is unknown). A process the mesh writes
    /// has no ExecReload: what would reload it restarts it.
    pub fn cost(&self, previous: Option<(&str, &BTreeMap<String, SettingUse>)>) -> Cost {
        match made_cost(previous, &self.source, &self.settings, Cost::Restart, false) {
            Cost::Reload => Cost::Restart,
            cost => cost,
        }
    }
}

impl ProcessSpec {
    /// What going from `old` to `self` costs the unit: anything but a bundle file's content
    /// (its command, user, environment, unit, the bundle's files and modes) restarts it; a bundle
    /// file whose content moved costs what [`BundleFile::cost`] says. `None` when nothing moved.
    pub fn change_cost(&self, old: &ProcessSpec) -> Cost {
        let same_frame = (&self.unit, &self.description, &self.command, &self.user)
            == (&old.unit, &old.description, &old.command, &old.user)
            && (&self.environment, &self.working_directory, &self.restart)
                == (&old.environment, &old.working_directory, &old.restart)
            && self.bundle_dir == old.bundle_dir
            && self
                .bundle
                .iter()
                .map(|f| (&f.path, f.mode))
                .eq(old.bundle.iter().map(|f| (&f.path, f.mode)));
        if !same_frame {
            return Cost::Restart;
        }
        self.bundle
            .iter()
            .zip(&old.bundle)
            .filter(|(now, was)| now.content != was.content)
            .map(|(now, was)| now.cost(Some((was.source.as_str(), &was.settings))))
            .max()
            .unwrap_or(Cost::None)
    }
}

/// A container the mesh runs. It carries the labels `mesh.instance` and `mesh.spec` (a digest of
/// this spec): it is recreated only when the spec changes, and a container without the labels is
/// never touched. Undeclared: stopped and removed; its host directories are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerSpec {
    /// The container's name: `<instance>-<name>`.
    pub name: String,
    pub image: String,
    /// The command and its arguments; empty runs the image's own.
    pub command: Vec<String>,
    pub environment: BTreeMap<String, String>,
    /// The variables among them that carry a secret: their values are never shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_environment: Vec<String>,
    /// The values of the secret variables, sealed to the machine's host key: each one's value in
    /// `environment` is then empty, and only the helper on that machine opens it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sealed_environment: BTreeMap<String, Sealed>,
    pub mounts: Vec<Mount>,
    pub ports: Vec<Port>,
    /// Docker's restart policy: `no`, `on-failure`, `always`, `unless-stopped`.
    pub restart: String,
    /// The operator's data it may reach, as a process may: each seen at the same path inside,
    /// read-only when only reading was asked; never created, owned or removed, and one not on
    /// the machine fails the container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access: Vec<Access>,
}

impl ContainerSpec {
    /// Every directory of the machine it sees: its mounts, then the operator's data it may reach
    /// (at the same path inside).
    pub fn binds(&self) -> Vec<Mount> {
        let access = self.access.iter().map(|a| Mount {
            source: a.path.clone(),
            target: a.path.clone(),
            read_only: !a.write,
        });
        self.mounts.iter().cloned().chain(access).collect()
    }

    /// The fields in which `self` differs from `other`, by name.
    pub fn differing(&self, other: &ContainerSpec) -> Vec<&'static str> {
        [
            ("image", self.image != other.image),
            ("command", self.command != other.command),
            (
                "environment",
                self.environment != other.environment
                    || self.sealed_environment != other.sealed_environment,
            ),
            (
                "mounts",
                self.mounts != other.mounts || self.access != other.access,
            ),
            ("ports", self.ports != other.ports),
            ("restart", self.restart != other.restart),
        ]
        .into_iter()
        .filter(|(_, d)| *d)
        .map(|(f, _)| f)
        .collect()
    }
}

/// A directory of the machine seen inside a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    /// The directory on the machine.
    pub source: String,
    /// Where the container sees it.
    pub target: String,
    #[serde(default)]
    pub read_only: bool,
}

/// A port of the machine forwarded into a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub host: u16,
    pub container: u16,
    /// `tcp` or `udp`.
    pub protocol: String,
}

/// What undeclaring a resource does. On a declared resource's outcome: what undeclaring it would
/// do, as the helper's record says after this run, read by the plan so it can name every unit an
/// undeclare will stop, reload or restart and every path it will delete or restore. On a removed
/// resource's outcome: what this run did (or, in a dry run, would do), every condition settled.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Undo {
    /// Units it would stop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stops: Vec<String>,
    /// Paths it would delete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletes: Vec<String>,
    /// Paths it would delete only if nothing else is in them then (a directory the mesh made, a
    /// shared file the mesh made): what they hold is known only on the machine, at that moment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletes_if_empty: Vec<String>,
    /// Paths it kept because something else is in them (a settled `deletes_if_empty`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keeps: Vec<String>,
    /// Paths it would put back from a kept original.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restores: Vec<String>,
    /// Units that read what it gives back and reload for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reloads: Vec<String>,
    /// Units that read what it gives back and restart for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<String>,
}

impl Undo {
    /// Settles every `deletes_if_empty`: deleted if `gone` says the run removed it, else kept if
    /// `there` says it is still on the machine (else it was gone already: nothing was done).
    pub fn settle(&mut self, gone: impl Fn(&str) -> bool, there: impl Fn(&str) -> bool) {
        for path in std::mem::take(&mut self.deletes_if_empty) {
            if gone(&path) {
                self.deletes.push(path);
            } else if there(&path) {
                self.keeps.push(path);
            }
        }
    }
}

/// What a file or keys resource is made from, and what a change to it costs the units that read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Costing {
    /// What went into the content besides settings: the template's digest. When only settings
    /// moved, a change costs what those settings cost; otherwise it costs [`Costing::cost`].
    pub source: String,
    /// The settings the content reads, each with a digest of its value and what a change costs.
    pub settings: BTreeMap<String, SettingUse>,
    /// What a change costs when it did not come from settings alone.
    pub cost: Cost,
    /// The systemd units that read the file, and so pay its cost when it changes.
    pub units: Vec<String>,
}

/// A whole file: its content, who owns it, and what a change to it costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSpec {
    /// Absolute path on the machine.
    pub path: String,
    /// Owner: a user name (looked up on the machine with `getent`) or a numeric uid.
    pub owner: String,
    /// Group: a group name or a numeric gid.
    pub group: String,
    /// Permission bits, e.g. `0o644`.
    pub mode: u32,
    /// The full content, as UTF-8 text.
    pub content: String,
    /// A command (argv, run without a shell) that checks the machine's configuration once the
    /// new content is in place, before any unit is paid; if it fails the previous content is put
    /// back and the resource fails. E.g. `["sshd", "-t"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validate: Vec<String>,
    /// It holds secrets: the operator never shows its content (plans, diffs), and the helper
    /// never reports it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
    /// A secret file's content, sealed to the machine's own host key: then `content` is empty
    /// and only the helper on that machine can read what it writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<Sealed>,
    /// How to tell that every setting the file gives is the one in force (a daemon that takes
    /// the first value it reads lets an earlier file win): checked with `validate`, before any
    /// unit is paid; a setting shadowed puts the previous content back and fails the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective: Option<Effective>,
    #[serde(flatten)]
    pub costing: Costing,
}

/// A command that prints a daemon's effective settings, one `keyword value` a line, for its
/// whole configuration (`show`), and for a configuration of one file alone (`show` and `alone`,
/// then that file's path). Each keyword the file gives (a line's first word, not a comment)
/// must print the same values both ways, compared case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effective {
    /// E.g. `["sshd", "-T"]`.
    pub show: Vec<String>,
    /// What makes `show` read one file alone, before that file's path: e.g. `["-f"]`.
    pub alone: Vec<String>,
    /// Files read before this file's directory, searched (after the directory's files that
    /// sort before it) for the line that shadows a setting, to name it: e.g.
    /// `["/etc/ssh/sshd_config"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_first: Vec<String>,
}

/// Content sealed to one machine (age, to its `ssh-ed25519` host key), with a digest the
/// operator compares by. Sealing is random, so two sealings of one content are equal when their
/// digests are: what a plan compares and what the inventory keeps is the digest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sealed {
    /// The age-encrypted content, ASCII-armored; empty in what the inventory keeps.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub age: String,
    /// A digest of the content keyed by the operator's key (never a plain hash, which would
    /// let a guessed secret be checked against it).
    pub digest: String,
    /// The same keyed digest of each line of a secret file: what the operator asks of a
    /// provider's confirmed file (does it hold this consumer's lines?) without keeping it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
}

impl PartialEq for Sealed {
    fn eq(&self, other: &Sealed) -> bool {
        self.digest == other.digest
    }
}

impl Eq for Sealed {}

impl Declaration {
    /// The declaration as compared and kept: every sealed content reduced to its digest.
    pub fn without_ciphertext(&self) -> Declaration {
        let mut out = self.clone();
        for r in &mut out.resources {
            r.drop_ciphertext();
        }
        out
    }

    /// The first secret file or secret variable that is not sealed to its machine: such a
    /// declaration is never sent.
    pub fn unsealed_secret(&self) -> Option<&Resource> {
        let unsealed = |s: Option<&Sealed>| s.is_none_or(|s| s.age.is_empty());
        let env = |names: &[String], sealed: &BTreeMap<String, Sealed>| {
            names.iter().any(|n| unsealed(sealed.get(n)))
        };
        self.resources.iter().find(|r| match &r.spec {
            Spec::File(f) => f.secret && unsealed(f.sealed.as_ref()),
            Spec::Process(p) => env(&p.secret_environment, &p.sealed_environment),
            Spec::Container(c) => env(&c.secret_environment, &c.sealed_environment),
            _ => false,
        })
    }
}

impl Resource {
    /// Drops a sealed content's ciphertext, keeping its digest.
    pub fn drop_ciphertext(&mut self) {
        let sealed: Vec<&mut Sealed> = match &mut self.spec {
            Spec::File(f) => f.sealed.iter_mut().collect(),
            Spec::Process(p) => p.sealed_environment.values_mut().collect(),
            Spec::Container(c) => c.sealed_environment.values_mut().collect(),
            _ => vec![],
        };
        for s in sealed {
            s.age.clear();
        }
    }
}

/// Keys merged into a shared JSON file. Keys the mesh does not own are left as they are; the
/// helper remembers what each owned key replaced (or that it was absent) to give it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeysSpec {
    /// Absolute path of the JSON file.
    pub path: String,
    /// Owner, group and mode used only when the mesh creates the file.
    pub owner: String,
    pub group: String,
    pub mode: u32,
    /// Every owned key: its path of object keys from the top, and its value.
    pub keys: Vec<Key>,
    #[serde(flatten)]
    pub costing: Costing,
}

/// One owned key of a JSON file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// Object keys from the top of the document, e.g. `["log-opts", "max-size"]`.
    pub path: Vec<String>,
    /// The value the mesh puts there.
    pub value: Value,
}

impl Key {
    /// The path as operators read it: `log-opts.max-size`.
    pub fn dotted(&self) -> String {
        self.path.join(".")
    }
}

/// An existing systemd unit and the state the mesh wants it in. What is not said is left alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceSpec {
    /// The unit, e.g. `docker.service`.
    pub unit: String,
    /// `Some(true)` running, `Some(false)` stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<bool>,
    /// Enabled at boot or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// One setting as a file reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingUse {
    /// A digest of the effective value (never the value: some values are not for logs).
    pub digest: String,
    /// What a change of this setting costs the units that read the file.
    pub cost: Cost,
}

/// What a change costs a unit that reads it. Ordered: `None < Reload < Restart`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Cost {
    /// Read on every use: nothing to do.
    #[default]
    None,
    /// Re-read on a reload (SIGHUP or the unit's ExecReload).
    Reload,
    /// Read only at start: the unit must restart.
    Restart,
}

impl Cost {
    /// The word used in module definitions and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Cost::None => "none",
            Cost::Reload => "reload",
            Cost::Restart => "restart",
        }
    }
}

/// What it costs to go from what a file was last made from to what it is made from now.
///
/// Shared by the helper (which applies it) and the operator's plan (which shows it), so the two
/// cannot disagree. `previous` is the last applied source and settings, `drifted` says the file on
/// the machine is not what was last written. Settings that moved cost what they declare; anything
/// else that changed (the template, a hand edit, a file never written) costs the resource's own
/// declared cost. The strongest wins.
pub fn change_cost(
    previous: Option<(&str, &BTreeMap<String, SettingUse>)>,
    next: &Costing,
    drifted: bool,
) -> Cost {
    made_cost(previous, &next.source, &next.settings, next.cost, drifted)
}

/// [`change_cost`] for anything made from a source and settings, `cost` being what a change for
/// any other reason costs. Requirement fields a template reads (`db.host`) are settings here.
pub fn made_cost(
    previous: Option<(&str, &BTreeMap<String, SettingUse>)>,
    source: &str,
    settings: &BTreeMap<String, SettingUse>,
    cost: Cost,
    drifted: bool,
) -> Cost {
    let Some((previous_source, previous_settings)) = previous else {
        return cost;
    };
    let moved = settings
        .iter()
        .filter(|(name, now)| previous_settings.get(*name).map(|p| &p.digest) != Some(&now.digest))
        .map(|(_, now)| now.cost)
        .chain(
            // a setting the file no longer reads also moved
            previous_settings
                .iter()
                .filter(|(name, _)| !settings.contains_key(*name))
                .map(|(_, was)| was.cost),
        )
        .max()
        .unwrap_or(Cost::None);
    if drifted || previous_source != source {
        moved.max(cost)
    } else {
        moved
    }
}

/// How the helper was asked to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Change the machine.
    Apply,
    /// Only say what would change.
    DryRun,
    /// Take the machine as it is now, for a machine whose record was lost: build a fresh record
    /// from the declaration and what is found, change nothing else, and say what cannot be given
    /// back (`mesh node adopt`).
    Adopt,
}

/// The helper's answer: one outcome per resource, declared or undeclared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// [`VERSION`] of the helper.
    pub version: u32,
    /// Whether anything was changed, or only looked at.
    pub mode: Mode,
    /// The machine's hostname, as it says it.
    pub hostname: String,
    /// One entry per resource, in the order handled.
    pub resources: Vec<Outcome>,
    /// Units reloaded or restarted because files they read changed.
    #[serde(default)]
    pub units: Vec<UnitOutcome>,
    /// In an adopt run: what the helper took, kept and could not give back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adoption: Option<Adoption>,
    /// The change waits for the operator's confirmation over a new connection, else it is
    /// reverted by the helper itself at the deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    /// Earlier pushes the helper reverted because no confirmation came in time (said once, by
    /// the next apply; a dry run says them too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverted: Vec<Reverted>,
}

/// A change waiting to be confirmed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Awaiting {
    /// Names the change (lower-case hex): `mesh-host confirm <id>` confirms it.
    pub id: String,
    /// Seconds from the apply's end after which the helper reverts it.
    pub deadline: u64,
    /// The resources that asked for the confirmation.
    pub resources: Vec<String>,
}

impl Awaiting {
    /// Whether `id` can name a change: lower-case hex only, so it goes into a unit name and a
    /// command line as it is.
    pub fn valid_id(id: &str) -> bool {
        !id.is_empty()
            && id.len() <= 32
            && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }
}

/// A change the helper reverted because it was not confirmed in time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reverted {
    pub id: String,
    /// Seconds since the epoch when it was put back.
    pub at: u64,
    /// What was put back, in words (each names a path or unit).
    pub restored: Vec<String>,
    /// What could not be put back, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// What an adopt run found: the losses an operator must know of, and what it kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adoption {
    /// The machine had a readable record: nothing was adopted, nothing changed.
    #[serde(default)]
    pub had_record: bool,
    /// What undeclaring can no longer give back as the host had it, in words.
    #[serde(default)]
    pub cannot_give_back: Vec<String>,
    /// Kept originals that match nothing declared, and a record that could not be read: kept on
    /// the machine (never deleted), by path.
    #[serde(default)]
    pub kept: Vec<String>,
}

impl Report {
    /// Whether any resource or unit failed.
    pub fn failed(&self) -> bool {
        self.resources.iter().any(|r| r.state == State::Failed)
            || self.units.iter().any(|u| u.error.is_some())
    }

    /// Whether anything changed (or, in a dry run, would).
    pub fn changed(&self) -> bool {
        self.resources.iter().any(|r| r.state != State::Unchanged) || !self.units.is_empty()
    }
}

/// What happened to one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The resource's id.
    pub id: String,
    /// What happened.
    pub state: State,
    /// In words an operator reads: what was done or why it failed.
    pub detail: String,
    /// What undeclaring it would do, after this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<Undo>,
    /// In a dry run, each file of it that would change and holds no secret: what the machine
    /// has and what a push would write, for `check --diff`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<Seen>,
}

/// A file as the machine has it and as a push would write it. Either text is at most
/// [`Seen::MAX`] bytes; a longer file, or one that is not text, is not sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// The file's path on the machine.
    pub path: String,
    /// What it holds now; `None`: it is missing.
    pub found: Option<String>,
    /// What a push would write.
    pub declared: String,
}

impl Seen {
    /// The largest text sent either way.
    pub const MAX: usize = 64 * 1024;

    /// The pair, if both are text of at most [`Seen::MAX`] bytes.
    pub fn of(path: &str, found: Option<&[u8]>, declared: &[u8]) -> Option<Seen> {
        let text = |b: &[u8]| {
            (b.len() <= Seen::MAX)
                .then(|| String::from_utf8(b.to_vec()).ok())
                .flatten()
        };
        let found = match found {
            Some(b) => Some(text(b)?),
            None => None,
        };
        Some(Seen {
            path: path.to_string(),
            found,
            declared: text(declared)?,
        })
    }
}

/// The states a resource can end a run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// It was not there; the mesh made it.
    Created,
    /// It was there and differed; the mesh changed it.
    Changed,
    /// It was already as declared; nothing was touched.
    Unchanged,
    /// No longer declared; the mesh undid it (removed what it made, gave back what it replaced).
    Removed,
    /// It could not be applied; `detail` says why.
    Failed,
}

impl State {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Created => "created",
            State::Changed => "changed",
            State::Unchanged => "unchanged",
            State::Removed => "removed",
            State::Failed => "failed",
        }
    }
}

/// A unit that paid the cost of a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitOutcome {
    /// The systemd unit.
    pub unit: String,
    /// What was (or would be) done to it.
    pub action: Cost,
    /// The resources whose change caused it.
    pub because: Vec<String>,
    /// What was done, in words ("restarted", or "not running: it reads the change when it
    /// starts").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// Why it failed, if it did; the cost stays owed for the next run.
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(source: &str, settings: &[(&str, &str, Cost)], cost: Cost) -> Costing {
        Costing {
            source: source.into(),
            settings: settings
                .iter()
                .map(|(n, d, c)| {
                    (
                        (*n).to_string(),
                        SettingUse {
                            digest: (*d).to_string(),
                            cost: *c,
                        },
                    )
                })
                .collect(),
            cost,
            units: vec![],
        }
    }

    #[test]
    fn a_new_file_costs_its_declared_cost() {
        let next = spec("t1", &[("a", "1", Cost::Reload)], Cost::Restart);
        assert_eq!(change_cost(None, &next, false), Cost::Restart);
    }

    #[test]
    fn the_strongest_moved_setting_wins() {
        let prev = spec(
            "t1",
            &[
                ("a", "1", Cost::Reload),
                ("b", "1", Cost::Restart),
                ("c", "1", Cost::None),
            ],
            Cost::Restart,
        );
        let only_reload = spec(
            "t1",
            &[
                ("a", "2", Cost::Reload),
                ("b", "1", Cost::Restart),
                ("c", "1", Cost::None),
            ],
            Cost::Restart,
        );
        let both = spec(
            "t1",
            &[
                ("a", "2", Cost::Reload),
                ("b", "2", Cost::Restart),
                ("c", "1", Cost::None),
            ],
            Cost::Restart,
        );
        let p = Some((prev.source.as_str(), &prev.settings));
        assert_eq!(change_cost(p, &only_reload, false), Cost::Reload);
        assert_eq!(change_cost(p, &both, false), Cost::Restart);
        assert_eq!(change_cost(p, &prev, false), Cost::None);
    }

    #[test]
    fn drift_or_a_new_template_costs_the_declared_cost() {
        let prev = spec("t1", &[("a", "1", Cost::None)], Cost::Reload);
        let same = spec("t1", &[("a", "1", Cost::None)], Cost::Reload);
        let new_template = spec("t2", &[("a", "1", Cost::None)], Cost::Reload);
        let p = Some((prev.source.as_str(), &prev.settings));
        assert_eq!(change_cost(p, &same, true), Cost::Reload);
        assert_eq!(change_cost(p, &new_template, false), Cost::Reload);
    }

    #[test]
    fn a_bundle_file_costs_what_moved_in_it_and_anything_else_restarts() {
        let made = spec(
            "t1",
            &[("quiet", "1", Cost::None), ("loud", "1", Cost::Restart)],
            Cost::Restart,
        );
        let file = |source: &str, quiet: &str, loud: &str, content: &str| BundleFile {
            path: "run.sh".into(),
            content: content.into(),
            mode: 0o755,
            source: source.into(),
            settings: spec(
                "",
                &[("quiet", quiet, Cost::None), ("loud", loud, Cost::Restart)],
                Cost::None,
            )
            .settings,
        };
        let was = Some((made.source.as_str(), &made.settings));
        assert_eq!(file("t1", "2", "1", "x").cost(was), Cost::None);
        assert_eq!(file("t1", "2", "2", "x").cost(was), Cost::Restart);
        assert_eq!(file("t2", "1", "1", "x").cost(was), Cost::Restart);
        assert_eq!(file("t1", "1", "1", "x").cost(None), Cost::Restart);

        let process = |bundle: BundleFile, command: &str| ProcessSpec {
            unit: "p.service".into(),
            description: "p".into(),
            command: vec![command.into()],
            user: "root".into(),
            environment: BTreeMap::new(),
            secret_environment: vec![],
            sealed_environment: Default::default(),
            working_directory: None,
            restart: "always".into(),
            bundle_dir: "/var/lib/mesh/bundles/p".into(),
            bundle: vec![bundle],
            access: vec![],
        };
        let old = process(file("t1", "1", "1", "a"), "/bin/sh");
        assert_eq!(
            process(file("t1", "2", "1", "b"), "/bin/sh").change_cost(&old),
            Cost::None
        );
        assert_eq!(
            process(file("t1", "1", "2", "b"), "/bin/sh").change_cost(&old),
            Cost::Restart
        );
        // its command moved: a restart, whatever the bundle
        assert_eq!(
            process(file("t1", "1", "1", "a"), "/bin/bash").change_cost(&old),
            Cost::Restart
        );
        assert_eq!(old.change_cost(&old), Cost::None);
    }

    #[test]
    fn cost_orders_none_reload_restart() {
        assert!(Cost::None < Cost::Reload && Cost::Reload < Cost::Restart);
    }
}
