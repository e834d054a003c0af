//! A directory with owner and mode. One the mesh made is removed when undeclared if it is empty,
//! and kept (and said so) while it holds anything: data outlives the module that declared it.

use std::collections::BTreeSet;
use std::path::Path;

use mesh_wire::{DirectorySpec, FileSpec, KeysSpec, Outcome, Resource, Spec, State};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, outcome};
use crate::adopt::Adopt;
use crate::confirm::Touches;
use crate::record::{DirectoryEntry, Entry, Paths, Record, owner_mode};

impl Run<'_> {
    pub(super) fn try_directory(
        &mut self,
        resource: &Resource,
        spec: &DirectorySpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let (path, (uid, gid)) = self.owned_path(&spec.path, &spec.owner, &spec.group)?;
        let found = self
            .paths
            .machine
            .dir_meta(path)
            .map_err(|e| e.to_string())?;
        let (made, taken_over) = match record.resources.get(&resource.id) {
            Some(Entry::Directory(d)) => (Some(d.created), d.original),
            _ => (None, None),
        };
        if made != Some(true) {
            refuse_found(resource, spec, found, taken_over, (uid, gid, spec.mode))?;
        }
        if made.is_none() {
            let entry = DirectoryEntry {
                path: spec.path.clone(),
                created: found.is_none(),
                original: found.filter(|f| *f != (uid, gid, spec.mode)),
                parents_made: self.paths.machine.missing_ancestors(path),
            };
            record
                .resources
                .insert(resource.id.clone(), Entry::Directory(entry));
            if self.applying() {
                record.save(self.paths).map_err(Failure::Record)?;
            }
        }
        match found {
            None => {
                if self.applying() {
                    // parents it makes (the node's root, the instance's folder) are recorded,
                    // and removed again with it when empty
                    self.paths
                        .machine
                        .make_dir(path)
                        .map_err(|e| e.to_string())?;
                    set(&self.paths.machine, path, uid, gid, spec.mode)?;
                }
                Ok(outcome(
                    &resource.id,
                    State::Created,
                    format!("{} {}", self.said("made", "make"), spec.path),
                ))
            }
            Some(f) if f == (uid, gid, spec.mode) => Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{} is as declared", spec.path),
            )),
            Some(_) => {
                if self.applying() {
                    set(&self.paths.machine, path, uid, gid, spec.mode)?;
                }
                Ok(outcome(
                    &resource.id,
                    State::Changed,
                    format!(
                        "{} owner and mode of {}",
                        self.said("set", "set"),
                        spec.path
                    ),
                ))
            }
        }
    }

    pub(super) fn give_back_directory(
        &mut self,
        entry: &DirectoryEntry,
    ) -> Result<String, Failure> {
        let path = Path::new(&entry.path);
        let Some(empty) = self
            .paths
            .machine
            .dir_is_empty(path, &self.gone)
            .map_err(|e| format!("{}: {e}", entry.path))?
        else {
            if entry.created {
                self.parents_made.extend(entry.parents_made.iter().cloned());
            }
            return Ok(format!("{} is already gone", entry.path));
        };
        if entry.created {
            if !empty {
                return Ok(format!("kept {}: it holds files", entry.path));
            }
            if self.applying() {
                self.paths
                    .machine
                    .remove_dir(path)
                    .map_err(|e| format!("{}: cannot remove it: {e}", entry.path))?;
            }
            self.gone.insert(path.to_path_buf());
            // the folders made to hold it (the instance's, in the default layout) go too once
            // every directory is given back (a sibling may still be in one), each only while
            // empty: never one the mesh did not make
            self.parents_made.extend(entry.parents_made.iter().cloned());
            return Ok(format!(
                "{} {}: the mesh made it and it is empty",
                self.said("removed", "remove"),
                entry.path
            ));
        }
        match entry.original {
            Some((uid, gid, mode)) => {
                if self.applying() {
                    set(&self.paths.machine, path, uid, gid, mode)?;
                }
                Ok(format!(
                    "{} owner and mode of {} ({}), as the host had them",
                    self.said("gave back", "give back"),
                    entry.path,
                    owner_mode((uid, gid, mode))
                ))
            }
            None => Ok(format!(
                "left {} as it is: it was there before the mesh",
                entry.path
            )),
        }
    }
}

