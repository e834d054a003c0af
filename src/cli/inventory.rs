//! `mesh inventory export` and `import`: the inventory as a sorted text document a team keeps in
//! git, and read back, saying what it changes first and removing nothing unless told.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Subcommand;

use super::{Context, exit, print_json};
use crate::inventory::export::{Changes, Document};
use crate::inventory::import::changes;
use crate::inventory::{Inventory, InventoryError};

#[derive(Subcommand, Debug)]
pub(crate) enum InventoryCommand {
    /// Write the whole inventory as a sorted JSON document (nodes, pinned keys, tags, ports,
    /// assignments, pins, placements, settings layers, seats). Generated secrets are left out;
    /// pushes and what the machines confirmed too.
    Export {
        /// Write it to this file [default: stdout].
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Make the inventory what an exported document says (creating the inventory if there is
    /// none). What it adds, changes and removes is shown first; removing anything needs
    /// --replace.
    Import {
        /// The document `mesh inventory export` wrote.
        file: PathBuf,
        /// Allow the import to remove nodes, assignments, tags, settings and seats the file
        /// lacks (as `settings set --replace` allows a layer to drop keys).
        #[arg(long)]
        replace: bool,
        /// Only show what it would change.
        #[arg(long)]
        dry_run: bool,
    },
}

pub(crate) fn run(command: InventoryCommand, ctx: &Context) -> Result<u8> {
    match command {
        InventoryCommand::Export { output } => {
            let text = ctx.inventory()?.export()?.to_text();
            match output {
                Some(path) => {
                    std::fs::write(&path, &text)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    ctx.answer(
                        serde_json::json!({"exported": path}),
                        format_args!("exported the inventory to {}", path.display()),
                    );
                }
                None => out_raw!("{text}"),
            }
            Ok(exit::OK)
        }
        InventoryCommand::Import {
            file,
            replace,
            dry_run,
        } => import(&file, replace, dry_run, ctx),
    }
}

fn import(file: &PathBuf, replace: bool, dry_run: bool, ctx: &Context) -> Result<u8> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {name}"))?;
    let doc = Document::parse(&name, &text, &crate::ssh::config::SshConfig::load()?)?;
    let path = ctx.inventory_path()?;
    let mut inv = match Inventory::open(&path) {
        Ok(inv) => inv,
        Err(InventoryError::Missing { .. }) if !dry_run => Inventory::init(&path)?,
        Err(InventoryError::Missing { .. }) => {
            return show(&changes(&Document::empty(), &doc), true, ctx);
        }
        Err(e) => return Err(e.into()),
    };
    let changes = inv.import_changes(&doc)?;
    if dry_run {
        return show(&changes, true, ctx);
    }
    super::settings::refuse_removal(
        &format!(
            "the inventory {} has what {name} lacks",
            inv.path().display()
        ),
        &changes.removed,
        &|them| format!("Put {them} in the file"),
        replace,
    )?;
    inv.import(&doc)?;
    show(&changes, false, ctx)
}

fn show(changes: &Changes, dry_run: bool, ctx: &Context) -> Result<u8> {
    if ctx.json {
        print_json(&serde_json::json!({
            "dry-run": dry_run,
            "added": changes.added,
            "changed": changes.changed,
            "removed": changes.removed,
        }))?;
        return Ok(exit::OK);
    }
    if changes.is_empty() {
        out!("nothing to import: the inventory already says what the file says");
        return Ok(exit::OK);
    }
    for (sign, list) in [
        ('+', &changes.added),
        ('~', &changes.changed),
        ('-', &changes.removed),
    ] {
        for thing in list {
            out!("{sign} {}", crate::plan::visible(thing));
        }
    }
    out!(
        "{} {} added, {} changed, {} removed",
        if dry_run { "would be:" } else { "imported:" },
        changes.added.len(),
        changes.changed.len(),
        changes.removed.len()
    );
    Ok(exit::OK)
}
