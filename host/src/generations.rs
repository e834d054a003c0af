//! The machine's own generations: the declaration of each of its last [`KEPT`]
//! generations as the push sent it, bundles and all (a secret stays sealed to the host key),
//! in `generations/<number>.json` (root's, 0600, in a 0700 directory). With them root on the
//! machine lists its generations (`mesh-host generations`) and goes back to one
//! (`mesh-host rollback GEN`, see [`rollback`]) with no operator and no network.
//!
//! A generation is kept once it is the machine's for good: an apply that asked for no
//! confirmation at once; one awaiting its confirmation only when it is confirmed (until then
//! it waits in the change's kept directory, and a revert drops it with that directory).

mod rollback;
#[cfg(test)]
mod tests;

pub(crate) use rollback::{list_command, rollback_command};

use std::io;
use std::path::{Path, PathBuf};

use mesh_wire::{Declaration, Generation, Report};
use serde::{Deserialize, Serialize};

use crate::files;
use crate::record::Paths;

/// How many generations the machine keeps: the oldest past these are dropped.
pub(crate) const KEPT: usize = 10;

/// The name of a generation waiting in a change's kept directory for its confirmation.
const AWAITING: &str = "generation.json";

/// One kept generation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Stored {
    pub(crate) generation: Generation,
    /// What was applied, as the push sent it (for a rollback: the declaration it applied again).
    pub(crate) declaration: Declaration,
}

fn dir(paths: &Paths) -> PathBuf {
    paths.root.join("generations")
}

fn file(paths: &Paths, number: u64) -> PathBuf {
    dir(paths).join(format!("{number}.json"))
}

fn bytes(generation: &Generation, sent: &Declaration) -> io::Result<Vec<u8>> {
    let stored = Stored {
        generation: generation.clone(),
        // which generation it was planned against says nothing once it is one
        declaration: Declaration {
            planned: None,
            ..sent.clone()
        },
    };
    serde_json::to_vec(&stored).map_err(io::Error::other)
}

/// Keeps `generation`, made by applying `sent`, and drops the oldest past [`KEPT`].
pub(crate) fn keep(paths: &Paths, generation: &Generation, sent: &Declaration) -> io::Result<()> {
    let dir = dir(paths);
    files::HOST.private_dir(&dir, 0o700)?;
    files::HOST.write_atomically(
        &file(paths, generation.number),
        &bytes(generation, sent)?,
        None,
        0o600,
    )?;
    prune(paths)
}

/// The generation `report` made, if it made one (`before`: the machine's until then).
fn made<'a>(report: &'a Report, before: Option<&Generation>) -> Option<&'a Generation> {
    report.generation.as_ref().filter(|g| before != Some(*g))
}

/// Keeps the generation `report` made, if it made one, by applying `sent`. The push is applied
/// whether or not it can be kept: a machine that cannot keep it says so in the report (and on
/// stderr), and keeps the older ones.
pub(crate) fn keep_made(
    report: &mut Report,
    before: Option<&Generation>,
    sent: &Declaration,
    paths: &Paths,
) {
    if let Some(made) = made(report, before)
        && let Err(e) = keep(paths, made, sent)
    {
        not_kept(report, made.number, &e);
    }
}

/// Says, in `report` and on stderr, that generation `number` is not kept.
fn not_kept(report: &mut Report, number: u64, e: &io::Error) {
    let said = format!("generation {number} is not kept on the machine: {e}");
    eprintln!("mesh-host: {said}");
    report.generation_not_kept = Some(said);
}

/// As [`keep_made`] for a change awaiting its confirmation, kept in `kept` (its kept directory):
/// the generation is the machine's once the change is confirmed, and a revert drops it.
pub(crate) fn keep_made_awaiting(
    kept: &Path,
    report: &mut Report,
    before: Option<&Generation>,
    sent: &Declaration,
) {
    if let Some(made) = made(report, before)
        && let Err(e) = keep_awaiting(kept, made, sent)
    {
        not_kept(report, made.number, &e);
    }
}

/// Puts `generation` aside in `kept` (a change's kept directory) until the change is confirmed.
pub(crate) fn keep_awaiting(
    kept: &Path,
    generation: &Generation,
    sent: &Declaration,
) -> io::Result<()> {
    files::HOST.write_atomically(&kept.join(AWAITING), &bytes(generation, sent)?, None, 0o600)
}

/// The change whose kept directory is `kept` is confirmed: its generation, if it made one, is
/// the machine's now.
pub(crate) fn settle_confirmed(kept: &Path, paths: &Paths) -> io::Result<()> {
    let Some(found) = files::HOST.read(&kept.join(AWAITING))? else {
        return Ok(());
    };
    let stored: Stored = serde_json::from_slice(&found.bytes).map_err(io::Error::other)?;
    keep(paths, &stored.generation, &stored.declaration)
}

/// What the machine keeps: each generation it can read, and each kept file it cannot.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// The readable generations, oldest first.
    pub(crate) stored: Vec<Stored>,
    /// The kept files that cannot be read, lowest number first.
    pub(crate) unreadable: Vec<Unreadable>,
}

/// A kept generation's file that cannot be read (truncated, edited, unreadable), and why.
#[derive(Debug)]
pub(crate) struct Unreadable {
    pub(crate) number: u64,
    pub(crate) file: PathBuf,
    pub(crate) why: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.why)
    }
}

/// Every kept generation, oldest first. A file that cannot be read is named with why, not
/// skipped, and hides none of the others: a rollback must not pass over
/// what the machine has, nor lose every generation to one bad file.
pub(crate) fn list(paths: &Paths) -> io::Result<Kept> {
    let mut kept = Kept::default();
    for number in numbers(paths)? {
        match load(paths, number) {
            Ok(stored) => kept.stored.extend(stored),
            Err(unreadable) => kept.unreadable.push(unreadable),
        }
    }
    Ok(kept)
}

/// Generation `number`, if the machine keeps it; its file named, with why, if it cannot be read.
pub(crate) fn load(paths: &Paths, number: u64) -> Result<Option<Stored>, Unreadable> {
    let at = file(paths, number);
    let unreadable = |why: String| Unreadable {
        number,
        file: at.clone(),
        why,
    };
    let Some(found) = files::HOST
        .read(&at)
        .map_err(|e| unreadable(e.to_string()))?
    else {
        return Ok(None);
    };
    serde_json::from_slice(&found.bytes)
        .map(Some)
        .map_err(|e| unreadable(e.to_string()))
}

/// The numbers of the kept generations, lowest first.
fn numbers(paths: &Paths) -> io::Result<Vec<u64>> {
    let entries = match std::fs::read_dir(dir(paths)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut numbers: Vec<u64> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json")?.parse().ok()
        })
        .collect();
    numbers.sort_unstable();
    Ok(numbers)
}

/// Drops all but the [`KEPT`] highest-numbered generations.
fn prune(paths: &Paths) -> io::Result<()> {
    let numbers = numbers(paths)?;
    let extra = numbers.len().saturating_sub(KEPT);
    for number in &numbers[..extra] {
        files::HOST.remove(&file(paths, *number))?;
    }
    Ok(())
}
