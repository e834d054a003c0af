//! The resources a module puts on a machine, as module.json defines them: one file per kind
//! holds its definition, how it is checked when the module is loaded (every error names the file
//! and the field), and how `mesh module show` describes it. `parser` holds what every kind's check
//! shares.

mod account;
mod apt_repository;
mod container;
mod file;
mod keys;
mod package;
mod parser;
mod process;
mod ready;
#[cfg(test)]
mod ready_tests;
mod service;
mod symlink;
mod sysctl;
#[cfg(test)]
mod tests;
mod timer;

pub use account::{AccountError, check_account};
pub use account::{GroupDef, UserDef};
pub use apt_repository::AptRepositoryDef;
pub use container::ContainerDef;
pub use file::FileDef;
pub use keys::{KeyValue, KeysDef};
pub use package::PackageDef;
pub(crate) use parser::Parser;
pub use process::ProcessDef;
pub use ready::{ProbeDef, ProbeError, ReadyDef};
pub use service::ServiceDef;
pub use symlink::SymlinkDef;
pub use sysctl::SysctlDef;
pub use timer::TimerDef;

use mesh_wire::Cost;
use serde_json::Value;

use crate::CatalogueError;
use crate::setting::DeclarationError;

/// What a resource kind is to a module, implemented by its definition in its own file.
pub(crate) trait Definition: Sized {
    /// The kind's name as module.json spells it.
    const KIND: &'static str;

    /// Reads the definition of `resources[i]`, checked; every error names the file and field.
    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError>;

    /// A change to it is reverted unless the operator confirms it over a new connection.
    fn confirm(&self) -> bool {
        false
    }

    /// One line saying what it puts on a machine, for `mesh module show`.
    fn describe(&self) -> String;
}

/// Makes [`ResourceDef`] from the list of kinds, [`each_def!`] over it, each definition's `From`,
/// the parse by kind name and the names for messages; `$d` is a `$`, for the dispatch macro's
/// own variables.
macro_rules! definitions {
    ($d:tt $($(#[$attr:meta])* $variant:ident($def:ident),)*) => {
        /// A resource as a module defines it (before settings are filled in).
        #[derive(Debug, Clone)]
        pub enum ResourceDef {
            $($(#[$attr])* $variant($def),)*
        }

        /// `$body` with `$r` bound to the definition inside `$def` (a `ResourceDef` or a
        /// reference to one), whatever its kind: the one dispatch over the kinds, for every
        /// layer.
        #[macro_export]
        macro_rules! each_def {
            ($d def:expr, $d r:ident => $d body:expr) => {
                match $d def {
                    $($crate::ResourceDef::$variant($d r) => $d body,)*
                }
            };
        }

        $(
            impl From<$def> for ResourceDef {
                fn from(r: $def) -> ResourceDef {
                    ResourceDef::$variant(r)
                }
            }
        )*

        /// Reads `resources[i]` as the definition of `kind`; `None`: no kind is named so.
        fn parse_kind(
            parser: &mut Parser<'_>,
            kind: &str,
            i: usize,
            value: Value,
        ) -> Option<Result<ResourceDef, CatalogueError>> {
            $(
                if kind == <$def as Definition>::KIND {
                    return Some(<$def as Definition>::parse(parser, i, value));
                }
            )*
            None
        }

        /// The resource kinds module.json may name, for messages.
        pub(crate) fn kinds() -> String {
            [$(<$def as Definition>::KIND),*].join(", ")
        }
    };
}

definitions! { $
    /// A whole file from a shipped template.
    File(FileDef),
    /// Keys merged into a shared JSON file.
    Keys(KeysDef),
    /// An existing unit and the state it should be in.
    Service(ServiceDef),
    /// A package from the machine's package manager.
    Package(PackageDef),
    /// A unit the mesh creates and runs.
    Process(ProcessDef),
    /// A container run with the machine's Docker.
    Container(ContainerDef),
    /// A symbolic link, what was at its path given back when undeclared.
    Symlink(SymlinkDef),
    /// A kernel setting, the value found given back when undeclared.
    Sysctl(SysctlDef),
    /// A command run on a schedule: a timer and its service the mesh writes.
    Timer(TimerDef),
    /// A group, made if missing.
    Group(GroupDef),
    /// A user, made if missing; its shell, groups and keys set.
    User(UserDef),
    /// An apt repository and its key, what was at their paths given back when undeclared.
    AptRepository(AptRepositoryDef),
}

fn kind_of<D: Definition>(_: &D) -> &'static str {
    D::KIND
}

impl ResourceDef {
    /// The kind's name as module.json spells it.
    pub fn kind(&self) -> &'static str {
        each_def!(self, r => kind_of(r))
    }

    /// A change to it is reverted unless the operator confirms it over a new connection.
    pub fn confirm(&self) -> bool {
        each_def!(self, r => r.confirm())
    }

    /// One line saying what it puts on a machine, for `mesh module show`.
    pub fn describe(&self) -> String {
        let said = each_def!(self, r => r.describe());
        if self.confirm() {
            format!("{said}; a change is confirmed over a new connection, else reverted")
        } else {
            said
        }
    }
}

/// "; ready when …" for a unit that declares a probe, for `describe`.
fn ready_when(ready: Option<&ReadyDef>) -> String {
    ready.map(ReadyDef::describe).unwrap_or_default()
}

/// ", read by UNIT, UNIT" for a resource some units read, for `describe`.
fn read_by(units: &[String]) -> String {
    if units.is_empty() {
        String::new()
    } else {
        format!(", read by {}", units.join(", "))
    }
}

/// A cost as module.json spells it; none when not said.
pub(super) fn parse_cost(cost: Option<&str>) -> Result<Cost, DeclarationError> {
    match cost {
        None | Some("none") => Ok(Cost::None),
        Some("reload") => Ok(Cost::Reload),
        Some("restart") => Ok(Cost::Restart),
        Some(other) => Err(DeclarationError::NotACost(other.to_string())),
    }
}

/// Whether `unit` is a systemd unit name mesh handles.
pub fn valid_unit(unit: &str) -> bool {
    let Some((base, suffix)) = unit.rsplit_once('.') else {
        return false;
    };
    !base.is_empty()
        && matches!(
            suffix,
            "service" | "socket" | "timer" | "path" | "target" | "mount"
        )
        && base
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@:".contains(c))
}

fn root() -> String {
    "root".to_string()
}
fn default_mode() -> String {
    "0644".to_string()
}
