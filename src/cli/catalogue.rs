//! `mesh catalogue add|remove|list`: the catalogue folders the inventory remembers, read by every
//! command before the folders `--catalogue` (or `MESH_CATALOGUE`) adds, so a push from cron, with
//! no environment and no terminal, plans what the operator's shell plans.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use clap::Subcommand;

use super::answers::commands::{CatalogueChanged, CatalogueFolders};
use super::{Context, exit, print_json};
use crate::catalogue::Catalogue;
use crate::inventory::Inventory;

#[derive(Subcommand, Debug)]
pub(crate) enum CatalogueCommand {
    /// Remember folders of modules (each read after the ones remembered before it, so a module
    /// there overrides a built-in one, or an earlier folder's, of the same name).
    Add {
        /// The folders, each holding module folders (or a module.json); kept absolute.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    /// Forget remembered folders (their modules stay on disk; assignments of them are then
    /// refused until a folder has them again).
    Remove {
        /// The folders, as `mesh catalogue list` shows them (or relative to here).
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    /// The remembered folders, in the order they are read.
    List,
}

pub(crate) fn run(command: CatalogueCommand, ctx: &Context) -> Result<u8> {
    let inv = ctx.inventory()?;
    match command {
        CatalogueCommand::Add { dirs } => {
            for dir in dirs {
                let (dir, new) = remember(&inv, &dir)?;
                if new {
                    ctx.answer(
                        CatalogueChanged::Remembered(&dir),
                        format_args!("remembered the catalogue folder {}", dir.display()),
                    );
                } else {
                    ctx.answer(
                        CatalogueChanged::RememberedAlready(&dir),
                        format_args!("the inventory remembers {} already", dir.display()),
                    );
                }
            }
        }
        CatalogueCommand::Remove { dirs } => {
            for dir in dirs {
                let dir = absolute(&dir)?;
                if !inv.forget_catalogue_folder(&dir)? {
                    bail!(
                        "the inventory does not remember the catalogue folder {} (`mesh catalogue \
                         list` says which it does)",
                        dir.display()
                    );
                }
                ctx.answer(
                    CatalogueChanged::Forgotten(&dir),
                    format_args!("forgot the catalogue folder {}", dir.display()),
                );
            }
        }
        CatalogueCommand::List => {
            let folders = inv.catalogue_folders()?;
            if ctx.json {
                print_json(&CatalogueFolders { folders: &folders })?;
            } else if folders.is_empty() {
                out!(
                    "no catalogue folder remembered: the built-in modules only (`mesh catalogue add DIR`)"
                );
            } else {
                for f in &folders {
                    out!("{}", f.display());
                }
            }
        }
    }
    Ok(exit::OK)
}

/// `dir` made absolute (as given, from the working directory: a link stays the link the
/// operator named), and refused where it is not UTF-8.
fn absolute(dir: &Path) -> Result<PathBuf> {
    let dir = std::path::absolute(dir)
        .with_context(|| format!("the catalogue folder {}", dir.display()))?;
    if dir.to_str().is_none() {
        bail!(
            "the catalogue folder {} is not UTF-8: name it otherwise",
            dir.display()
        );
    }
    Ok(dir)
}

/// `dir` absolute, once it is checked to hold modules.
pub(crate) fn checked(dir: &Path) -> Result<PathBuf> {
    let dir = absolute(dir)?;
    let catalogue = Catalogue::load(std::slice::from_ref(&dir))?;
    if !catalogue.empty_folders().is_empty() {
        bail!(
            "the catalogue folder {} holds no module (no module.json in it or in a folder \
             directly below it): nothing remembered",
            dir.display()
        );
    }
    Ok(dir)
}

/// Remembers `dir` once it is [`checked`]; returns it absolute, and `false` where it was
/// remembered already.
fn remember(inv: &Inventory, dir: &Path) -> Result<(PathBuf, bool)> {
    let dir = checked(dir)?;
    let new = inv.remember_catalogue_folder(&dir)?;
    Ok((dir, new))
}
