//! What the operator sends: one node's declaration, its resources and the kinds they are.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::*;

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
    /// Resources of the record that this push leaves exactly as the machine has them, neither
    /// applied, changed nor undone: an assignment held back (a consumer waiting for its
    /// provider, or whose provider is gone) keeps what it has while the rest of its node goes
    /// ahead. They are not among `resources`; naming one that is changes nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<String>,
    /// Which generation of the node this push was planned against: a machine at a newer one
    /// refuses it before changing anything ([`stale`]). `None`: a mesh from before generations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Planned>,
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
    /// A symbolic link: what was at its path is given back when undeclared.
    Symlink(SymlinkSpec),
    /// A kernel setting, through a drop-in and at once: the value found given back when
    /// undeclared.
    Sysctl(SysctlSpec),
    /// A job on a schedule: a timer and its service, both written by the mesh.
    Timer(TimerSpec),
    /// A group: made when missing (removed when undeclared), left as found otherwise.
    Group(GroupSpec),
    /// A user: made when missing, its shell, groups and keys set; what the mesh changed given
    /// back when undeclared.
    User(UserSpec),
    /// An apt repository and the key it is signed with: its sources file and key file given
    /// back as found when undeclared, apt's lists updated once per run that changed one.
    #[serde(rename = "apt-repository")]
    AptRepository(AptRepositorySpec),
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
            Spec::Symlink(_) => "symlink",
            Spec::Sysctl(_) => "sysctl",
            Spec::Timer(_) => "timer",
            Spec::Group(_) => "group",
            Spec::User(_) => "user",
            Spec::AptRepository(_) => "apt-repository",
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
            Spec::Symlink(l) => &l.path,
            Spec::Sysctl(s) => &s.name,
            Spec::Timer(t) => &t.name,
            Spec::Group(g) => &g.name,
            Spec::User(u) => &u.name,
            Spec::AptRepository(a) => &a.name,
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

/// A package by name: installed (at `version` when one is given, apt's `name=version`) or, with
/// `absent`, removed. Both fields are left out of the wire when unset, so that a declaration
/// written before them reads and compares the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
}

impl PackageSpec {
    /// What it wants, as a plan says it: `absent`, `1.2-1` or `present`.
    pub fn wanted(&self) -> &str {
        match (&self.version, self.absent) {
            (_, true) => "absent",
            (Some(v), false) => v,
            (None, false) => "present",
        }
    }

    /// Its name and version checked, as the helper checks them before apt-get sees them.
    pub fn check(&self) -> Result<(), crate::path::Refusal> {
        if !crate::valid_package(&self.name) {
            return Err(crate::path::Refusal {
                field: "name".into(),
                value: self.name.clone(),
                reason: "it is not a Debian package name".into(),
            });
        }
        match &self.version {
            Some(v) if !crate::valid_package_version(v) => Err(crate::path::Refusal {
                field: "version".into(),
                value: v.clone(),
                reason: "it is not a Debian version like 1.2.3-1".into(),
            }),
            Some(_) if self.absent => Err(crate::path::Refusal {
                field: "version".into(),
                value: self.wanted().into(),
                reason: "an absent package has no version".into(),
            }),
            _ => Ok(()),
        }
    }
}

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
    /// Every sealed content of the resource: a secret file's, a secret variable's.
    pub fn sealed(&self) -> Vec<&Sealed> {
        match &self.spec {
            Spec::File(f) => f.sealed.iter().collect(),
            Spec::Process(p) => p.sealed_environment.values().collect(),
            Spec::Container(c) => c.sealed_environment.values().collect(),
            _ => vec![],
        }
    }

    /// Every sealed content of the resource, to seal it again.
    pub fn sealed_mut(&mut self) -> Vec<&mut Sealed> {
        match &mut self.spec {
            Spec::File(f) => f.sealed.iter_mut().collect(),
            Spec::Process(p) => p.sealed_environment.values_mut().collect(),
            Spec::Container(c) => c.sealed_environment.values_mut().collect(),
            _ => vec![],
        }
    }

    /// Drops a sealed content's ciphertext, keeping its digest.
    pub fn drop_ciphertext(&mut self) {
        for s in self.sealed_mut() {
            s.age.clear();
        }
    }
}
