//! The answers of the commands that change or read the inventory and catalogue: `init`,
//! `assign`, `unassign`, `place`, `seat`, `secret`, `settings show`, `module show`, `history
//! show`, `inventory export|import`, `facts` and `rollback --release`; and the `{"done": [...]}` that
//! gathers what a command did.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::catalogue::{Field, Module, Setting};
use crate::inventory::{HistoryEntry, Layer, PushRow};
use crate::wire::{Report, Resource};

/// `{"done": [...]}`: everything a command did, in order, as one document.
#[derive(Debug, Serialize)]
pub(crate) struct Done {
    pub(crate) done: Vec<Value>,
}

/// `init`: the inventory made, and the operator's key its secrets are sealed to.
#[derive(Debug, Serialize)]
pub(crate) struct Created<'a> {
    pub(crate) created: &'static str,
    pub(crate) path: &'a Path,
    pub(crate) operator_key: &'a Path,
    pub(crate) operator_key_made: bool,
    /// The catalogue folders it remembers (`--catalogue`), in the order they are read.
    pub(crate) catalogue: &'a [std::path::PathBuf],
}

/// `catalogue add|remove`: one folder remembered (or remembered already), or forgotten.
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum CatalogueChanged<'a> {
    Remembered(&'a Path),
    RememberedAlready(&'a Path),
    Forgotten(&'a Path),
}

/// `man --dir`: how many pages were written, and where.
#[derive(Debug, Serialize)]
pub(crate) struct ManWritten<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) pages: usize,
}

/// `catalogue list`: the remembered folders, first read first.
#[derive(Debug, Serialize)]
pub(crate) struct CatalogueFolders<'a> {
    pub(crate) folders: &'a [std::path::PathBuf],
}

/// What `assign`, `unassign` and `place` did, under the verb that says it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AssignDone<'a> {
    /// An assignment that exists already is answered by this provider from now on.
    Pinned {
        node: &'a str,
        instance: &'a str,
        requirement: &'a str,
        provider: String,
    },
    Assigned {
        node: &'a str,
        module: &'a str,
        instance: &'a str,
    },
    Unassigned {
        node: &'a str,
        instance: &'a str,
    },
    Placed {
        node: &'a str,
        instance: &'a str,
        directory: &'a str,
        path: &'a str,
    },
}

/// `seat set`: who holds the seat now.
#[derive(Debug, Serialize)]
pub(crate) struct SeatHeld<'a> {
    pub(crate) seat: &'a str,
    pub(crate) instance: &'a str,
    pub(crate) node: &'a str,
}

/// `secret set` and `secret rotate`: which secret, under the verb.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SecretDone<'a> {
    Set(SecretNamed<'a>),
    Rotated(SecretNamed<'a>),
}

/// A secret of an instance on a node, by its name (`PROVISION.FIELD`).
#[derive(Debug, Serialize)]
pub(crate) struct SecretNamed<'a> {
    pub(crate) node: &'a str,
    pub(crate) instance: &'a str,
    pub(crate) secret: &'a str,
}

/// `settings show`: one layer, and (with `--history`) every layer it replaced.
#[derive(Debug, Serialize)]
pub(crate) struct LayerShown<'a> {
    pub(crate) module: &'a str,
    pub(crate) node: Option<&'a str>,
    pub(crate) tag: Option<&'a str>,
    pub(crate) layer: Option<&'a Layer>,
    pub(crate) history: &'a [HistoryEntry],
}

/// `module show`: a module's settings, contracts, resources and rollout.
#[derive(Debug, Serialize)]
pub(crate) struct ModuleShown<'a> {
    pub(crate) name: &'a str,
    pub(crate) version: &'a str,
    pub(crate) description: &'a str,
    pub(crate) origin: &'a str,
    pub(crate) settings: &'a [Setting],
    pub(crate) requires: Vec<Required<'a>>,
    pub(crate) provides: Vec<Provided<'a>>,
    pub(crate) resources: Vec<ResourceShown>,
    pub(crate) rollout: &'a crate::catalogue::rollout::Rollout,
}

