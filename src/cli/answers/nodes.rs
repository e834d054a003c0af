//! The answers of `mesh node …` and `mesh lab …`: machines added, changed, shown, pinned and
//! removed.

use std::path::Path;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::inventory::{Assignment, Node};

/// `node add`: `{"added", "local"?}` (`local`: the directory standing for its `/`).
#[derive(Debug, Serialize)]
pub(crate) struct NodeAdded<'a> {
    pub(crate) added: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) local: Option<&'a Path>,
}

/// `node list`: a node as stored, with its tags.
#[derive(Debug, Serialize)]
pub(crate) struct NodeListed {
    #[serde(flatten)]
    pub(crate) node: Node,
    pub(crate) tags: Vec<String>,
}

/// `node show`: the node as stored, its tags and assignments, and how it is reached.
#[derive(Debug, Serialize)]
pub(crate) struct NodeShown<'a> {
    pub(crate) node: &'a Node,
    pub(crate) tags: &'a [String],
    pub(crate) assignments: &'a [Assignment],
    pub(crate) resolved: Resolved,
}

/// How a node is reached, field by field in `ssh -G`'s order; or why that cannot be worked out.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Resolved {
    Fields(ResolvedFields),
    Error { error: String },
}

/// Each field mesh resolved to reach a node, by its name, in order.
#[derive(Debug)]
pub(crate) struct ResolvedFields(pub(crate) Vec<(&'static str, Reached)>);

impl Serialize for ResolvedFields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// One resolved field: a value with where it came from, or a list of them (identity files,
/// known_hosts files).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Reached {
    One(Sourced),
    Many(Vec<Sourced>),
}

/// `{"value", "source"}`: a value and where it came from (`inventory`, `ssh_config:FILE:LINE`,
/// `known_hosts`, `default`).
#[derive(Debug, Serialize)]
pub(crate) struct Sourced {
    pub(crate) value: Value,
    pub(crate) source: String,
}

/// `node tag` and `node untag`: what moved (`added` or `removed`), and the tags it has now.
#[derive(Debug, Serialize)]
pub(crate) struct Retagged<'a> {
    pub(crate) node: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) added: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) removed: Option<&'a [String]>,
    pub(crate) tags: &'a [String],
}

/// `node set`: the node as stored now, and each change in words.
#[derive(Debug, Serialize)]
pub(crate) struct NodeEdited<'a> {
    pub(crate) node: &'a Node,
    pub(crate) changed: &'a [String],
}

/// `node trust`: the key pinned, and the one it replaced.
#[derive(Debug, Serialize)]
pub(crate) struct Pinned<'a> {
    pub(crate) pinned: &'a str,
    pub(crate) algorithm: &'a str,
    pub(crate) fingerprint: &'a str,
    pub(crate) replaced: Option<&'a str>,
}

/// `node remove`: the node, and the rollback hold that went with it.
#[derive(Debug, Serialize)]
pub(crate) struct NodeRemoved<'a> {
    pub(crate) removed: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dropped_hold: Option<Generation>,
}

/// `{"generation"}`.
#[derive(Debug, Serialize)]
pub(crate) struct Generation {
    pub(crate) generation: u64,
}

/// A lab machine booted (`up`) or rebuilt (`rebuilt`), by name, where it listens.
#[derive(Debug, Serialize)]
pub(crate) enum LabMachine<'a> {
    #[serde(rename = "up")]
    Up(&'a str),
    #[serde(rename = "rebuilt")]
    Rebuilt(&'a str),
}

/// `lab up`, `lab start`, `lab rebuild`: `{"up"|"rebuilt": NAME, "address", "port"}`.
#[derive(Debug, Serialize)]
pub(crate) struct LabUp<'a> {
    #[serde(flatten)]
    pub(crate) machine: LabMachine<'a>,
    pub(crate) address: &'a str,
    pub(crate) port: u16,
}

/// `lab down`: the lab, by id.
#[derive(Debug, Serialize)]
pub(crate) struct LabDown<'a> {
    pub(crate) down: &'a str,
}

/// `lab stop`: the machine stopped.
#[derive(Debug, Serialize)]
pub(crate) struct LabStopped<'a> {
    pub(crate) stopped: &'a str,
}

/// One machine of `lab status`.
#[derive(Debug, Serialize)]
pub(crate) struct LabStatus<'a> {
    pub(crate) name: &'a str,
    pub(crate) address: &'a str,
    pub(crate) port: u16,
    pub(crate) state: &'a str,
}

#[cfg(test)]
#[path = "nodes_tests.rs"]
mod tests;
