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
use crate::files;
use crate::owners;
use crate::record::{Entry, KeysEntry, MadeFrom, OwnedKey, Readers, Record};

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

/// Reads a JSON object; an empty file is an empty object. Anything else is refused rather than
/// overwritten: it is someone else's file.
fn parse(bytes: &[u8]) -> Result<Map<String, Value>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("holds JSON that is not an object; the mesh writes keys into an object only, and leaves the file alone".into()),
        Err(e) => Err(format!(
            "is not valid JSON ({e}); the mesh leaves it alone until it is fixed"
        )),
    }
}

/// Pretty JSON with a final newline, as people write these files.
fn render(doc: &Map<String, Value>) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(doc).unwrap_or_default();
    out.push(b'\n');
    out
}

fn get<'a>(doc: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut at = doc;
    for p in parents {
        at = at.get(p)?.as_object()?;
    }
    at.get(last)
}

/// How many of the key's parent objects are not there yet.
fn missing_parents(doc: &Map<String, Value>, path: &[String]) -> usize {
    let parents = path.len().saturating_sub(1);
    let mut at = doc;
    for (depth, p) in path.iter().take(parents).enumerate() {
        match at.get(p).and_then(Value::as_object) {
            Some(next) => at = next,
            None => return parents - depth,
        }
    }
    0
}

fn put(doc: &mut Map<String, Value>, key: &Key) -> Result<(), Failure> {
    let Some((last, parents)) = key.path.split_last() else {
        return Err("an empty key".into());
    };
    let mut at = doc;
    for (depth, p) in parents.iter().enumerate() {
        let slot = at
            .entry(p.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        at = slot.as_object_mut().ok_or_else(|| {
            format!(
                "{} holds a value that is not an object, so the key cannot go inside it",
                key.path[..=depth].join(".")
            )
        })?;
    }
    at.insert(last.clone(), key.value.clone());
    Ok(())
}

/// Puts back what a key replaced, or removes it if it was absent, then removes the parents the
/// mesh made if they are empty now.
fn give_back(doc: &mut Map<String, Value>, owned: &OwnedKey) {
    let Some((last, parents)) = owned.path.split_last() else {
        return;
    };
    let mut at = &mut *doc;
    for p in parents {
        match at.get_mut(p).and_then(Value::as_object_mut) {
            Some(next) => at = next,
            // its parent is gone or replaced: nothing of ours is left to give back
            None => return,
        }
    }
    match &owned.original {
        Some(v) => {
            at.insert(last.clone(), v.clone());
        }
        None => {
            at.shift_remove(last);
        }
    }
    let first_made = parents.len() - owned.parents_made.min(parents.len());
    prune(doc, parents, first_made, 0);
}

/// Removes, deepest first, the empty objects along `parents` from depth `first_made` down: the
/// ones the mesh made.
fn prune(at: &mut Map<String, Value>, parents: &[String], first_made: usize, depth: usize) {
    let Some(name) = parents.get(depth) else {
        return;
    };
    let Some(child) = at.get_mut(name).and_then(Value::as_object_mut) else {
        return;
    };
    prune(child, parents, first_made, depth + 1);
    let empty = child.is_empty();
    if depth >= first_made && empty {
        at.shift_remove(name);
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
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mesh_wire::{Cost, Costing, Key, KeysSpec, Mode, Resource, Spec, State};
    use serde_json::{Value, json};

    use super::super::testkit::{decl, ids, run, sandbox, states};

    fn keys(path: &std::path::Path, keys: &[(&str, Value)]) -> Resource {
        Resource {
            id: format!("t:keys:{}", path.display()),
            instance: "t".into(),
            module: "t@1".into(),
            confirm: false,
            spec: Spec::Keys(KeysSpec {
                path: path.display().to_string(),
                owner: ids().0.to_string(),
                group: ids().1.to_string(),
                mode: 0o644,
                keys: keys
                    .iter()
                    .map(|(k, v)| Key {
                        path: k.split('.').map(String::from).collect(),
                        value: v.clone(),
                    })
                    .collect(),
                costing: Costing {
                    source: "s".into(),
                    settings: BTreeMap::new(),
                    cost: Cost::None,
                    units: vec![],
                },
            }),
        }
    }

    fn read(path: &std::path::Path) -> Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn keys_go_into_a_shared_file_and_come_back_out_leaving_the_rest() {
        let (dir, paths) = sandbox();
        let target = dir.path().join("daemon.json");
        let theirs =
            r#"{"debug": true, "log-opts": {"tag": "x", "max-size": "1m"}, "dns": ["9.9.9.9"]}"#;
        std::fs::write(&target, theirs).unwrap();
        let ours = keys(
            &target,
            &[
                ("log-opts.max-size", json!("50m")),
                ("live-restore", json!(true)),
                ("dns", json!([])),
            ],
        );
        assert_eq!(
            states(&decl(vec![ours.clone()]), Mode::Apply, &paths),
            vec![State::Changed]
        );
        assert_eq!(
            read(&target),
            json!({"debug": true, "log-opts": {"tag": "x", "max-size": "50m"}, "dns": [], "live-restore": true})
        );
        // their keys keep their order: debug first
        let text = std::fs::read_to_string(&target).unwrap();
        assert!(text.find("debug") < text.find("log-opts"), "{text}");
        assert_eq!(
            states(&decl(vec![ours]), Mode::Apply, &paths),
            vec![State::Unchanged]
        );

        // someone adds a key of their own meanwhile: it stays through the give-back
        let mut now = read(&target);
        now["registry-mirrors"] = json!(["https://m"]);
        std::fs::write(&target, now.to_string()).unwrap();

        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert_eq!(
            read(&target),
            json!({"debug": true, "log-opts": {"tag": "x", "max-size": "1m"}, "dns": ["9.9.9.9"], "registry-mirrors": ["https://m"]})
        );
    }

    #[test]
    fn a_file_the_mesh_created_for_its_keys_goes_when_they_do() {
        let (dir, paths) = sandbox();
        let target = dir.path().join("new.json");
        let ours = keys(&target, &[("log-opts.max-file", json!("3"))]);
        assert_eq!(
            states(&decl(vec![ours]), Mode::Apply, &paths),
            vec![State::Created]
        );
        assert_eq!(read(&target), json!({"log-opts": {"max-file": "3"}}));
        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert!(!target.exists());
    }

    #[test]
    fn a_key_dropped_from_the_declaration_is_given_back_alone() {
        let (dir, paths) = sandbox();
        let target = dir.path().join("d.json");
        std::fs::write(&target, r#"{"a": 1}"#).unwrap();
        let both = keys(&target, &[("a", json!(2)), ("b", json!(3))]);
        states(&decl(vec![both]), Mode::Apply, &paths);
        assert_eq!(read(&target), json!({"a": 2, "b": 3}));
        let one = keys(&target, &[("b", json!(3))]);
        assert_eq!(
            states(&decl(vec![one]), Mode::Apply, &paths),
            vec![State::Changed]
        );
        assert_eq!(read(&target), json!({"a": 1, "b": 3}));
    }

    #[test]
    fn a_file_that_is_not_a_json_object_is_left_alone() {
        let (dir, paths) = sandbox();
        let target = dir.path().join("d.json");
        std::fs::write(&target, "not json").unwrap();
        let report = run(
            &decl(vec![keys(&target, &[("a", json!(1))])]),
            Mode::Apply,
            &paths,
        )
        .unwrap();
        assert_eq!(report.resources[0].state, State::Failed);
        assert!(report.resources[0].detail.contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "not json");
    }
}