/// A requirement of a module: its name, kind and the fields it reads.
#[derive(Debug, Serialize)]
pub(crate) struct Required<'a> {
    pub(crate) name: &'a str,
    pub(crate) kind: &'static str,
    pub(crate) fields: Vec<FieldShown>,
}

/// A provision of a module: its name, whether a seat delivers it, the file it makes per
/// consumer, and its fields.
#[derive(Debug, Serialize)]
pub(crate) struct Provided<'a> {
    pub(crate) name: &'a str,
    pub(crate) seat: bool,
    #[serde(rename = "per-consumer")]
    pub(crate) per_consumer: Option<&'a str>,
    pub(crate) fields: Vec<FieldShown>,
}

/// A field of a contract: `{"name", "type", "secret"}`.
#[derive(Debug, Serialize)]
pub(crate) struct FieldShown {
    pub(crate) name: String,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) secret: bool,
}

impl FieldShown {
    fn of(f: &Field) -> FieldShown {
        FieldShown {
            name: f.name.clone(),
            kind: f.kind.as_str(),
            secret: f.secret,
        }
    }
}

/// A resource of a module: its kind, and what it is in words.
#[derive(Debug, Serialize)]
pub(crate) struct ResourceShown {
    pub(crate) kind: &'static str,
    pub(crate) what: String,
}

impl<'a> ModuleShown<'a> {
    pub(crate) fn new(m: &'a Module) -> ModuleShown<'a> {
        ModuleShown {
            name: &m.name,
            version: &m.version,
            description: &m.description,
            origin: &m.origin,
            settings: &m.settings,
            requires: m
                .requires
                .iter()
                .map(|r| Required {
                    name: &r.name,
                    kind: r.need.kind(),
                    fields: r.need.fields().iter().map(FieldShown::of).collect(),
                })
                .collect(),
            provides: m
                .provides
                .iter()
                .map(|p| Provided {
                    name: &p.name,
                    seat: p.seat,
                    per_consumer: p.per_consumer.as_ref().map(|pc| pc.file.as_str()),
                    fields: p.fields.iter().map(|f| FieldShown::of(&f.field)).collect(),
                })
                .collect(),
            resources: m
                .resources
                .iter()
                .map(|r| ResourceShown {
                    kind: r.kind(),
                    what: r.describe(),
                })
                .collect(),
            rollout: &m.rollout,
        }
    }
}

/// `history show ID`: the push as recorded, and its report (`null`: the helper never answered).
#[derive(Debug, Serialize)]
pub(crate) struct PushShown<'a> {
    pub(crate) push: &'a PushRow,
    pub(crate) report: Option<&'a Report>,
}

/// `history show NODE@GEN`: a generation the inventory kept, with its resources as sent.
#[derive(Debug, Serialize)]
pub(crate) struct GenerationShown<'a> {
    pub(crate) node: &'a str,
    pub(crate) generation: u64,
    pub(crate) push: i64,
    pub(crate) inventory: &'a str,
    pub(crate) pushed_at: u64,
    pub(crate) resources: &'a [Resource],
}

/// `inventory export --output FILE`: where it was written.
#[derive(Debug, Serialize)]
pub(crate) struct Exported<'a> {
    pub(crate) exported: &'a Path,
}

/// `inventory import`: what it changes (or, with `--dry-run`, would).
#[derive(Debug, Serialize)]
pub(crate) struct Imported<'a> {
    #[serde(rename = "dry-run")]
    pub(crate) dry_run: bool,
    pub(crate) added: &'a [String],
    pub(crate) changed: &'a [String],
    pub(crate) removed: &'a [String],
}

/// `facts`: one node's facts as its machine last said them.
#[derive(Debug, Serialize)]
pub(crate) struct NodeFacts {
    pub(crate) node: String,
    /// When the machine said them (UTC); `None`: it never has.
    pub(crate) seen_at: Option<String>,
    pub(crate) facts: Option<crate::wire::Facts>,
}

/// `rollback --release`: a node, and the generation it was released from (`null`: it was not
/// held).
#[derive(Debug, Serialize)]
pub(crate) struct Released<'a> {
    pub(crate) node: &'a str,
    pub(crate) released: Option<u64>,
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
