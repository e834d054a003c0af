//! What became of each change that awaited confirmation, one note per change id in
//! `changes/<id>`: `confirmed` or `reverted`. A confirm whose answer was lost on the way back (the
//! connection dropped before its exit status) is asked again, and must hear what happened, not
//! "no such change"; the `reverted/` notes cannot say it, since the next apply says them once
//! and drops them. Only the last [`CHANGES_NOTED`] changes are kept: a machine's notes stay small
//! however many pushes it sees.

use std::io;
use std::path::{Path, PathBuf};

use mesh_wire::CHANGES_NOTED;

use crate::files;
use crate::record::Paths;

/// What became of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    Confirmed,
    Reverted,
}

impl Fate {
    fn word(self) -> &'static str {
        match self {
            Fate::Confirmed => "confirmed",
            Fate::Reverted => "reverted",
        }
    }
}

fn dir(paths: &Paths) -> PathBuf {
    paths.root.join("changes")
}

/// Notes that change `id` was `fate`, and forgets the oldest notes past [`CHANGES_NOTED`].
pub(crate) fn note(paths: &Paths, id: &str, fate: Fate) -> io::Result<()> {
    let dir = dir(paths);
    files::HOST.private_dir(&dir, 0o700)?;
    files::HOST.write_atomically(&dir.join(id), fate.word().as_bytes(), None, 0o600)?;
    prune(&dir, id);
    Ok(())
}

/// What note says became of change `id`, if one does.
pub(crate) fn fate(paths: &Paths, id: &str) -> io::Result<Option<Fate>> {
    let Some(found) = files::HOST.read(&dir(paths).join(id))? else {
        return Ok(None);
    };
    Ok(match found.bytes.as_slice() {
        b"confirmed" => Some(Fate::Confirmed),
        b"reverted" => Some(Fate::Reverted),
        _ => None,
    })
}

/// Keeps the newest [`CHANGES_NOTED`] notes (by when they were written), `just` always among
/// them; a note that cannot be dropped only costs space.
fn prune(dir: &Path, just: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut notes: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name() != just)
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if notes.len() < CHANGES_NOTED {
        return;
    }
    notes.sort();
    let extra = notes.len() + 1 - CHANGES_NOTED;
    for (_, path) in notes.into_iter().take(extra) {
        let _ = files::HOST.remove(&path);
    }
}
