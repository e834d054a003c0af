//! The kinds of resource, listed once. Each kind's spec implements [`SpecKind`] in its own file
//! (`file.rs`, `sysctl.rs`, …): its name, what it is known by, the paths and modes it names and
//! how they are checked, what it claims on a machine, which of its fields differ between two
//! sends, what it puts on the machine as a plan's text and what undeclaring it does. The list
//! below ([`kinds!`]) makes the [`Spec`] enum, [`each_spec!`] (the one dispatch over it, for every
//! layer above) and the conversions between a kind's spec and [`Spec`]: a new kind is one line
//! there and one file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::path::{ModeOf, Place, Refusal};
use crate::unit::UnitError;
use crate::*;

/// What a kind of resource is on the wire, implemented by its spec in its own file.
pub trait SpecKind: Sized {
    /// The kind's name as the catalogue and reports spell it.
    const KIND: &'static str;

    /// Where the resource is, as an operator names it: a path, a unit or a package.
    fn at(&self) -> &str;

    /// Every path it names, with its field (as module.json spells it) and its place.
    fn paths(&self) -> Vec<(String, &str, Place)> {
        Vec::new()
    }

    /// Every mode it sets, with its field and what it is for.
    fn modes(&self) -> Vec<(String, u32, ModeOf)> {
        Vec::new()
    }

    /// What the kind checks beyond its paths and modes (a name's rule, a value's line).
    fn check_fields(&self) -> Result<(), Refusal> {
        Ok(())
    }

    /// The values it writes into a unit checked; a kind that writes no unit has none.
    fn check_unit(&self) -> Result<(), UnitError> {
        Ok(())
    }

    /// What must stay single on a machine, by the kind it is counted as (a process is a unit
    /// too, so a service); `None` when two instances may declare it alike (a package).
    fn single_as(&self) -> Option<&'static str> {
        Some(Self::KIND)
    }

    /// Every path it writes on the machine, with what it is there (`sysctl drop-in`): two kinds
    /// on one path fight at every push.
    fn claims(&self) -> Vec<(String, &'static str)> {
        Vec::new()
    }

    /// The path the mesh makes (and removes with it), with what it is called there; the
    /// operator's data may not be such a path.
    fn made(&self) -> Option<(&str, &'static str)> {
        None
    }

    /// The operator's data it reaches.
    fn access(&self) -> &[Access] {
        &[]
    }

    /// Where it keeps the operator's data it reaches, to be filled in; `None`: it reaches none.
    fn access_mut(&mut self) -> Option<&mut Vec<Access>> {
        None
    }

    /// Its environment, to seal or open: the names of its secret variables, every variable, and
    /// the sealed values; `None` for a kind without one.
    fn environment_mut(&mut self) -> Option<Environment<'_>> {
        None
    }

    /// What a file-like resource is made from and who pays for its changes.
    fn costing(&self) -> Option<&Costing> {
        None
    }

    /// Every sealed content of it: a secret file's, a secret variable's.
    fn sealed(&self) -> Vec<&Sealed> {
        Vec::new()
    }

    /// Every sealed content of it, to seal it again.
    fn sealed_mut(&mut self) -> Vec<&mut Sealed> {
        Vec::new()
    }

    /// A secret of it is not sealed to its machine: such a declaration is never sent.
    fn unsealed_secret(&self) -> bool {
        false
    }

    /// The fields that differ from `old`, as a plan's line names them (`content`, `mode`).
    fn fields_differing(&self, old: &Self) -> Vec<String>;

    /// What it puts on the machine, as text a plan's diff can show (never a secret).
    fn plan_text(&self) -> String;

    /// What undeclaring it does, in general (the helper says exactly, when it has been asked).
    fn removal(&self) -> String;
}

/// A process's or a container's environment, as sealing and opening reach it.
pub struct Environment<'a> {
    /// The names of the variables that are secret.
    pub secret: &'a [String],
    /// Every variable, a sealed one's value empty.
    pub values: &'a mut BTreeMap<String, String>,
    /// The sealed values, by name.
    pub sealed: &'a mut BTreeMap<String, Sealed>,
}

/// The names of `fields` that differ.
pub fn named(fields: &[(&str, bool)]) -> Vec<String> {
    fields
        .iter()
        .filter(|(_, differs)| *differs)
        .map(|(field, _)| field.to_string())
        .collect()
}

/// A kind's spec found in a [`Spec`] (or put in one): made for every kind by [`kinds!`].
pub trait OfSpec: SpecKind {
    /// The spec inside `spec`, if it is of this kind.
    fn of(spec: &Spec) -> Option<&Self>;
    /// The spec inside `spec`, if it is of this kind, to change it.
    fn of_mut(spec: &mut Spec) -> Option<&mut Self>;
}

