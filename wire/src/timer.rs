//! A job the mesh runs on a schedule: a systemd `.timer` and the oneshot `.service` it starts,
//! both written by the helper.

use serde::{Deserialize, Serialize};

use crate::unit::{UnitError, check_description_and_command, check_line, check_user};

/// `<name>.timer` starting `<name>.service`, which runs `command` as `user` at each `schedule`
/// (systemd's calendar syntax, `OnCalendar=`: `daily`, `*-*-* 03:00:00`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerSpec {
    /// The units' name without their suffix: `<instance>` or `<instance>-<name>`.
    pub name: String,
    /// One sentence for the units' Description.
    pub description: String,
    /// The command and its arguments (written to ExecStart quoted, never through a shell).
    pub command: Vec<String>,
    /// The user it runs as (a name or a uid).
    pub user: String,
    /// When it runs, in systemd's calendar syntax.
    pub schedule: String,
}

impl TimerSpec {
    /// Every value that reaches its unit files, checked.
    pub fn check(&self) -> Result<(), UnitError> {
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_@".contains(c))
        {
            return Err(UnitError::UnitName {
                name: self.name.clone(),
            });
        }
        check_description_and_command(&self.description, &self.command)?;
        check_user(&self.user)?;
        if self.schedule.trim().is_empty() {
            return Err(UnitError::Empty {
                field: "schedule".into(),
            });
        }
        check_line("schedule", &self.schedule)
    }

    /// The timer's unit name.
    pub fn timer_unit(&self) -> String {
        format!("{}.timer", self.name)
    }

    /// The unit name of the service it starts.
    pub fn service_unit(&self) -> String {
        format!("{}.service", self.name)
    }
}

impl crate::SpecKind for TimerSpec {
    const KIND: &'static str = "timer";

    fn at(&self) -> &str {
        &self.name
    }

    fn check_unit(&self) -> Result<(), UnitError> {
        self.check()
    }

    // its service is a unit too
    fn single_as(&self) -> Option<&'static str> {
        Some("service")
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        crate::named(&[
            ("command", old.command != self.command),
            ("user", old.user != self.user),
            ("schedule", old.schedule != self.schedule),
            ("description", old.description != self.description),
        ])
    }

    fn plan_text(&self) -> String {
        format!(
            "command: {}\nuser: {}\nschedule: {}\n",
            serde_json::to_string(&self.command).unwrap_or_default(),
            self.user,
            self.schedule
        )
    }

    fn removal(&self) -> String {
        format!(
            "{}: stopped, disabled, its timer and service unit files removed",
            self.timer_unit()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timer(name: &str, schedule: &str) -> TimerSpec {
        TimerSpec {
            name: name.into(),
            description: "d".into(),
            command: vec!["/bin/true".into()],
            user: "root".into(),
            schedule: schedule.into(),
        }
    }

    #[test]
    fn a_timers_name_and_schedule_cannot_reach_past_its_unit_files() {
        assert!(timer("job-nightly", "*-*-* 03:00:00").check().is_ok());
        assert_eq!(timer("job", "daily").timer_unit(), "job.timer");
        for name in ["../../etc/passwd", "a/b", "", "a.b"] {
            assert_eq!(
                timer(name, "daily").check(),
                Err(UnitError::UnitName { name: name.into() })
            );
        }
        assert!(matches!(
            timer("job", "daily\n[Service]").check(),
            Err(UnitError::Control { .. })
        ));
        assert!(matches!(
            timer("job", " ").check(),
            Err(UnitError::Empty { .. })
        ));
    }
}
