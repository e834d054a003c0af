//! What the helper asks of the machine beyond its files: systemd's units, Docker's containers,
//! dpkg's packages and the accounts, and the waiter of a change to confirm. The helper's apply
//! logic asks through [`System`]; [`Real`] asks the machine (each call a bounded command, see
//! `child`), and [`Recording`] keeps a small model of a machine and records every call in order,
//! so that the apply of a unit, a package or an account can be tested anywhere, without root.
//!
//! `mesh-host --root DIR` uses a [`Recording`] whose model and log are in
//! `DIR/var/lib/mesh/system/` (see [`Recording::LOG`]): a test that drives the real binary reads
//! there what was done.

mod accounts;
mod commands;
mod dpkg;
mod error;
mod real;
pub(crate) mod recording;

pub(crate) use error::{Call, SystemError};
pub(crate) use real::Real;
pub(crate) use recording::Recording;

use serde_json::Value;

use crate::units::UnitState;

/// The machine's systemd, Docker, packages and accounts; each call that fails says which
/// command, about what, and why ([`SystemError`]).
pub(crate) trait System: Send + Sync {
    /// Asks for the state of every unit in `units` at once, for [`System::unit_state`] to answer
    /// from until something is changed.
    fn prefetch(&self, units: &[&str]);
    /// The unit's state as systemd reports it.
    fn unit_state(&self, unit: &str) -> Result<UnitState, SystemError>;
    /// `systemctl VERB -- UNIT`.
    fn systemctl(&self, verb: &str, unit: &str) -> Result<(), SystemError>;
    /// Makes systemd read unit files again.
    fn daemon_reload(&self) -> Result<(), SystemError>;
    /// Whether a unit just started or restarted runs, after a moment (`units::settled`).
    fn settled(&self, unit: &str) -> Result<(), SystemError>;
    /// A timer's schedule checked by systemd's own calendar parser.
    fn check_schedule(&self, schedule: &str) -> Result<(), SystemError>;
    /// Starts `argv` as a transient unit of its own (`systemd-run`), detached from this session;
    /// `settings` are its `--` options before the command.
    fn run_detached(&self, settings: &[String], argv: &[String]) -> Result<(), SystemError>;

    /// `docker ARGS`.
    fn docker(&self, args: &[&str]) -> Result<(), SystemError>;
    /// What `docker container inspect` says of a container, `None` when there is none.
    fn inspect_container(&self, name: &str) -> Result<Option<Value>, SystemError>;
    /// The names of the containers carrying the label `label` (`docker ps --all --filter`).
    fn labelled_containers(&self, label: &str) -> Vec<String>;

    /// The version of `package` installed, `None` when it is not.
    fn installed(&self, package: &str) -> Result<Option<String>, SystemError>;
    /// The packages `apt-get remove PACKAGE` would remove, by name, itself included: apt also
    /// removes every installed package that depends on it (asked as a simulation, `-s`).
    fn removal_takes(&self, package: &str) -> Result<Vec<String>, SystemError>;
    /// `apt-get VERB ARG` (`install name[=version]`, `remove name`).
    fn apt_get(&self, verb: &str, arg: &str) -> Result<(), SystemError>;
    /// `apt-get update`: whether it exited 0, and its lines that warn or err.
    fn apt_update(&self) -> Result<(bool, Vec<String>), SystemError>;

    /// The line `getent DATABASE KEY` answers, `None` when there is no such name.
    fn getent(&self, database: &str, key: &str) -> Result<Option<String>, SystemError>;
    /// The supplementary groups of a user (`id -Gn` less its first), sorted.
    fn supplementary(&self, user: &str) -> Result<Vec<String>, SystemError>;
    /// One of `useradd`, `usermod`, `userdel`, `groupadd`, `groupdel` with `args`, then `--`
    /// and the account's name.
    fn change_account(&self, program: &str, args: &[String], name: &str)
    -> Result<(), SystemError>;
}