impl Run<'_> {
    /// Removes the parents the mesh made for what was given back in this run, deepest first,
    /// each that is empty by then. One still holding something of the mesh's is handed to what
    /// it holds, to go with the last of it (given back as found, whichever resource made it).
    pub(super) fn remove_parents_made(&mut self, record: &mut Record) {
        let mut parents = std::mem::take(&mut self.parents_made);
        parents.sort_by_key(|p| std::cmp::Reverse(Path::new(p).components().count()));
        parents.dedup();
        let removed: BTreeSet<String> = self
            .outcomes
            .iter()
            .filter(|o| o.state == State::Removed)
            .map(|o| o.id.clone())
            .collect();
        for dir in parents {
            self.remove_empty_dirs(std::slice::from_ref(&dir));
            if self.gone.contains(Path::new(&dir)) {
                continue;
            }
            // a dry run hands it over too: what it promises of what stays is what a push's
            // record will say
            for (_, entry) in record
                .resources
                .iter_mut()
                .filter(|(id, _)| !removed.contains(*id))
            {
                entry.take_parent(&dir);
            }
        }
        // what a removal said it kept before its parents were judged may be gone by now
        for o in self
            .outcomes
            .iter_mut()
            .filter(|o| o.state == State::Removed)
        {
            if let Some(undo) = o.undo.as_mut() {
                let (gone, kept): (Vec<String>, Vec<String>) = std::mem::take(&mut undo.keeps)
                    .into_iter()
                    .partition(|p| self.gone.contains(Path::new(p)));
                undo.deletes.extend(gone);
                undo.keeps = kept;
            }
        }
    }

    /// A declared directory refused earlier in this run that holds the file or keys file `spec`
    /// writes: what would go in a directory the helper would not make its own (one it did not
    /// make, at `/etc/ssh`) is not written either.
    pub(super) fn refused_directory_above(&self, spec: &Spec) -> Option<String> {
        let target = match (spec.get::<FileSpec>(), spec.get::<KeysSpec>()) {
            (Some(f), _) => &f.path,
            (_, Some(k)) => &k.path,
            _ => return None,
        };
        self.outcomes
            .iter()
            .filter(|o| o.state == State::Failed)
            .filter_map(|o| o.id.split_once(":directory:").map(|(_, dir)| dir))
            .find(|dir| Path::new(target).starts_with(dir))
            .map(str::to_string)
    }

    /// A process that needs a directory refused in this run (one of its own assignment's, as a
    /// host directory requirement places it, or one of the operator's data it reaches) is held:
    /// neither started nor restarted (it would start without its data, or restart in a loop),
    /// what its files owe left owed for the run that has the directory. Its outcome, failed,
    /// names the directory.
    pub(super) fn hold_for_refused_requirement(
        &mut self,
        resource: &mesh_wire::Resource,
        record: &mut crate::record::Record,
    ) -> Option<mesh_wire::Outcome> {
        let process = resource.spec.get::<mesh_wire::ProcessSpec>()?;
        let dir = self
            .outcomes
            .iter()
            .filter(|o| o.state == State::Failed)
            .filter_map(|o| o.id.split_once(":directory:"))
            .find(|(instance, dir)| {
                *instance == resource.instance
                    || process
                        .access
                        .iter()
                        .any(|a| Path::new(&a.path).starts_with(dir))
            })
            .map(|(_, dir)| dir.to_string())?;
        let why = format!(
            "{}: held, neither started nor restarted: the directory {dir} it needs was refused \
             in this run; what its files owe stays owed",
            process.unit
        );
        self.hold_left(&process.unit, &why, record);
        Some(super::outcome(&resource.id, State::Failed, why))
    }

    /// Removes the directories the mesh made in `made` (deepest first) while each is empty by
    /// then, stopping at the first that holds anything; a dry run only counts them as gone.
    pub(super) fn remove_empty_dirs(&mut self, made: &[String]) {
        for dir in made {
            let path = Path::new(dir);
            if !matches!(
                self.paths.machine.dir_is_empty(path, &self.gone),
                Ok(Some(true))
            ) || (self.applying() && self.paths.machine.remove_dir(path).is_err())
            {
                break;
            }
            self.gone.insert(path.to_path_buf());
        }
    }
}

