//! The machine itself: systemd through `systemctl` (`units`), packages through dpkg and
//! `apt-get` (`dpkg`), Docker, the accounts and transient units through their commands
//! (`commands`).

use serde_json::Value;

use super::System;
use super::{commands, dpkg};
use crate::units::{self, UnitState};

/// The machine the helper runs on.
pub(crate) struct Real;

impl System for Real {
    fn prefetch(&self, names: &[&str]) {
        units::prefetch(names);
    }
    fn unit_state(&self, unit: &str) -> Result<UnitState, String> {
        units::state(unit)
    }
    fn systemctl(&self, verb: &str, unit: &str) -> Result<(), String> {
        units::systemctl(verb, unit)
    }
    fn daemon_reload(&self) -> Result<(), String> {
        units::daemon_reload()
    }
    fn settled(&self, unit: &str) -> Result<(), String> {
        units::settled(unit)
    }
    fn check_schedule(&self, schedule: &str) -> Result<(), String> {
        commands::check_schedule(schedule)
    }
    fn run_detached(&self, settings: &[String], argv: &[String]) -> Result<(), String> {
        commands::run_detached(settings, argv)
    }
    fn docker(&self, args: &[&str]) -> Result<(), String> {
        commands::docker(args)
    }
    fn inspect_container(&self, name: &str) -> Result<Option<Value>, String> {
        commands::inspect(name)
    }
    fn labelled_containers(&self, label: &str) -> Vec<String> {
        commands::labelled(label)
    }
    fn installed(&self, package: &str) -> Result<Option<String>, String> {
        dpkg::installed(package)
    }
    fn apt_get(&self, verb: &str, arg: &str) -> Result<(), String> {
        dpkg::apt(verb, arg)
    }
    fn apt_update(&self) -> Result<(bool, Vec<String>), String> {
        dpkg::apt_get_update()
    }
    fn getent(&self, database: &str, key: &str) -> Result<Option<String>, String> {
        commands::getent(database, key)
    }
    fn supplementary(&self, user: &str) -> Result<Vec<String>, String> {
        commands::supplementary(user)
    }
    fn change_account(&self, program: &str, args: &[String], name: &str) -> Result<(), String> {
        commands::change_account(program, args, name)
    }
}
