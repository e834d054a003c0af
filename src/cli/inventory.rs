//! `mesh inventory export` and `import`: the inventory as a sorted text document a team keeps in
//! git, and read back, saying what it changes first and removing nothing unless told.

use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use clap::Subcommand;

use super::answers::commands::{Exported, Imported};
use super::{Context, exit, print_json};
use std::collections::HashMap;

use crate::inventory::export::{AssignmentEntry, Changes, Document};
use crate::inventory::import::changes;
use crate::inventory::{Inventory, InventoryError};
use crate::resolve::consumers::Consumer;

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
        /// Take away a provider that answers consumers (the file lacks it, or runs another module
        /// under its name), as `mesh unassign --force` does: they are held, keeping what they
        /// have, until they are unassigned or pinned to another provider.
        #[arg(long)]
        force: bool,
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
                        Exported { exported: &path },
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
            force,
        } => import(&file, Allow { replace, force }, dry_run, ctx),
    }
}

/// What an import may do beyond adding and changing: remove (`--replace`), and take away a
/// provider its consumers stay without (`--force`).
struct Allow {
    replace: bool,
    force: bool,
}

fn import(file: &Path, allow: Allow, dry_run: bool, ctx: &Context) -> Result<u8> {
    let name = file.display().to_string();
    let text = read(file).with_context(|| format!("cannot read {name}"))?;
    let doc = Document::parse(
        &name,
        &text,
        &crate::push::route::BySsh(&crate::ssh::config::SshConfig::load()?),
    )?;
    let cat = ctx.catalogue()?;
    doc.check_catalogue(&name, &cat)?;
    let path = ctx.inventory_path()?;
    let mut inv = match Inventory::open(&path) {
        Ok(inv) => inv,
        Err(InventoryError::Storage(crate::inventory::StorageError::Missing { .. }))
            if !dry_run =>
        {
            Inventory::init(&path)?
        }
        Err(InventoryError::Storage(crate::inventory::StorageError::Missing { .. })) => {
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
        allow.replace,
    )?;
    refuse_orphans(&inv, &cat, &doc, &name, allow.force)?;
    inv.import(&doc)?;
    show(&changes, false, ctx)
}

/// A provider is never taken away silently, by an import as by `mesh unassign`: an assignment
/// the file lacks, or runs another module under its name, that answers consumers the file keeps
/// is refused, naming them, unless `--force`.
fn refuse_orphans(
    inv: &Inventory,
    cat: &crate::catalogue::Catalogue,
    doc: &Document,
    name: &str,
    force: bool,
) -> Result<()> {
    let in_file: HashMap<(&str, &str), (usize, &AssignmentEntry)> = doc
        .assignments
        .iter()
        .enumerate()
        .map(|(i, a)| ((a.node.as_str(), a.instance.as_str()), (i, a)))
        .collect();
    // each assignment taken away, with the field that says so
    let mut taken = Vec::new();
    let mut field = HashMap::new();
    for old in inv.assignments(None)? {
        let why = match in_file.get(&(old.node.as_str(), old.instance.as_str())) {
            None => format!(
                "assignments: {} on {} is not in the file",
                old.instance, old.node
            ),
            Some((i, new)) if new.module != old.module => format!(
                "assignments[{i}].module: {} on {} runs {} in the file, not {}",
                old.instance, old.node, new.module, old.module
            ),
            Some(_) => continue,
        };
        field.insert(format!("{}@{}", old.instance, old.node), why);
        taken.push((old.node, old.instance));
    }
    // a consumer the file takes off, gives another module, or pins to a provider that stays is
    // answered otherwise
    let otherwise = |c: &Consumer| match in_file.get(&(c.node.as_str(), c.instance.as_str())) {
        Some((_, a)) => {
            a.module != c.module
                || a.pins
                    .get(&c.requirement)
                    .is_some_and(|p| !field.contains_key(p))
        }
        None => true,
    };
    let orphans =
        inv.trial(|inv| crate::resolve::consumers::orphaned(inv, cat, &taken, &otherwise))?;
    if orphans.is_empty() || force {
        return Ok(());
    }
    let mut fields: Vec<&str> = orphans
        .iter()
        .filter_map(|(provider, _)| field.get(provider).map(String::as_str))
        .collect();
    fields.dedup();
    let list: Vec<String> = orphans
        .iter()
        .map(|(provider, c)| format!("  - {provider} answers {}", c.describe()))
        .collect();
    bail!(
        "{name}: {}: it answers consumers the file keeps; nothing was imported:\n{}\nput it back \
         in the file, take them off or pin them to another provider there, or say --force to \
         leave them held, keeping what they have (as `mesh unassign --force` does)",
        fields.join("; "),
        list.join("\n")
    )
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
        print_json(&Imported {
            dry_run,
            added: &changes.added,
            changed: &changes.changed,
            removed: &changes.removed,
        })?;
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