/// Refuses a directory `found` there that this resource did not make where it is not as
/// `declared`: an older helper changed the owner of one it did not make (`taken_over`, its
/// owner and mode before): it stays refused (so every plan says so) until undeclared, which
/// gives the owner and mode back.
fn refuse_found(
    resource: &Resource,
    spec: &DirectorySpec,
    found: Option<(u32, u32, u32)>,
    taken_over: Option<(u32, u32, u32)>,
    declared: (u32, u32, u32),
) -> Result<(), Failure> {
    let Some(f) = found else {
        return Ok(());
    };
    if let Some(original) = taken_over {
        return Err(format!(
            "refused: {} was not made by the mesh, and an older helper gave it to its owner {}; \
             take it off (place the directory elsewhere, or unassign {}) and the next push gives \
             back the owner and mode it had ({})",
            spec.path,
            owner_mode(f),
            resource.instance,
            owner_mode(original)
        )
        .into());
    }
    if f != declared {
        return Err(not_made(&spec.path, f, declared).into());
    }
    Ok(())
}

/// Why a directory that is there already and that this resource did not make keeps its owner
/// and mode: whoever declares it (a placement at `/etc/ssh`, another instance's directory) would
/// otherwise be handed what the machine keeps there. The operator hands one over by giving it
/// the declared owner and mode by hand; the helper never does it on the operator's word.
fn not_made(path: &str, (uid, gid, mode): (u32, u32, u32), declared: (u32, u32, u32)) -> String {
    format!(
        "refused: {path} is there already and the mesh did not make it: it is {}, and the mesh \
         never gives a directory it did not make another owner or mode (declared: {}); place the \
         directory where nothing is yet (the helper makes it), or give it that owner and mode \
         yourself to hand it over",
        owner_mode((uid, gid, mode)),
        owner_mode(declared)
    )
}

fn set(
    root: &crate::files::Root,
    path: &Path,
    uid: u32,
    gid: u32,
    mode: u32,
) -> Result<(), Failure> {
    root.set_dir_owner_mode(path, uid, gid, mode)
        .map_err(|e| e.to_string())
        .map_err(Failure::from)
}

impl Kind for DirectorySpec {
    const PHASE: Phase = Phase::Directories;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_directory(resource, self, record)
    }

    fn adopt(&self, adopt: &mut Adopt<'_>, id: &str) {
        if !adopt.paths.machine.real(Path::new(&self.path)).is_dir() {
            return;
        }
        let entry = Entry::Directory(DirectoryEntry {
            path: self.path.clone(),
            created: false,
            original: None,
            parents_made: Vec::new(),
        });
        adopt.take(id, entry, format!("{}: taken as it is", self.path));
        adopt.lost(format!(
            "{}: whether the mesh made it, and its owner and mode before, are lost; undeclaring \
             keeps it",
            self.path
        ));
    }

    fn touches(&self, _paths: &Paths) -> Touches {
        Touches {
            dirs: vec![self.path.clone()],
            ..Touches::default()
        }
    }
}

impl GiveBack for DirectoryEntry {
    const KIND: &'static str = "directory";
    const PHASE: Phase = Phase::Directories;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_directory(self)
    }

    fn touches(&self) -> Touches {
        Touches {
            dirs: vec![self.path.clone()],
            ..Touches::default()
        }
    }

    fn parents_made(&mut self) -> Option<(&str, &mut Vec<String>)> {
        self.created
            .then_some((self.path.as_str(), &mut self.parents_made))
    }
}

#[cfg(test)]
mod tests;
