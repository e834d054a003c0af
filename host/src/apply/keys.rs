//! Keys in a shared JSON file (ADR 102: the mesh writes into a shared file, never over it).
//!
//! Only the keys a module declares are touched; every other key keeps its value and its place.
//! The first time the mesh takes a key, what it replaced (or that it was absent) goes into the
//! record before the file changes, so undeclaring gives exactly that back.

use std::path::Path;

use mesh_wire::{Cost, Key, KeysSpec, Outcome, Resource, State, change_cost};
use serde_json::{Map, Value};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, on_disk, outcome};
use crate::adopt::Adopt;
use crate::confirm::Touches;
use crate::files;
use crate::owners;
use crate::record::{Entry, KeysEntry, MadeFrom, OwnedKey, Paths, Readers, Record};

mod doc;

use doc::{get, give_back, missing_parents, parse, put, render};

/// A keys file's owner, group and mode as found, and as it is to have them.
type Meta = ((u32, u32, u32), (u32, u32, u32));

impl Run<'_> {
    pub(super) fn try_keys(
        &mut self,
        resource: &Resource,
        spec: &KeysSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let path = Path::new(&spec.path);
        if !path.is_absolute() {
            return Err("not an absolute path".into());
        }
        let found = self.paths.machine.read(path).map_err(|e| e.to_string())?;
        let Change {
            doc,
            mut entry,
            drifted,
            set,
            dropped,
        } = change_of(
            found.as_ref(),
            keys_entry(record, resource, spec, found.is_none()),
            spec,
        )?;
        let made_from = MadeFrom {
            source: spec.costing.source.clone(),
            settings: spec.costing.settings.clone(),
        };
        let wanted_meta = self.keys_meta(found.as_ref(), &entry, spec)?;
        let other_meta = wanted_meta
            .and_then(|(found, want)| on_disk::other_owner_or_mode(&spec.path, found, want));
        if set.is_empty() && dropped.is_empty() && other_meta.is_none() {
            if self.applying() {
                entry.made_from = Some(made_from);
                record
                    .resources
                    .insert(resource.id.clone(), Entry::Keys(entry));
            }
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{}: {} as declared", spec.path, declared(spec).join(", ")),
            ));
        }

        // an owner or mode set again changes nothing a unit reads
        let cost = if set.is_empty() && dropped.is_empty() {
            Cost::None
        } else {
            let previous = entry
                .made_from
                .as_ref()
                .map(|m| (m.source.as_str(), &m.settings));
            change_cost(previous, &spec.costing, drifted)
        };
        if self.applying() {
            // The record says what each key replaced, and what the change owes, before the file
            // changes.
            record
                .resources
                .insert(resource.id.clone(), Entry::Keys(entry.clone()));
        }
        self.owe_durably(record, &spec.costing.units, cost, &resource.id)?;
        if self.applying() {
            record.save(self.paths).map_err(Failure::Record)?;
            // only an owner or mode set again: the keys are as declared
            let doc = (!set.is_empty() || !dropped.is_empty()).then_some(&doc);
            self.write_keys(spec, found.as_ref(), wanted_meta, doc)?;
            entry.made_from = Some(made_from);
            record
                .resources
                .insert(resource.id.clone(), Entry::Keys(entry));
        }
        let state = if found.is_none() {
            State::Created
        } else {
            State::Changed
        };
        let detail = self.keys_said(spec, &set, &dropped, other_meta.as_deref(), drifted);
        Ok(outcome(&resource.id, state, detail))
    }

    /// The owner and mode a keys file found has, and those it is to have: a file the mesh made
    /// keeps the owner and mode it was made with; a shared file the host had keeps its own.
    fn keys_meta(
        &self,
        found: Option<&files::Found>,
        entry: &KeysEntry,
        spec: &KeysSpec,
    ) -> Result<Option<Meta>, Failure> {
        match found {
            Some(f) if entry.created => {
                let (uid, gid) = owners::ids(self.paths.system.as_ref(), &spec.owner, &spec.group)?;
                Ok(Some(((f.uid, f.gid, f.mode), (uid, gid, spec.mode))))
            }
            _ => Ok(None),
        }
    }

    /// Writes `doc` into the keys file, or, without one, sets only its owner and mode: those
    /// `wanted` ([`Run::keys_meta`]), else those found, else those declared.
    fn write_keys(
        &self,
        spec: &KeysSpec,
        found: Option<&files::Found>,
        wanted: Option<Meta>,
        doc: Option<&Map<String, Value>>,
    ) -> Result<(), Failure> {
        let path = Path::new(&spec.path);
        let (owner, mode) = match (found, wanted) {
            (Some(_), Some((_, (uid, gid, mode)))) => ((uid, gid), mode),
            (Some(f), None) => ((f.uid, f.gid), f.mode),
            (None, _) => (
                owners::ids(self.paths.system.as_ref(), &spec.owner, &spec.group)?,
                spec.mode,
            ),
        };
        match doc {
            None => self
                .paths
                .machine
                .set_owner_mode(path, owner.0, owner.1, mode),
            Some(doc) => self
                .paths
                .machine
                .write_atomically(path, &render(doc), Some(owner), mode),
        }
        .map_err(|e| e.to_string().into())
    }

    /// What a change of keys did: the keys set, the keys given back, an owner and mode set,
    /// and whether some had been changed on the machine.
    fn keys_said(
        &self,
        spec: &KeysSpec,
        set: &[String],
        dropped: &[String],
        other_meta: Option<&str>,
        drifted: bool,
    ) -> String {
        let mut what = Vec::new();
        if !set.is_empty() {
            what.push(format!("{} {}", self.said("set", "set"), set.join(", ")));
        }
        if !dropped.is_empty() {
            what.push(format!(
                "{} {}",
                self.said("gave back", "give back"),
                dropped.join(", ")
            ));
        }
        if let Some(other) = other_meta {
            what.push(format!(
                "{} owner and mode ({other})",
                self.said("set", "set")
            ));
        }
        let drifted = if drifted {
            ", some had been changed on the machine"
        } else {
            ""
        };
        format!(
            "{} in {}{drifted} (other keys left as they are)",
            what.join("; "),
            spec.path
        )
    }

    pub(super) fn give_back_keys(&mut self, entry: &KeysEntry) -> Result<String, Failure> {
        if entry.originals_lost {
            return Ok(format!(
                "left the keys in {} as they are: the values they had before the mesh were lost \
                 with the helper's record, so they cannot be given back",
                entry.path
            ));
        }
        let path = Path::new(&entry.path);
        let names = entry.owned.keys().cloned().collect::<Vec<_>>().join(", ");
        let Some(found) = self
            .paths
            .machine
            .read(path)
            .map_err(|e| format!("{}: {e}", entry.path))?
        else {
            return Ok(format!(
                "{} is gone from the machine: nothing to give back",
                entry.path
            ));
        };
        let mut doc = parse(&found.bytes).map_err(|e| format!("{}: {e}", entry.path))?;
        for owned in entry.owned.values() {
            give_back(&mut doc, owned);
        }
        let remove_file = entry.created && doc.is_empty();
        if remove_file {
            self.gone.insert(path.to_path_buf());
        }
        if self.applying() {
            if remove_file {
                self.paths
                    .machine
                    .remove(path)
                    .map_err(|e| format!("{}: cannot remove it: {e}", entry.path))?;
            } else {
                self.paths
                    .machine
                    .write_atomically(
                        path,
                        &render(&doc),
                        Some((found.uid, found.gid)),
                        found.mode,
                    )
                    .map_err(|e| format!("{}: cannot write it: {e}", entry.path))?;
            }
        }
        Ok(if remove_file {
            format!(
                "{} {}: the mesh made it and nothing else is in it",
                self.said("removed", "remove"),
                entry.path
            )
        } else {
            format!(
                "{} {names} in {}: previous values restored, keys that were absent removed, other keys untouched",
                self.said("gave back", "give back"),
                entry.path
            )
        })
    }
}

