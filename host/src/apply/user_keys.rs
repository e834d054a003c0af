//! A user's `HOME/.ssh/authorized_keys`, written whole from its declared keys: the file mode
//! 0600 and its `.ssh` 0700, both the user's. What was there is kept (as a file resource's
//! original is) the first time the mesh writes it, and given back when the user is undeclared.
//! The home is the one the machine gives the user, held to the machine path rule, and reached
//! without following a link (`files`): a user cannot point the helper elsewhere.

use super::Failure;
use std::path::Path;

use mesh_wire::path::{self, Place};
use mesh_wire::{Resource, UserSpec};

use super::Run;
use super::accounts::Passwd;
use crate::files;
use crate::record::{FileEntry, Readers, Record, UserEntry, UserKeys};

/// Refuses a place a user's keys may not go: a home that fails the path rule, is missing, or
/// is not a directory the user owns (never root's or a system directory). Asked before anything
/// of the user changes, so a refusal changes nothing.
pub(super) fn keys_place(root: &files::Root, spec: &UserSpec, p: &Passwd) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt as _;
    path::check(&p.home, Place::Machine)
        .map_err(|e| format!("user {}'s home {}: refused: {e}", spec.name, p.home))?;
    match std::fs::symlink_metadata(root.real(Path::new(&p.home))) {
        Ok(m) if m.is_dir() && m.uid() == p.uid => Ok(()),
        Ok(m) => Err(format!(
            "user {}'s home {} is not a directory of its own (owned by uid {}): its keys are \
             not written there",
            spec.name,
            p.home,
            m.uid()
        )
        .into()),
        Err(e) => Err(format!(
            "user {}'s home {}: {e}: its keys have nowhere to go",
            spec.name, p.home
        )
        .into()),
    }
}

impl Run<'_> {
    /// Writes the user's keys if they differ; what was done (or would be), if anything.
    pub(super) fn user_keys(
        &mut self,
        resource: &Resource,
        spec: &UserSpec,
        p: &Passwd,
        entry: &mut UserEntry,
        record: &mut Record,
    ) -> Result<Option<String>, Failure> {
        let Some(text) = &spec.authorized_keys else {
            // no longer the mesh's: what was there comes back now, not only when undeclared
            let Some(keys) = entry.keys.clone() else {
                return Ok(None);
            };
            let said = self.give_back_user_keys(&keys)?;
            if self.applying() {
                entry.keys = None;
                self.save_user(resource, entry, record)?;
            }
            return Ok(Some(said));
        };
        let mut bytes = text.clone().into_bytes();
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        keys_place(&self.paths.machine, spec, p)?;
        let dir = Path::new(&p.home).join(".ssh");
        let file = dir.join("authorized_keys");
        let shown = file.display().to_string();
        let found = self.paths.machine.read(&file).map_err(|e| e.to_string())?;
        if found
            .as_ref()
            .is_some_and(|f| f.bytes == bytes && (f.uid, f.gid, f.mode) == (p.uid, p.gid, 0o600))
        {
            return Ok(None);
        }
        if !self.applying() {
            return Ok(Some(format!("would write {shown}")));
        }
        if entry.keys.is_none() {
            let original = match &found {
                Some(f) => Some(self.keep_original(&resource.id, f)?),
                None => None,
            };
            entry.keys = Some(UserKeys {
                path: shown.clone(),
                original,
                made_dir: None,
            });
            self.save_user(resource, entry, record)?;
        }
        if self
            .paths
            .machine
            .make_dir_for(&dir, p.uid, p.gid, 0o700)
            .map_err(|e| e.to_string())?
            && let Some(keys) = entry.keys.as_mut()
        {
            keys.made_dir = Some(dir.display().to_string());
            self.save_user(resource, entry, record)?;
        }
        self.paths
            .machine
            .write_atomically(&file, &bytes, Some((p.uid, p.gid)), 0o600)
            .map_err(|e| e.to_string())?;
        Ok(Some(format!("wrote {shown}")))
    }

    /// Puts back the `authorized_keys` found, or removes the one the mesh made (and its `.ssh`
    /// if the mesh made that and it is empty).
    pub(super) fn give_back_user_keys(&mut self, keys: &UserKeys) -> Result<String, Failure> {
        self.give_back_file(&FileEntry {
            path: keys.path.clone(),
            created: keys.original.is_none(),
            original: keys.original.clone(),
            original_lost: false,
            written: None,
            readers: Readers::default(),
            parents_made: keys.made_dir.iter().cloned().collect(),
        })
    }
}
