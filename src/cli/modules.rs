//! `mesh module …`: what the catalogue offers.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;
use serde_json::json;

use super::{Context, exit, print_json};
use crate::catalogue::{self, Module};

#[derive(Subcommand, Debug)]
pub(crate) enum ModuleCommand {
    /// Every module, with its version and what it is for.
    List,
    /// One module: its settings as a form (name, type, default, cost, meaning) and its resources.
    Show { module: String },
    /// Check a module folder (or a folder of them) the way the catalogue loads it.
    Check { dir: PathBuf },
}

pub(crate) fn run(command: ModuleCommand, ctx: &Context) -> Result<u8> {
    match command {
        ModuleCommand::List => {
            let cat = ctx.catalogue()?;
            if ctx.json {
                let list: Vec<_> = cat.modules().map(|m| json!({"name": m.name, "version": m.version, "description": m.description, "origin": m.origin})).collect();
                print_json(&list)?;
            } else {
                for m in cat.modules() {
                    println!("{:<20} {:<8} {}", m.name, m.version, m.description);
                }
            }
        }
        ModuleCommand::Show { module } => {
            let cat = ctx.catalogue()?;
            show(cat.module(&module)?, ctx.json)?;
        }
        ModuleCommand::Check { dir } => {
            let modules = catalogue::load_dir(&dir)?;
            for m in &modules {
                println!(
                    "{} {}: ok ({} settings, {} resources)",
                    m.name,
                    m.version,
                    m.settings.len(),
                    m.resources.len()
                );
            }
        }
    }
    Ok(exit::OK)
}

fn show(m: &Module, as_json: bool) -> Result<()> {
    if as_json {
        let resources: Vec<_> = m
            .resources
            .iter()
            .map(|r| json!({"kind": r.kind(), "what": r.describe()}))
            .collect();
        return print_json(
            &json!({"name": m.name, "version": m.version, "description": m.description,
            "origin": m.origin, "settings": m.settings, "resources": resources}),
        );
    }
    println!("{} {} ({})", m.name, m.version, m.origin);
    println!("{}", m.description);
    println!();
    if m.settings.is_empty() {
        println!("settings: none");
    } else {
        println!(
            "{:<24} {:<8} {:<26} {:<8} meaning",
            "setting", "type", "default", "cost"
        );
        for s in &m.settings {
            let default = s.default.as_ref().map_or_else(
                || "(operator's: must be set)".to_string(),
                |d| d.to_string(),
            );
            println!(
                "{:<24} {:<8} {:<26} {:<8} {}",
                s.name,
                s.kind.as_str(),
                default,
                s.cost.as_str(),
                s.meaning
            );
        }
    }
    println!();
    println!("resources:");
    for r in &m.resources {
        println!("  {} {}", r.kind(), r.describe());
    }
    Ok(())
}