/// The record's entry for the keys; a new one (`created`: the file is not there) the first
/// time.
fn keys_entry(record: &Record, resource: &Resource, spec: &KeysSpec, created: bool) -> KeysEntry {
    match record.resources.get(&resource.id) {
        Some(Entry::Keys(e)) => e.clone(),
        _ => KeysEntry {
            path: spec.path.clone(),
            created,
            owned: Default::default(),
            made_from: None,
            readers: Readers::default(),
            originals_lost: false,
        },
    }
}

/// A keys file as it is to be, and what moves in it.
struct Change {
    doc: Map<String, Value>,
    /// The record's entry, every declared key taken and the readers as declared.
    entry: KeysEntry,
    /// A key someone changed on the machine since the mesh wrote it: rewriting it costs the
    /// resource's declared cost, not only what moved in settings.
    drifted: bool,
    /// The keys set, dotted.
    set: Vec<String>,
    /// The keys given back, no longer declared, dotted.
    dropped: Vec<String>,
}

/// What putting `spec`'s keys into the file `found` changes, from its record's `entry`.
fn change_of(
    found: Option<&files::Found>,
    mut entry: KeysEntry,
    spec: &KeysSpec,
) -> Result<Change, Failure> {
    let mut doc = match found {
        Some(f) => parse(&f.bytes)?,
        None => Map::new(),
    };
    let drifted = entry
        .owned
        .values()
        .any(|k| k.written.is_some() && k.written.as_ref() != get(&doc, &k.path));
    let set = set_keys(&mut doc, &mut entry, spec)?;
    let dropped = drop_undeclared(&mut doc, &mut entry, &declared(spec));
    entry.readers = Readers {
        units: spec.costing.units.clone(),
        cost: spec.costing.cost,
    };
    Ok(Change {
        doc,
        entry,
        drifted,
        set,
        dropped,
    })
}

