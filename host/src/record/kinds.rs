//! The record's entries for the kinds an operator writes first: a symlink, a
//! sysctl, a timer, a group, a user, an apt repository.

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

/// An apt repository the mesh added: its sources file and its key file, each with what was at
/// its path before.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct AptRepositoryEntry {
    pub(crate) name: String,
    pub(crate) sources: String,
    /// A file that was at the sources file's path before, kept to be put back.
    pub(crate) sources_original: Option<Original>,
    pub(crate) key: String,
    /// A file that was at the key file's path before, kept to be put back.
    pub(crate) key_original: Option<Original>,
}

impl AptRepositoryEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut mesh_wire::Undo) {
        for (path, original) in [
            (&self.sources, &self.sources_original),
            (&self.key, &self.key_original),
        ] {
            if original.is_some() {
                undo.restores.push(path.clone());
            } else {
                undo.deletes.push(path.clone());
            }
        }
    }
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

impl super::Entry {
    /// Takes `dir`, a folder the mesh made for something given back that this still lies in,
    /// as one of its own parents made, if giving this back removes it (a file, directory or
    /// link the mesh made): the folder then goes, once empty, with the last of them.
    pub(crate) fn take_parent(&mut self, dir: &str) {
        let Some((path, parents)) = crate::apply::parents_made(self) else {
            return;
        };
        let (path, dir_path) = (std::path::Path::new(path), std::path::Path::new(dir));
        if path == dir_path || !path.starts_with(dir_path) || parents.iter().any(|p| p == dir) {
            return;
        }
        parents.push(dir.to_string());
        // deepest first, as they are removed
        parents.sort_by_key(|p| std::cmp::Reverse(std::path::Path::new(p).components().count()));
    }
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

/// A group the mesh declared: made by it, or found and left as found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GroupEntry {
    pub(crate) name: String,
    /// The mesh made it: removed when undeclared.
    pub(crate) made: bool,
}

/// A user the mesh declared, and what it changed on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct UserEntry {
    pub(crate) name: String,
    /// The mesh made it: removed when undeclared (`userdel`).
    pub(crate) made: bool,
    /// Its home goes with it (`userdel -r`), as last declared.
    #[serde(default)]
    pub(crate) remove_home: bool,
    /// Its shell before the mesh first changed it (a user found): given back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) found_shell: Option<String>,
    /// Its supplementary groups before the mesh first changed them (a user found): given back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) found_groups: Option<Vec<String>>,
    /// Its `authorized_keys`, once the mesh wrote it, and what was there before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) keys: Option<UserKeys>,
    /// The uid `useradd` gave the user the mesh made: only an account of that uid is the
    /// mesh's to remove (one made by hand or by a package after a failed or cut-short
    /// `useradd` is not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) uid: Option<u32>,
}

impl UserEntry {
    /// Whether the account found (`uid`) is the one the mesh made.
    pub(crate) fn made_as(&self, uid: u32) -> bool {
        self.made && self.uid == Some(uid)
    }
}

/// A user's `authorized_keys` the mesh wrote.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct UserKeys {
    pub(crate) path: String,
    /// The file found there, kept to be put back; none: it was not there.
    pub(crate) original: Option<Original>,
    /// The mesh made its `.ssh` directory: removed with it when empty.
    pub(crate) made_dir: Option<String>,
}

impl GroupEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut mesh_wire::Undo) {
        if self.made {
            undo.deletes.push(format!("group {}", self.name));
        }
    }
}

impl UserEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut mesh_wire::Undo) {
        if let Some(keys) = &self.keys {
            if keys.original.is_some() {
                undo.restores.push(keys.path.clone());
            } else {
                undo.deletes.push(keys.path.clone());
                undo.deletes_if_empty.extend(keys.made_dir.iter().cloned());
            }
        }
        if self.made {
            let home = if self.remove_home {
                "with its home"
            } else {
                "its home kept"
            };
            undo.deletes.push(format!("user {} ({home})", self.name));
            return;
        }
        let mut as_found = Vec::new();
        if let Some(shell) = &self.found_shell {
            as_found.push(format!("shell {shell}"));
        }
        if let Some(groups) = &self.found_groups {
            as_found.push(format!("groups [{}]", groups.join(",")));
        }
        if !as_found.is_empty() {
            undo.restores
                .push(format!("user {}: {}", self.name, as_found.join(", ")));
        }
    }
}
