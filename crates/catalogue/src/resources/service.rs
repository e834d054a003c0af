//! An existing unit and the state it should be in: its definition and its check.

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ReadyDef, ResourceDef, valid_unit};
use crate::scope::Reading;
use crate::{CatalogueError, Template};
use mesh_wire::OnRemoval;

/// A unit the module wants in a state.
#[derive(Debug, Clone)]
pub struct ServiceDef {
    /// The unit's name, e.g. `docker.service` or `${me.instance}.timer`; a name that reads
    /// settings or requirements is checked again once rendered.
    pub unit: Template,
    /// `Some(true)` running, `Some(false)` stopped, `None` left as it is.
    pub running: Option<bool>,
    /// Enabled at boot, disabled, or left as it is.
    pub enabled: Option<bool>,
    /// A change to it can cut the operator off: it is reverted unless confirmed over a new
    /// connection (`"confirm": true`).
    pub confirm: bool,
    /// What undeclaring it does to the unit (`"on-removal"`): given back as found, or left
    /// running.
    pub on_removal: OnRemoval,
    /// What says it serves, probed after every start, restart or reload the helper made.
    pub ready: Option<ReadyDef>,
}

impl Definition for ServiceDef {
    const KIND: &'static str = "service";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.service(i, value)
    }

    fn confirm(&self) -> bool {
        self.confirm
    }

    fn describe(&self) -> String {
        let mut want: Vec<String> = mesh_wire::wanted_state(self.running, self.enabled)
            .into_iter()
            .map(String::from)
            .collect();
        if !self.on_removal.is_give_back() {
            want.push(format!("on removal: {}", self.on_removal.name()));
        }
        let ready = super::ready_when(self.ready.as_ref());
        if want.is_empty() {
            format!("{}{ready}", self.unit.source_text())
        } else {
            format!("{} ({}){ready}", self.unit.source_text(), want.join(", "))
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawService {
    #[allow(dead_code)]
    kind: String,
    unit: Option<String>,
    state: Option<String>,
    enabled: Option<bool>,
    /// A change to it is reverted unless the operator confirms it over a new connection.
    #[serde(default)]
    confirm: bool,
    /// What undeclaring it does to the unit.
    #[serde(rename = "on-removal")]
    on_removal: Option<String>,
    /// A probe that says it serves.
    ready: Option<Value>,
}

impl Parser<'_> {
    pub(super) fn service(
        &mut self,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        let at = |field: &str| format!("resources[{i}].{field}");
        let sv: RawService = self.raw(i, value)?;
        let text = sv
            .unit
            .ok_or_else(|| self.invalid(&at("unit"), "missing".into()))?;
        // a name read from settings or requirements is known only once rendered, and checked
        // then (`resolve::render`); a literal one is checked here
        let unit = self.template(i, "unit", &text, Reading::Plain)?;
        if unit.references().is_empty() && !valid_unit(&text) {
            return Err(self.invalid(
                &at("unit"),
                format!("{text:?} is not a systemd unit name like \"ssh.service\""),
            ));
        }
        if self.units.contains(&text) {
            return Err(self.invalid(&at("unit"), format!("{text} is declared twice")));
        }
        self.units.push(text);
        let running = match sv.state.as_deref() {
            None => None,
            Some("running") => Some(true),
            Some("stopped") => Some(false),
            Some(other) => {
                return Err(self.invalid(
                    &at("state"),
                    format!("{other:?} is not a state; use running or stopped"),
                ));
            }
        };
        let on_removal = match sv.on_removal.as_deref() {
            None => OnRemoval::default(),
            Some(name) => OnRemoval::parse(name).ok_or_else(|| {
                self.invalid(
                    &at("on-removal"),
                    format!(
                        "{name:?} is not what a removal can do; use one of {}",
                        OnRemoval::NAMES
                    ),
                )
            })?,
        };
        if sv.ready.is_some() && running == Some(false) {
            return Err(self.invalid(
                &at("ready"),
                "a unit declared stopped serves nothing: drop \"ready\" or declare it running"
                    .into(),
            ));
        }
        let ready = self.ready(i, sv.ready)?;
        Ok(ResourceDef::from(ServiceDef {
            unit,
            running,
            enabled: sv.enabled,
            confirm: sv.confirm,
            on_removal,
            ready,
        }))
    }
}
