//! The record's entries for what the mesh writes on the machine's file system: a whole file,
//! keys in a shared file, a directory; and what a change to them costs their readers.

use std::collections::BTreeMap;

use mesh_wire::{Cost, SettingUse, Undo};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A file the mesh wrote.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    pub(crate) path: String,
    /// The file did not exist before the mesh: undeclaring removes it.
    pub(crate) created: bool,
    /// The file that was there before, kept to be put back.
    pub(crate) original: Option<Original>,
    /// The file was there before the mesh, but what it was is lost (adopted after the record was
    /// lost): undeclaring leaves it as it is and says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) original_lost: bool,
    /// What the mesh last wrote, if it got that far.
    pub(crate) written: Option<Written>,
    /// The units that read it and what a change costs them: giving it back is a change too.
    #[serde(default)]
    pub(crate) readers: Readers,
    /// Directories the mesh made to hold it, deepest first: removed with it when empty.
    #[serde(default)]
    pub(crate) parents_made: Vec<String>,
}

impl FileEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut Undo) {
        if self.original_lost {
            // left as it is: nothing to promise
        } else if self.original.is_some() {
            undo.restores.push(self.path.clone());
            self.readers.pay_into(undo);
        } else if self.created {
            undo.deletes.push(self.path.clone());
            undo.deletes_if_empty
                .extend(self.parents_made.iter().cloned());
            self.readers.pay_into(undo);
        }
    }
}

/// The units that read a file and what a change to it costs them, as last declared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Readers {
    pub(crate) units: Vec<String>,
    pub(crate) cost: Cost,
}

impl Readers {
    /// What giving the file back costs its readers, named in `undo`.
    fn pay_into(&self, undo: &mut Undo) {
        let list = match self.cost {
            Cost::None => return,
            Cost::Reload => &mut undo.reloads,
            Cost::Restart => &mut undo.restarts,
        };
        list.extend(self.units.iter().cloned());
    }
}

/// A kept original: its bytes are in `originals/<blob>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Original {
    pub(crate) blob: String,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) mode: u32,
}

/// What the mesh last wrote into a file, and from what.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Written {
    pub(crate) sha256: String,
    pub(crate) source: String,
    pub(crate) settings: BTreeMap<String, SettingUse>,
}

/// Keys the mesh wrote into a shared JSON file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct KeysEntry {
    pub(crate) path: String,
    /// The file did not exist before the mesh: once every owned key is given back and nothing
    /// else is in it, it is removed.
    pub(crate) created: bool,
    /// Every key the mesh has taken, by its dotted path.
    pub(crate) owned: BTreeMap<String, OwnedKey>,
    /// What the keys were last made from, for the cost of the next change.
    pub(crate) made_from: Option<MadeFrom>,
    /// The units that read the file and what a change costs them.
    #[serde(default)]
    pub(crate) readers: Readers,
    /// What the keys were before the mesh is lost (adopted after the record was lost):
    /// undeclaring leaves them as they are and says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) originals_lost: bool,
}

impl KeysEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut Undo) {
        if self.originals_lost {
            // left as they are: nothing to promise
        } else if self.created {
            // the keys go back; the file goes only if nothing else was put in it
            undo.deletes_if_empty.push(self.path.clone());
            self.readers.pay_into(undo);
        } else {
            undo.restores.push(self.path.clone());
            self.readers.pay_into(undo);
        }
    }
}

/// One key the mesh took in a shared file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OwnedKey {
    /// Its path of object keys from the top.
    pub(crate) path: Vec<String>,
    /// What was there before the mesh; `None`: the key was absent.
    pub(crate) original: Option<Value>,
    /// How many of its parent objects the mesh had to create (removed again when empty).
    pub(crate) parents_made: usize,
    /// What the mesh last put there, once it has.
    pub(crate) written: Option<Value>,
}

/// What a keys resource was last made from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MadeFrom {
    pub(crate) source: String,
    pub(crate) settings: BTreeMap<String, SettingUse>,
}

/// A directory the mesh made, or whose owner and mode it set.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DirectoryEntry {
    pub(crate) path: String,
    /// The mesh made it: removed when undeclared, if empty.
    pub(crate) created: bool,
    /// Owner, group and mode it had before the mesh set them (a directory the mesh did not make).
    pub(crate) original: Option<(u32, u32, u32)>,
    /// Parents the mesh made for it, deepest first: removed after it when empty.
    #[serde(default)]
    pub(crate) parents_made: Vec<String>,
}

impl DirectoryEntry {
    /// What undeclaring it does, for the plan.
    pub(crate) fn undo_into(&self, undo: &mut Undo) {
        if self.created {
            // data outlives the module: only the helper, at that moment, can tell
            undo.deletes_if_empty.push(self.path.clone());
            undo.deletes_if_empty
                .extend(self.parents_made.iter().cloned());
        } else if let Some(found) = self.original {
            undo.owners
                .push(format!("{} ({})", self.path, super::owner_mode(found)));
        }
    }
}