/// The keys `spec` declares, dotted.
fn declared(spec: &KeysSpec) -> Vec<String> {
    spec.keys.iter().map(Key::dotted).collect()
}

/// Puts every declared key in `doc`, taking each the first time (what it replaced kept in
/// `entry`); the keys that had to change, dotted.
fn set_keys(
    doc: &mut Map<String, Value>,
    entry: &mut KeysEntry,
    spec: &KeysSpec,
) -> Result<Vec<String>, Failure> {
    let mut set = Vec::new();
    for key in &spec.keys {
        let dotted = key.dotted();
        let current = get(doc, &key.path).cloned();
        if !entry.owned.contains_key(&dotted) {
            entry.owned.insert(
                dotted.clone(),
                OwnedKey {
                    path: key.path.clone(),
                    original: current.clone(),
                    parents_made: missing_parents(doc, &key.path),
                    written: None,
                },
            );
        }
        if current.as_ref() != Some(&key.value) {
            put(doc, key).map_err(|e| format!("{dotted}: {e}"))?;
            set.push(dotted.clone());
        }
        if let Some(owned) = entry.owned.get_mut(&dotted) {
            owned.written = Some(key.value.clone());
        }
    }
    Ok(set)
}

/// Gives back in `doc` the keys `entry` owns that are no longer `declared` (a new module
/// version dropped them); those keys, dotted.
fn drop_undeclared(
    doc: &mut Map<String, Value>,
    entry: &mut KeysEntry,
    declared: &[String],
) -> Vec<String> {
    let dropped: Vec<String> = entry
        .owned
        .keys()
        .filter(|k| !declared.contains(k))
        .cloned()
        .collect();
    for dotted in &dropped {
        if let Some(owned) = entry.owned.remove(dotted) {
            give_back(doc, &owned);
        }
    }
    dropped
}

impl Kind for KeysSpec {
    const PHASE: Phase = Phase::Files;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_keys(resource, self, record)
    }

    /// its keys are owned again at the next push, with what is there now
    fn adopt(&self, adopt: &mut Adopt<'_>, id: &str) {
        if !adopt.paths.machine.real(Path::new(&self.path)).is_file() {
            return;
        }
        let entry = Entry::Keys(KeysEntry {
            path: self.path.clone(),
            created: false,
            owned: Default::default(),
            made_from: None,
            readers: Readers::default(),
            originals_lost: true,
        });
        adopt.take(id, entry, format!("{}: taken as it is", self.path));
        adopt.lost(format!(
            "{}: the values its keys had before the mesh are lost; undeclaring leaves them as \
             they are",
            self.path
        ));
    }

    /// the keys file, and the directories writing it would make
    fn touches(&self, paths: &Paths) -> Touches {
        Touches::written(&self.path, &self.costing, paths)
    }
}

impl GiveBack for KeysEntry {
    const KIND: &'static str = "keys";
    const PHASE: Phase = Phase::Files;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        id: &str,
        record: &mut Record,
    ) -> Result<String, Failure> {
        if !self.originals_lost {
            run.owe_durably(record, &self.readers.units, self.readers.cost, id)?;
        }
        run.give_back_keys(self)
    }

    fn touches(&self) -> Touches {
        Touches::given_back(&self.path, &self.readers)
    }
}

#[cfg(test)]
mod tests;
