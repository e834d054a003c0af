//! `mesh module …`: what the catalogue offers.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use super::answers::{ModuleChecked, ModuleListed};
use super::{Context, exit, print_json};
use crate::catalogue::{self, Module};
use crate::plan::visible;

#[derive(Subcommand, Debug)]
pub(crate) enum ModuleCommand {
    /// Every module, with its version and what it is for.
    List,
    /// One module: its settings as a form (name, type, default, cost, meaning) and its resources.
    Show {
        /// The module's name.
        module: String,
    },
    /// Check a module folder (or a folder of them) the way the catalogue loads it.
    Check {
        /// A module folder (with its module.json), or a folder of them.
        dir: PathBuf,
    },
}

pub(crate) fn run(command: ModuleCommand, ctx: &Context) -> Result<u8> {
    match command {
        ModuleCommand::List => {
            let cat = ctx.catalogue()?;
            if ctx.json {
                let mut list: Vec<_> = cat
                    .modules()
                    .map(|m| ModuleListed::Read {
                        name: &m.name,
                        version: &m.version,
                        description: &m.description,
                        origin: &m.origin,
                    })
                    .collect();
                list.extend(
                    cat.broken()
                        .map(|(name, broken)| ModuleListed::Broken { name, broken }),
                );
                print_json(&list)?;
            } else {
                for m in cat.modules() {
                    out!(
                        "{:<20} {:<8} {}",
                        m.name,
                        visible(&m.version),
                        visible(&m.description)
                    );
                }
                for (name, _) in cat.broken() {
                    out!(
                        "{name:<20} {:<8} broken: `mesh module show {name}` says why",
                        "-"
                    );
                }
            }
        }
        ModuleCommand::Show { module } => {
            let cat = ctx.catalogue()?;
            show(cat.module(&module)?, ctx.json)?;
        }
        ModuleCommand::Check { dir } => {
            let modules = catalogue::load_dir(&dir)?;
            catalogue::check_contracts(&modules, &dir)?;
            for m in &modules {
                ctx.answer(
                    ModuleChecked {
                        module: &m.name,
                        version: &m.version,
                        ok: true,
                        settings: m.settings.len(),
                        resources: m.resources.len(),
                    },
                    format_args!(
                        "{} {}: ok ({}, {})",
                        m.name,
                        visible(&m.version),
                        super::render::counted(m.settings.len(), "setting"),
                        super::render::counted(m.resources.len(), "resource")
                    ),
                );
            }
        }
    }
    Ok(exit::OK)
}

/// Fields as `${req.field}` reads them: `host (string), password (string, secret)`.
fn fields(fields: &[crate::catalogue::Field]) -> String {
    fields
        .iter()
        .map(|f| {
            format!(
                "{} ({}{})",
                f.name,
                f.kind.as_str(),
                if f.secret { ", secret" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn show(m: &Module, as_json: bool) -> Result<()> {
    if as_json {
        return print_json(&super::answers::commands::ModuleShown::new(m));
    }
    // a module's own text is shown, never obeyed by the terminal
    out!(
        "{} {} ({})",
        m.name,
        visible(&m.version),
        visible(&m.origin)
    );
    out!("{}", visible(&m.description));
    out!();
    settings(m);
    contracts(m);
    if let Some(n) = m.rollout.max_unavailable {
        out!();
        out!("rollout: at most {n} of its assignments restart at once");
    }
    out!();
    out!("resources:");
    for r in &m.resources {
        out!("  {} {}", r.kind(), visible(&r.describe()));
    }
    Ok(())
}

/// A module's settings as a form: name, type, default, cost and meaning.
fn settings(m: &Module) {
    if m.settings.is_empty() {
        out!("settings: none");
    } else {
        out!(
            "{:<24} {:<8} {:<26} {:<8} meaning",
            "setting",
            "type",
            "default",
            "cost"
        );
        for s in &m.settings {
            let default = match (&s.default, &s.default_fact) {
                (Some(d), _) => d.to_string(),
                (None, Some(fact)) => format!("the machine's {fact}"),
                (None, None) => "(operator's: must be set)".to_string(),
            };
            out!(
                "{:<24} {:<8} {:<26} {:<8} {}",
                s.name,
                s.type_text(),
                visible(&default),
                s.cost.as_str(),
                visible(&s.meaning)
            );
        }
    }
}

/// What a module requires and provides, with the fields of each.
fn contracts(m: &Module) {
    if !m.requires.is_empty() {
        out!();
        out!("requires:");
        for r in &m.requires {
            let what = r.need.describe();
            out!(
                "  {:<16} {:<7} {what}: {}",
                r.name,
                r.need.kind(),
                fields(&r.need.fields())
            );
        }
    }
    if !m.provides.is_empty() {
        out!();
        out!("provides:");
        for p in &m.provides {
            let f: Vec<crate::catalogue::Field> =
                p.fields.iter().map(|f| f.field.clone()).collect();
            out!(
                "  {:<16} {}{}",
                p.name,
                fields(&f),
                if p.seat {
                    " (delivered by the seat of this name)"
                } else {
                    ""
                }
            );
            if let Some(pc) = &p.per_consumer {
                out!(
                    "  {:<16} made per consumer: {} for each, read as ${{{}.consumers}}",
                    "",
                    visible(&pc.file),
                    p.name
                );
            }
        }
    }
}
