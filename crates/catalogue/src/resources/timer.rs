//! A job the module runs on a schedule: a systemd timer and the oneshot service it starts, both
//! written by the helper (`<instance>.timer`, or `<instance>-<name>.timer`). Its definition, its
//! check and its description; the schedule (systemd's calendar syntax) is checked on the machine
//! with `systemd-analyze calendar` before anything is written.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ResourceDef, root};
use crate::CatalogueError;
use crate::scope::Reading;
use crate::template::Template;
use mesh_wire::unit;

/// A command run as `user` at each `schedule`.
#[derive(Debug, Clone)]
pub struct TimerDef {
    /// Names the units `<instance>-<name>`; none: `<instance>`.
    pub name: Option<String>,
    pub description: String,
    pub command: Vec<Template>,
    pub user: String,
    pub schedule: Template,
}

impl Definition for TimerDef {
    const KIND: &'static str = "timer";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.timer(i, value)
    }

    fn describe(&self) -> String {
        let unit = match &self.name {
            Some(n) => format!("<instance>-{n}.timer"),
            None => "<instance>.timer".to_string(),
        };
        let words: Vec<String> = self.command.iter().map(Template::source_text).collect();
        format!(
            "{unit}: runs {:?} as {} at {}; undeclared: stopped and its units removed",
            words.join(" "),
            self.user,
            self.schedule.source_text()
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimer {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
    description: Option<String>,
    command: Option<Vec<String>>,
    #[serde(default = "root")]
    user: String,
    schedule: Option<String>,
}

impl Parser<'_> {
    pub(super) fn timer(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        let t: RawTimer = self.raw(i, value)?;
        let (description, words) =
            self.described_command(i, t.name.as_deref(), t.description, t.command)?;
        self.unit_rule(
            i,
            "description",
            unit::check_line("description", &description),
        )?;
        let (command, _, _) =
            self.command_and_environment(i, &words, &BTreeMap::new(), None, true)?;
        self.unit_rule(i, "user", unit::check_user(&t.user))?;
        let schedule_text = t.schedule.filter(|s| !s.trim().is_empty()).ok_or_else(|| {
            self.invalid(
                &at("schedule"),
                "missing: when it runs, in systemd's calendar syntax (\"daily\", \
                     \"*-*-* 03:00:00\")"
                    .into(),
            )
        })?;
        self.unit_rule(i, "schedule", unit::check_line("schedule", &schedule_text))?;
        let schedule = self.template(i, "schedule", &schedule_text, Reading::Plain)?;
        Ok(ResourceDef::from(TimerDef {
            name: t.name,
            description,
            command,
            user: t.user,
            schedule,
        }))
    }
}