/// Makes [`Spec`] from the list of kinds, [`each_spec!`] over it and each kind's [`OfSpec`] and
/// `From`; `$d` is a `$`, for the dispatch macro's own variables.
macro_rules! kinds {
    ($d:tt $($(#[$attr:meta])* $variant:ident($spec:ident),)*) => {
        /// The kinds of resource, each with what it needs.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(tag = "kind", rename_all = "lowercase")]
        pub enum Spec {
            $($(#[$attr])* $variant($spec),)*
        }

        /// `$body` with `$s` bound to the spec inside `$spec` (a `Spec`, `&Spec` or
        /// `&mut Spec`), whatever its kind: the one dispatch over the kinds, for every layer.
        #[macro_export]
        macro_rules! each_spec {
            ($d spec:expr, $d s:ident => $d body:expr) => {
                match $d spec {
                    $($crate::Spec::$variant($d s) => $d body,)*
                }
            };
        }

        $(
            impl From<$spec> for Spec {
                fn from(s: $spec) -> Spec {
                    Spec::$variant(s)
                }
            }

            impl OfSpec for $spec {
                fn of(spec: &Spec) -> Option<&Self> {
                    match spec {
                        Spec::$variant(s) => Some(s),
                        _ => None,
                    }
                }
                fn of_mut(spec: &mut Spec) -> Option<&mut Self> {
                    match spec {
                        Spec::$variant(s) => Some(s),
                        _ => None,
                    }
                }
            }
        )*
    };
}

kinds! { $
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

/// The kind's name of `_`, for a dispatch that has a value, not a type.
fn kind_of<K: SpecKind>(_: &K) -> &'static str {
    K::KIND
}

/// The fields of `old` and `new` that differ; `kind` when the kinds do.
fn differing<K: OfSpec>(new: &K, old: &Spec) -> Vec<String> {
    match K::of(old) {
        Some(old) => new.fields_differing(old),
        None => vec!["kind".to_string()],
    }
}

impl Spec {
    /// The kind's name as the catalogue and reports spell it.
    pub fn kind(&self) -> &'static str {
        each_spec!(self, s => kind_of(s))
    }

    /// Where the resource is, as an operator names it: a path, a unit or a package.
    pub fn target(&self) -> &str {
        each_spec!(self, s => s.at())
    }

    /// The spec inside, if it is of kind `K`.
    pub fn get<K: OfSpec>(&self) -> Option<&K> {
        K::of(self)
    }

    /// The specs inside `self` and `other`, if both are of kind `K`.
    pub fn both<'a, K: OfSpec>(&'a self, other: &'a Spec) -> Option<(&'a K, &'a K)> {
        Some((K::of(self)?, K::of(other)?))
    }

    /// The spec inside, if it is of kind `K`, to change it.
    pub fn get_mut<K: OfSpec>(&mut self) -> Option<&mut K> {
        K::of_mut(self)
    }

    /// What a file-like resource is made from and who pays for its changes; `None` for a
    /// service.
    pub fn costing(&self) -> Option<&Costing> {
        each_spec!(self, s => s.costing())
    }

    /// Every path the resource names, with its field (as module.json spells it) and its place.
    pub fn paths(&self) -> Vec<(String, &str, Place)> {
        each_spec!(self, s => s.paths())
    }

    /// Every mode the resource sets, with its field and what it is for.
    pub fn modes(&self) -> Vec<(String, u32, ModeOf)> {
        each_spec!(self, s => s.modes())
    }

    /// What the kind checks beyond paths and modes.
    pub(crate) fn check_fields(&self) -> Result<(), Refusal> {
        each_spec!(self, s => s.check_fields())
    }

    /// A process's, container's or timer's values checked; other kinds write nothing into a
    /// unit.
    pub fn check_unit_values(&self) -> Result<(), UnitError> {
        each_spec!(self, s => s.check_unit())
    }

    /// The kind it is counted as where it must stay single on a machine; `None`: it need not.
    pub fn single_as(&self) -> Option<&'static str> {
        each_spec!(self, s => s.single_as())
    }

    /// Every path it writes on the machine, with what it is there.
    pub fn claims(&self) -> Vec<(String, &'static str)> {
        each_spec!(self, s => s.claims())
    }

    /// The path the mesh makes for it (and removes with it), with what it is called there.
    pub fn made(&self) -> Option<(&str, &'static str)> {
        each_spec!(self, s => s.made())
    }

    /// The operator's data it reaches.
    pub fn access(&self) -> &[Access] {
        each_spec!(self, s => s.access())
    }

    /// Where it keeps the operator's data it reaches; `None`: it reaches none.
    pub fn access_mut(&mut self) -> Option<&mut Vec<Access>> {
        each_spec!(self, s => s.access_mut())
    }

    /// Its environment, to seal or open; `None` for a kind without one.
    pub fn environment_mut(&mut self) -> Option<Environment<'_>> {
        each_spec!(self, s => s.environment_mut())
    }

    /// A secret of it is not sealed to its machine.
    pub fn unsealed_secret(&self) -> bool {
        each_spec!(self, s => s.unsealed_secret())
    }

    /// Every sealed content of it.
    pub fn sealed(&self) -> Vec<&Sealed> {
        each_spec!(self, s => s.sealed())
    }

    /// Every sealed content of it, to seal it again.
    pub fn sealed_mut(&mut self) -> Vec<&mut Sealed> {
        each_spec!(self, s => s.sealed_mut())
    }

    /// The fields of its own kind that differ from `old`; `kind` when the kinds do.
    pub fn differing_from(&self, old: &Spec) -> Vec<String> {
        each_spec!(self, s => differing(s, old))
    }

    /// What it puts on the machine, as text a plan's diff can show (never a secret).
    pub fn plan_text(&self) -> String {
        each_spec!(self, s => s.plan_text())
    }

    /// What undeclaring it does, in general.
    pub fn removal(&self) -> String {
        each_spec!(self, s => s.removal())
    }
}
