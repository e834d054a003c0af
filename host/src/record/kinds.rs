//! The record's entries for the kinds an operator writes first (issue 23): a symlink, a
//! sysctl, a timer.

use serde::{Deserialize, Serialize};

use super::Original;

/// A timer and its service the mesh wrote.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TimerEntry {
    pub(crate) timer_unit: String,
    pub(crate) timer_file: String,
    pub(crate) service_file: String,
    /// sha256 of both unit files as last written: a change rewrites them and restarts the timer.
    pub(crate) digest: Option<String>,
}

/// A kernel setting the mesh set.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SysctlEntry {
    pub(crate) name: String,
    /// Its value before the mesh set it, as the kernel printed it: written back when undeclared.
    pub(crate) found: String,
    /// The drop-in the mesh writes.
    pub(crate) drop_in: String,
    /// A file that was at the drop-in's path before, kept to be put back.
    pub(crate) drop_in_original: Option<Original>,
}

/// A symbolic link the mesh made, and what was at its path before.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SymlinkEntry {
    pub(crate) path: String,
    /// What undeclaring it puts back.
    pub(crate) found: FoundAtLink,
    /// Directories the mesh made to hold it, deepest first: removed with it when empty.
    #[serde(default)]
    pub(crate) parents_made: Vec<String>,
}

/// What was at a symlink's path before the mesh made it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum FoundAtLink {
    Nothing,
    /// Another link, pointing at this target.
    Link(String),
    /// A file, kept like a file resource's original.
    File(Original),
}

impl TimerEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut mesh_wire::Undo) {
        undo.stops.push(self.timer_unit.clone());
        undo.deletes.push(self.timer_file.clone());
        undo.deletes.push(self.service_file.clone());
    }
}

impl SysctlEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut mesh_wire::Undo) {
        undo.restores
            .push(format!("{} = {}", self.name, self.found));
        if self.drop_in_original.is_some() {
            undo.restores.push(self.drop_in.clone());
        } else {
            undo.deletes.push(self.drop_in.clone());
        }
    }
}

impl SymlinkEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut mesh_wire::Undo) {
        match &self.found {
            FoundAtLink::Nothing => {
                undo.deletes.push(self.path.clone());
                undo.deletes_if_empty
                    .extend(self.parents_made.iter().cloned());
            }
            FoundAtLink::Link(_) | FoundAtLink::File(_) => undo.restores.push(self.path.clone()),
        }
    }
}
