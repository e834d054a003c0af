//! `mesh inventory export` and `import`: the inventory as a sorted text document a team keeps in
//! git, and read back, saying what it changes first and removing nothing unless told.

use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
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
        /// The document `mesh inventory export` wrote (`-`: stdin).
        file: PathBuf,
        /// Allow the import to remove what the file lacks: nodes, assignments, tags, pinned host
        /// keys (or re-pin one to another key), ports the host gave out, pins, placements,
        /// settings and seats (as `settings set --replace` allows a layer to drop keys).
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
                None => {
                    // a backup cut short must not look like one: a full disk is an error; a
                    // closed pipe (`| head`) is the reader's choice
                    let mut stdout = std::io::stdout().lock();
                    stdout
                        .write_all(text.as_bytes())
                        .and_then(|()| stdout.flush())
                        .context(
                            "cannot write the inventory's export to stdout; it is incomplete",
                        )?;
                }
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

fn import(file: &Path, replace: bool, dry_run: bool, ctx: &Context) -> Result<u8> {
    let name = file.display().to_string();
    let text = read(file).with_context(|| format!("cannot read {name}"))?;
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
    // nothing to change: the file is left as it was
    if dry_run || changes.is_empty() {
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

/// The most a document may hold: a fleet of tens of thousands of nodes is a few MiB.
const MAX_DOCUMENT: u64 = 64 << 20;

/// A document: a regular file, or stdin (`-`), never more than [`MAX_DOCUMENT`] (a device such
/// as /dev/zero would never end).
fn read(file: &Path) -> Result<String> {
    let reader: Box<dyn Read> = if file == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(file)?;
        if !f.metadata()?.is_file() {
            bail!("not a regular file (a document is a file, or `-` for stdin)");
        }
        Box::new(f)
    };
    let mut text = String::new();
    reader.take(MAX_DOCUMENT + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_DOCUMENT {
        bail!(
            "larger than {} MiB: not an inventory export",
            MAX_DOCUMENT >> 20
        );
    }
    Ok(text)
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
