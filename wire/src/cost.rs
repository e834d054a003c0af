//! What a change costs the units that read it, computed one way for the helper and the plan.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::*;

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
