//! `mesh-host generations` and `mesh-host rollback GEN`, run by root on the machine's console:
//! the boot menu of NixOS, on any Linux. A rollback applies the kept declaration of GEN as a push
//! would (the same apply: what GEN did not have is given back, units paid what the changes cost
//! them), under the machine's lock, and makes a new generation marked as rolled back to GEN: the
//! operator's next push, planned against the one before, is refused as stale until `mesh check`
//! has seen it. Nothing asks for a confirmation: root at the console is the one who would give
//! it, and no connection can be cut.

use mesh_wire::HelperExit;
use std::fmt;
use std::io;

use mesh_wire::{Declaration, Generation, Report, State};

use super::Stored;
use crate::apply;
use crate::record::{Paths, Record};

/// Why a rollback was refused or could not be made.
#[derive(Debug)]
pub(crate) enum Error {
    /// Only root may change the machine.
    NotRoot,
    /// The machine keeps no generation `asked`; `kept` are those it keeps.
    Unknown { asked: String, kept: Vec<u64> },
    /// The kept generations cannot be read or written.
    Store(io::Error),
    /// The kept file of the generation asked for cannot be read.
    Unreadable(super::Unreadable),
    /// A secret of the generation cannot be opened with the host key.
    Sealed(crate::sealed::UnsealError),
    /// The apply was refused before it began (lock, record, a change awaiting confirmation).
    Apply(apply::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotRoot => write!(
                f,
                "only root changes this machine: run `sudo mesh-host rollback GEN`; nothing \
                 was changed"
            ),
            Error::Unknown { asked, kept } if kept.is_empty() => write!(
                f,
                "this machine keeps no generation {asked}: it keeps none yet (a push the \
                 machine confirmed makes one)"
            ),
            Error::Unknown { asked, kept } => write!(
                f,
                "this machine keeps no generation {asked}: it keeps {} (`mesh-host \
                 generations` lists them)",
                kept.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Error::Store(e) => write!(f, "the kept generations cannot be used: {e}"),
            Error::Unreadable(u) => write!(
                f,
                "generation {} cannot be rolled back to: its kept file {} cannot be read ({}); \
                 nothing was changed (`mesh-host generations` lists those that can be)",
                u.number,
                u.file.display(),
                u.why
            ),
            Error::Sealed(e) => write!(f, "nothing was changed: {e}"),
            Error::Apply(e) => write!(f, "{e}"),
        }
    }
}

impl From<apply::Error> for Error {
    fn from(e: apply::Error) -> Self {
        Error::Apply(e)
    }
}

impl From<crate::record::LoadError> for Error {
    fn from(e: crate::record::LoadError) -> Self {
        Error::Apply(e.into())
    }
}

impl Error {
    fn exit_code(&self) -> u8 {
        match self {
            Error::NotRoot | Error::Unknown { .. } | Error::Sealed(_) => HelperExit::Usage.status(),
            Error::Store(_) | Error::Unreadable(_) => HelperExit::Record.status(),
            Error::Apply(e) => e.exit_code(),
        }
    }
}

/// `mesh-host generations`: the kept generations, oldest first, the machine's own marked; exit
/// 3 when a kept file cannot be read (every other is listed, and it is named with why).
pub(crate) fn list_command(paths: &Paths) -> u8 {
    match listing(paths) {
        Ok((text, 0)) => {
            print!("{text}");
            HelperExit::Done.status()
        }
        Ok((text, unreadable)) => {
            print!("{text}");
            eprintln!(
                "mesh-host generations: {unreadable} kept generation file{} cannot be read \
                 (named above)",
                if unreadable == 1 { "" } else { "s" }
            );
            HelperExit::Record.status()
        }
        Err(e) => {
            eprintln!("mesh-host generations: {e}");
            HelperExit::Record.status()
        }
    }
}

/// What `mesh-host generations` prints, and how many kept files it could not read (each named
/// in its place, with why).
pub(crate) fn listing(paths: &Paths) -> Result<(String, usize), Error> {
    let super::Kept { stored, unreadable } = super::list(paths).map_err(Error::Store)?;
    let current = Record::load(paths)?.and_then(|r| r.generation);
    if stored.is_empty() && unreadable.is_empty() {
        return Ok((
            "this machine keeps no generation yet (a push it confirms makes one)\n".into(),
            0,
        ));
    }
    let mut out = String::from("generation  applied (UTC)        inventory         resources\n");
    let mut bad = unreadable.iter().peekable();
    for Stored {
        generation: g,
        declaration,
    } in &stored
    {
        while let Some(u) = bad.next_if(|u| u.number < g.number) {
            out.push_str(&unreadable_line(u));
        }
        let inventory = if g.inventory.is_empty() {
            "-"
        } else {
            g.inventory.as_str()
        };
        out.push_str(&format!(
            "{:>10}  {}  {inventory:<16}  {:>9}",
            g.number,
            mesh_wire::utc(g.pushed_at),
            declaration.resources.len()
        ));
        if let Some(to) = g.rolled_back_to {
            out.push_str(&format!("  rolled back to {to} on the machine"));
        }
        if current.as_ref().is_some_and(|c| c.number == g.number) {
            out.push_str("  (current)");
        }
        out.push('\n');
    }
    for u in bad {
        out.push_str(&unreadable_line(u));
    }
    Ok((out, unreadable.len()))
}

/// A kept generation's line when its file cannot be read.
fn unreadable_line(u: &super::Unreadable) -> String {
    format!(
        "{:>10}  UNREADABLE, cannot be rolled back to: {}: {}\n",
        u.number,
        u.file.display(),
        u.why
    )
}

