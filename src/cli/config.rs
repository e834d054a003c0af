//! `mesh config`: every setting of one assignment with its effective value and where it came
//! from, and how its requirements are answered.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
use clap::Args;
use serde_json::Value;

use super::answers::{SettingRow, SettingsShown};
use super::{Context, exit, print_json};
use crate::inventory::{Assignment, Inventory};
use crate::resolve::{self, Effective, Problem};

#[derive(Args, Debug)]
pub(crate) struct ConfigArgs {
    /// The instance (by default, the module's name).
    instance: String,
    /// The node it is assigned to.
    #[arg(long)]
    node: String,
}

pub(crate) fn config(a: ConfigArgs, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    let cat = ctx.catalogue()?;
    let assignment = assignment(&inv, &a)?;
    let m = cat.module(&assignment.module)?;
    let values: Vec<Effective> =
        resolve::assignment_settings(&inv, &cat, m, &a.node, &assignment.instance)?;
    let node = inv.node(&a.node)?;
    // shown as a push would allocate it, and rolled back: `config` writes nothing
    let (answers, problems) =
        inv.trial(|inv| resolve::allocation::answers(inv, &cat, &node, &assignment))?;
    // a requirement's field as read, a secret's value never shown
    let requirement_rows: Vec<(String, Value)> = answers
        .values
        .iter()
        .filter(|(k, _)| k.contains('.'))
        .map(|(k, v)| {
            let shown = if m.is_secret(k) {
                Value::String("(secret: not shown)".into())
            } else {
                v.clone()
            };
            (k.clone(), shown)
        })
        .collect();
    if ctx.json {
        print_json(&SettingsShown {
            instance: &assignment.instance,
            module: &m.name,
            node: &a.node,
            settings: values
                .iter()
                .map(|e| SettingRow::new(e, m.setting(&e.name)))
                .collect(),
            requirements: requirement_rows.into_iter().collect(),
            providers: &answers.providers,
            unresolved: problems.iter().map(|p| p.reason.as_str()).collect(),
            problems: &problems,
        })?;
        return Ok(exit::OK);
    }
    out!(
        "{} ({} {}) on {}:",
        assignment.instance,
        m.name,
        m.version,
        a.node
    );
    text(&values, &requirement_rows, &answers.providers, &problems);
    Ok(exit::OK)
}

/// The assignment `mesh config` names, or a refusal naming what runs on the node.
fn assignment(inv: &Inventory, a: &ConfigArgs) -> Result<Assignment> {
    inv.node(&a.node)?;
    let assignments = inv.assignments(Some(&a.node))?;
    if let Some(found) = assignments.iter().find(|x| x.instance == a.instance) {
        return Ok(found.clone());
    }
    let here: BTreeSet<&str> = assignments.iter().map(|x| x.instance.as_str()).collect();
    bail!(
        "nothing runs on {} as {:?} (there: {})",
        a.node,
        a.instance,
        if here.is_empty() {
            "nothing".into()
        } else {
            here.into_iter().collect::<Vec<_>>().join(", ")
        }
    );
}

/// Each setting with its value and source, each requirement's field with its provider, and
/// what is unresolved, as text.
fn text(
    values: &[Effective],
    requirement_rows: &[(String, Value)],
    providers: &BTreeMap<String, String>,
    problems: &[Problem],
) {
    for e in values {
        let value = match (&e.value, &e.fact) {
            (Some(v), _) => v.to_string(),
            (None, Some(fact)) => format!("(${{{fact}}}: the machine has not said it yet)"),
            (None, None) => "(unset: no default; must be set)".to_string(),
        };
        let from = if e.conflict.is_empty() {
            e.source_text()
        } else {
            let said: Vec<String> = e
                .conflict
                .iter()
                .map(|(t, v)| format!("tag {t} sets {v}"))
                .collect();
            format!("{} (tags disagree: {})", e.source_text(), said.join(", "))
        };
        out!("  {:<24} {:<40} {from}", e.name, value);
    }
    if !requirement_rows.is_empty() {
        out!("requirements:");
        for (k, v) in requirement_rows {
            let from = k
                .split_once('.')
                .and_then(|(r, _)| providers.get(r))
                .map(|p| format!("from {p}"))
                .unwrap_or_default();
            out!("  {k:<24} {:<40} {from}", v.to_string());
        }
    }
    for p in problems {
        out!("  unresolved: {p}");
    }
}
