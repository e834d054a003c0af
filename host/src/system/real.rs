//! The machine itself: systemd through `systemctl` (`units`), packages through dpkg and
//! `apt-get` (`dpkg`), Docker, the accounts and transient units through their commands
//! (`commands`).

use serde_json::Value;

use super::{System, SystemError};
use super::{commands, dpkg};
use crate::units::{self, UnitState};

/// The machine the helper runs on.
pub(crate) struct Real;

impl System for Real {
    fn prefetch(&self, names: &[&str]) {
        units::prefetch(names);
    }
    fn unit_state(&self, unit: &str) -> Result<UnitState, SystemError> {
        units::state(unit)
    }
    fn systemctl(&self, verb: &str, unit: &str) -> Result<(), SystemError> {
        units::systemctl(verb, unit)
    }
    fn daemon_reload(&self) -> Result<(), SystemError> {
        units::daemon_reload()
    }
    fn settled(&self, unit: &str) -> Result<(), SystemError> {
        units::settled(unit)
    }
    fn check_schedule(&self, schedule: &str) -> Result<(), SystemError> {
        commands::check_schedule(schedule)
    }
    fn run_detached(&self, settings: &[String], argv: &[String]) -> Result<(), SystemError> {
        commands::run_detached(settings, argv)
    }
    fn docker(&self, args: &[&str]) -> Result<(), SystemError> {
        commands::docker(args)
    }
    fn inspect_container(&self, name: &str) -> Result<Option<Value>, SystemError> {
        commands::inspect(name)
    }
    fn labelled_containers(&self, label: &str) -> Vec<String> {
        commands::labelled(label)
    }
    fn installed(&self, package: &str) -> Result<Option<String>, SystemError> {
        dpkg::installed(package)
    }
    fn removal_takes(&self, package: &str) -> Result<Vec<String>, SystemError> {
        dpkg::removal_takes(package)
    }
    fn apt_get(&self, verb: &str, arg: &str) -> Result<(), SystemError> {
        dpkg::apt(verb, arg)
    }
    fn apt_update(&self) -> Result<(bool, Vec<String>), SystemError> {
        dpkg::apt_get_update()
    }
    fn getent(&self, database: &str, key: &str) -> Result<Option<String>, SystemError> {
        commands::getent(database, key)
    }
    fn supplementary(&self, user: &str) -> Result<Vec<String>, SystemError> {
        commands::supplementary(user)
    }
    fn change_account(
        &self,
        program: &str,
        args: &[String],
        name: &str,
    ) -> Result<(), SystemError> {
        commands::change_account(program, args, name)
    }
}