/// `mesh-host rollback GEN`: exit 0 rolled back, 1 when a resource failed (the report says
/// which), 2 refused, as [`Error::exit_code`] otherwise.
pub(crate) fn rollback_command(asked: &str, paths: &Paths) -> u8 {
    let done = if rustix::process::geteuid().is_root() {
        roll_back(asked, paths)
    } else {
        Err(Error::NotRoot)
    };
    match done {
        Ok(report) => {
            print!("{}", said(&report, asked));
            u8::from(report.failed())
        }
        Err(e) => {
            eprintln!("mesh-host rollback: {e}");
            e.exit_code()
        }
    }
}

/// Takes the machine back to its kept generation `asked`, as a push of its declaration would,
/// and makes the next generation, marked as rolled back to it.
pub(crate) fn roll_back(asked: &str, paths: &Paths) -> Result<Report, Error> {
    let unknown = || -> Result<Error, Error> {
        let kept = super::numbers(paths).map_err(Error::Store)?;
        Ok(Error::Unknown {
            asked: asked.to_string(),
            kept,
        })
    };
    let Ok(number) = asked.parse::<u64>() else {
        return Err(unknown()?);
    };
    let Some(stored) = super::load(paths, number).map_err(Error::Unreadable)? else {
        return Err(unknown()?);
    };
    let held = apply::Held::to_apply(paths, true)?;
    if let Some(id) = crate::confirm::awaiting(paths, &held).map_err(|e| Error::Apply(e.into()))? {
        return Err(Error::Apply(apply::Error::Awaiting(id)));
    }
    let record = held.record(paths, true)?;
    let before = record.generation.clone();
    let mut declaration = Declaration {
        expects_record: true,
        planned: None,
        ..stored.declaration.clone()
    };
    crate::sealed::open_environments(&mut declaration, &paths.machine).map_err(Error::Sealed)?;
    let mut report = apply::run_held(&declaration, false, paths, &held, record)?;
    // as for a push: what changes nothing is no generation (the machine has GEN's content, and
    // is where the operator last saw it)
    let changed = !report.units.is_empty()
        || report
            .resources
            .iter()
            .any(|o| matches!(o.state, State::Created | State::Changed | State::Removed));
    if !changed {
        return Ok(report);
    }
    let generation = Generation {
        number: mesh_wire::next_number(before.as_ref(), None),
        inventory: stored.generation.inventory.clone(),
        pushed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        rolled_back_to: Some(number),
        push: None,
    };
    // the apply saved its record; the generation it wrote is this one, said as a rollback
    let mut record = Record::load(paths)?.ok_or_else(|| {
        Error::Store(io::Error::other(
            "the record is gone after the apply: the rollback is applied, its generation not said",
        ))
    })?;
    record.generation = Some(generation.clone());
    record.save(paths).map_err(|e| Error::Apply(e.into()))?;
    super::keep(paths, &generation, &stored.declaration).map_err(Error::Store)?;
    report.generation = Some(generation);
    Ok(report)
}

/// What a rollback says on the console: never that nothing changed when something failed
///; what failed and what was applied are each listed after the first line.
pub(super) fn said(report: &Report, asked: &str) -> String {
    let mut out = String::new();
    let failed = failures(report);
    let made = report
        .generation
        .as_ref()
        .filter(|g| g.rolled_back_to.is_some_and(|to| to.to_string() == asked));
    let at = report.generation.as_ref().map_or(0, |g| g.number);
    let stale = "the operator's next push is refused as stale until `mesh check` has seen it";
    out.push_str(&match (made, failed.is_empty()) {
        (Some(g), true) => format!(
            "rolled back to generation {asked}: the machine is at generation {} now; {stale}\n",
            g.number
        ),
        (Some(g), false) => format!(
            "rolled back to generation {asked} only in part: {} FAILED and {} applied (below); \
             the machine is at generation {} now, with what was applied; {stale}; run \
             `mesh-host rollback {asked}` again once what failed is mended\n",
            failed.join(" and "),
            counted(applied(report), "change"),
            g.number
        ),
        (None, false) => format!(
            "NOT rolled back to generation {asked}: {} FAILED (below), and nothing else \
             needed a change; the machine stays at generation {at}\n",
            failed.join(" and ")
        ),
        (None, true) => format!(
            "nothing changed: the machine has what generation {asked} declares already, and \
             stays at generation {at}\n"
        ),
    });
    for o in &report.resources {
        let word = match o.state {
            State::Unchanged => continue,
            State::Created => "created",
            State::Changed => "changed",
            State::Removed => "given back",
            State::Failed => "FAILED",
        };
        out.push_str(&format!("  {word:<10} {}: {}\n", o.id, o.detail));
    }
    for u in &report.units {
        let line = match &u.error {
            Some(e) => format!(
                "  {:<10} {}: its {} failed, still owed: {e}\n",
                "FAILED",
                u.unit,
                u.action.as_str()
            ),
            None => format!(
                "  {:<10} {}: {}\n",
                u.action.as_str(),
                u.unit,
                u.done.as_deref().unwrap_or("")
            ),
        };
        out.push_str(&line);
    }
    out
}

/// What failed in `report`, counted: `1 resource`, `2 units`.
fn failures(report: &Report) -> Vec<String> {
    let resources = report
        .resources
        .iter()
        .filter(|o| o.state == State::Failed)
        .count();
    let units = report.units.iter().filter(|u| u.error.is_some()).count();
    [(resources, "resource"), (units, "unit")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, noun)| counted(n, noun))
        .collect()
}

/// How many resources were created, changed or given back, and units paid.
fn applied(report: &Report) -> usize {
    let resources = report
        .resources
        .iter()
        .filter(|o| matches!(o.state, State::Created | State::Changed | State::Removed))
        .count();
    resources + report.units.iter().filter(|u| u.error.is_none()).count()
}

fn counted(n: usize, one: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {one}s")
    }
}
