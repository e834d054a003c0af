//! The shapes of `--json` answers, one type each, so a key is named once and its snapshot in
//! `answers/snapshots/` says when it changes. These are output types only: the data is the core's.
//!
//! Every key and value is as the hand-built answers gave them: an absent value is `null`, not a
//! missing key, unless the type says otherwise.

pub(crate) mod commands;
pub(crate) mod fleet;
pub(crate) mod nodes;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::resolve::{Effective, Problem};

/// `{"error": {"kind", "message"}}` (and `"class"` on an inventory error): how every command that
/// fails says so under `--json`.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorAnswer<'a> {
    pub(crate) error: ErrorBody<'a>,
    /// What the command did before it failed (it still happened); absent when nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) done: Vec<Value>,
}

/// The body of an [`ErrorAnswer`].
#[derive(Debug, Serialize)]
pub(crate) struct ErrorBody<'a> {
    pub(crate) kind: &'a str,
    /// Only on an `inventory` error: `"refusal"` (the inventory refused what it was asked, the
    /// thing named) or `"storage"` (the file could not be read or written). `kind` stays
    /// `inventory` for both, as scripts already read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) class: Option<&'static str>,
    pub(crate) message: &'a str,
}

/// A node refused before anything was sent to it, in `mesh plan --json`'s and `mesh push
/// --json`'s list of nodes. `reason` is every problem's sentence joined by `; `; `problems` names
/// each one's instance, module, file, field and fix.
#[derive(Debug, Serialize)]
pub(crate) struct RefusedNode<'a> {
    pub(crate) node: &'a str,
    pub(crate) outcome: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) reason: String,
    pub(crate) problems: &'a [Problem],
}

impl<'a> RefusedNode<'a> {
    pub(crate) fn new(node: &'a str, problems: &'a [Problem]) -> RefusedNode<'a> {
        RefusedNode {
            node,
            outcome: "failed",
            kind: "refused",
            reason: crate::resolve::problem::joined(problems, "; "),
            problems,
        }
    }
}

/// One setting of `mesh settings show --json` (or `mesh config`).
#[derive(Debug, Serialize)]
pub(crate) struct SettingRow<'a> {
    pub(crate) name: &'a str,
    pub(crate) value: &'a Option<Value>,
    pub(crate) source: crate::resolve::Source,
    pub(crate) tag: &'a Option<String>,
    pub(crate) conflict: &'a [(String, Value)],
    /// Another module of the node that needs it at a value: `{"by", "value", "why"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) wanted: Option<&'a crate::resolve::settings::Wanted>,
    /// The fact of the machine its default is (`host.os.codename`), where it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fact: Option<&'a str>,
    #[serde(rename = "type")]
    pub(crate) kind: Option<&'a str>,
    pub(crate) cost: Option<&'a str>,
}

impl<'a> SettingRow<'a> {
    pub(crate) fn new(e: &'a Effective, decl: Option<&'a crate::catalogue::Setting>) -> Self {
        SettingRow {
            name: &e.name,
            value: &e.value,
            source: e.source,
            tag: &e.tag,
            conflict: &e.conflict,
            wanted: e.wanted.as_ref(),
            fact: e.fact.as_deref(),
            kind: decl.map(|d| d.kind.as_str()),
            cost: decl.map(|d| d.cost.as_str()),
        }
    }
}

/// An assignment's settings as `mesh settings show --json` gives them. `unresolved` is each
/// problem's sentence (as it always was); `problems` is the same problems with their parts.
#[derive(Debug, Serialize)]
pub(crate) struct SettingsShown<'a> {
    pub(crate) instance: &'a str,
    pub(crate) module: &'a str,
    pub(crate) node: &'a str,
    pub(crate) settings: Vec<SettingRow<'a>>,
    pub(crate) requirements: serde_json::Map<String, Value>,
    pub(crate) providers: &'a BTreeMap<String, String>,
    pub(crate) unresolved: Vec<&'a str>,
    pub(crate) problems: &'a [Problem],
}

/// What a change of settings did, as `mesh settings set/unset --json` says it.
#[derive(Debug, Serialize)]
pub(crate) struct SettingsChanged<'a> {
    pub(crate) module: &'a str,
    pub(crate) node: Option<&'a str>,
    pub(crate) tag: Option<&'a str>,
    pub(crate) added: &'a [String],
    pub(crate) changed: &'a [String],
    pub(crate) removed: &'a [String],
    pub(crate) reach: Vec<Reached<'a>>,
}

/// An instance a settings change reaches, with the settings of it that changed.
#[derive(Debug, Serialize)]
pub(crate) struct Reached<'a> {
    pub(crate) instance: &'a str,
    pub(crate) node: &'a str,
    pub(crate) settings: &'a [String],
}

/// One module of `mesh module list --json`: a module read, or a file that could not be.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ModuleListed<'a> {
    Read {
        name: &'a str,
        version: &'a str,
        description: &'a str,
        origin: &'a str,
    },
    Broken {
        name: &'a str,
        broken: &'a str,
    },
}

/// One module `mesh module check --json` read and found whole.
#[derive(Debug, Serialize)]
pub(crate) struct ModuleChecked<'a> {
    pub(crate) module: &'a str,
    pub(crate) version: &'a str,
    pub(crate) ok: bool,
    pub(crate) settings: usize,
    pub(crate) resources: usize,
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
