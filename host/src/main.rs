//! `mesh-host`: the helper mesh copies to each machine.
//!
//! It reads one declaration (JSON, see `mesh_wire`) on stdin, applies it (or with `--dry-run`
//! only says what it would do), keeps its record under `/var/lib/mesh/`, and writes one JSON
//! report on stdout. It is built static and calls no glibc NSS function: owners are looked up
//! with `getent`, so the machine's own NSS configuration answers.
//!
//! Exit status: 0 applied (some resources may have failed: the report says which), 2 the
//! declaration could not be read, 3 the record could not be read or written, 4 another helper run
//! holds the lock; `mesh_wire::EXIT_RECORD_LOST` and `EXIT_RECORD_UNREADABLE` when the record is
//! lost (signs of the mesh but no record) or cannot be trusted: then a `RecordRefusal` is printed
//! on stdout, and nothing on the machine was changed. `adopt` takes such a machine as it is now.
//!
//! A push that changes a resource asking for confirmation is kept, applied, and reverted by the
//! helper itself unless `mesh-host confirm ID` comes over a new connection in time (see
//! `confirm`): `confirm` exits 0 confirmed, `mesh_wire::EXIT_ALREADY_REVERTED` too late,
//! `EXIT_UNKNOWN_CHANGE` for a change it knows nothing of, and answers the same when asked again;
//! an apply or adopt while a change waits exits `EXIT_AWAITING`, the change's id on stdout;
//! `await-confirm ID --deadline SECONDS` is the waiter systemd runs, and
//! `revert-pending ID [--at-boot]` what systemd runs when that waiter stops, however it ends,
//! and early at boot when the machine went down during the wait.
//!
//! `mesh-host --root DIR COMMAND` works on a machine of a test's own: DIR stands for `/` (every
//! declared path under it, the helper's state in `DIR/var/lib/mesh`), and its units, packages
//! and accounts are the recording machine's (`system::Recording`), kept with its calls in
//! `DIR/var/lib/mesh/system/`. No root is needed.
//!
//! The machine keeps its last generations (see `generations`): `generations` lists them and
//! `rollback GEN`, run by root on the machine, takes it back to one with no operator.

mod adopt;
mod apply;
mod bus;
mod child;
mod confirm;
mod facts;
mod files;
mod generations;
mod interfaces;
mod owners;
mod parts;
mod record;
mod sealed;
mod signs;
mod steps;
mod system;
mod units;

use std::io::{Read, Write};
use std::process::ExitCode;

use mesh_wire::{HelperExit, Mode, VERSION};

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let paths = match machine(&mut args) {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("mesh-host: {e}");
            return ExitCode::from(HelperExit::Usage.status());
        }
    };
    match command(&args, &paths) {
        Ok(mode) => apply_sent(mode, &paths),
        Err(done) => done,
    }
}

/// The mode of a command that applies a declaration read on stdin; any other command is run
/// here, its exit status the `Err`.
fn command(args: &[String], paths: &record::Paths) -> Result<Mode, ExitCode> {
    let mode = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["apply"] => Mode::Apply,
        ["apply", "--dry-run"] | ["check"] => Mode::DryRun,
        ["adopt"] => Mode::Adopt,
        ["confirm", id] if mesh_wire::Awaiting::valid_id(id) => {
            return Err(ExitCode::from(confirm::confirm(id, paths)));
        }
        ["revert-pending", id] if mesh_wire::Awaiting::valid_id(id) => {
            return Err(ExitCode::from(confirm::revert_pending(id, false, paths)));
        }
        ["revert-pending", id, "--at-boot"] if mesh_wire::Awaiting::valid_id(id) => {
            return Err(ExitCode::from(confirm::revert_pending(id, true, paths)));
        }
        ["await-confirm", id, "--deadline", seconds, "--applier", pid]
            if mesh_wire::Awaiting::valid_id(id) =>
        {
            let (Ok(seconds), Ok(pid)) = (seconds.parse::<u64>(), pid.parse::<u32>()) else {
                eprintln!(
                    "mesh-host: --deadline takes whole seconds and --applier a process id, not \
                     {seconds:?} and {pid:?}"
                );
                return Err(ExitCode::from(HelperExit::Usage.status()));
            };
            return Err(ExitCode::from(confirm::await_confirm(
                id, seconds, pid, paths,
            )));
        }
        ["generations"] => {
            return Err(ExitCode::from(generations::list_command(paths)));
        }
        ["rollback", number] => {
            return Err(ExitCode::from(generations::rollback_command(number, paths)));
        }
        ["--version"] | ["version"] => {
            println!("mesh-host {} (wire {VERSION})", env!("CARGO_PKG_VERSION"));
            return Err(ExitCode::SUCCESS);
        }
        _ => {
            eprintln!(
                "usage: mesh-host apply [--dry-run] | adopt < declaration.json; \
                 mesh-host confirm ID | await-confirm ID --deadline SECONDS --applier PID | revert-pending ID [--at-boot]; \
                 mesh-host generations | rollback GEN (as root, on the machine); \
                 mesh-host --root DIR COMMAND: DIR stands for the machine's /"
            );
            return Err(ExitCode::from(HelperExit::Usage.status()));
        }
    };
    Ok(mode)
}

/// Reads the declaration on stdin and applies it (or only measures, or adopts), writing the
/// report on stdout.
fn apply_sent(mode: Mode, paths: &record::Paths) -> ExitCode {
    steps::start();
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("mesh-host: cannot read the declaration on stdin: {e}");
        return ExitCode::from(HelperExit::Usage.status());
    }
    // how long the operator's declaration took to arrive, whole
    steps::done("declaration received");
    let mut declaration = match mesh_wire::read::declaration(input.as_bytes()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("mesh-host: {e}");
            return ExitCode::from(HelperExit::Usage.status());
        }
    };
    steps::done("declaration read");
    // what the machine keeps of a generation keeps its secrets sealed
    let sent = declaration.clone();
    if let Err(e) = sealed::open_environments(&mut declaration, &paths.machine) {
        eprintln!("mesh-host: {e}");
        return ExitCode::from(HelperExit::Usage.status());
    }
    steps::done("secrets opened");
    // from here a step that hangs is ended when the operator goes away, not only at its deadline
    child::watch_operator();
    let mut report = match confirm::run_as_sent(&declaration, &sent, mode, paths) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mesh-host: {e}");
            say_as_data(&e);
            return ExitCode::from(e.exit_code());
        }
    };
    if mode == Mode::Apply {
        // the helper's own leftovers, not the machine's: parts of stores cut short long ago
        parts::sweep(&paths.root.join("bin"), std::time::SystemTime::now());
    }
    steps::done("the rest of the run");
    // writing the answer is the one step it cannot carry
    report.steps = steps::taken();
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, &report).is_ok() && out.flush().is_ok();
    if written {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(HelperExit::Unwritten.status())
    }
}

/// A refusal, a stale push or a change awaiting its confirmation is also said as data on
/// stdout, for the operator to name it and its fix.
fn say_as_data(e: &apply::Error) {
    // nobody may be reading any more (the operator went away): not a panic
    if let apply::Error::Refused(refusal) = e
        && let Ok(json) = serde_json::to_string(refusal)
    {
        let _ = writeln!(std::io::stdout(), "{json}");
    }
    if let apply::Error::Stale(stale) = e
        && let Ok(json) = serde_json::to_string(stale)
    {
        let _ = writeln!(std::io::stdout(), "{json}");
    }
    if let apply::Error::Awaiting(id) = e {
        let _ = writeln!(std::io::stdout(), "{id}");
    }
}

/// The machine this run works on, from a leading `--root DIR` (taken off `args`): a directory
/// standing for `/`, for tests (every declared path and the helper's state under it); without
/// it, the machine itself.
fn machine(args: &mut Vec<String>) -> Result<record::Paths, RootError> {
    if args.first().map(String::as_str) != Some("--root") {
        return Ok(record::Paths::default());
    }
    let Some(dir) = args.get(1).cloned() else {
        return Err(RootError::NoDirectory);
    };
    args.drain(..2);
    // one absolute name, links resolved once: the walk never follows one below it
    let resolved = std::fs::canonicalize(&dir).map_err(|error| RootError::Unreadable {
        dir: dir.clone(),
        error,
    })?;
    if !resolved.is_dir() {
        return Err(RootError::NotADirectory(resolved));
    }
    Ok(record::Paths::under(&resolved))
}

/// A `--root DIR` that names no directory to work under.
#[derive(Debug)]
enum RootError {
    NoDirectory,
    Unreadable { dir: String, error: std::io::Error },
    NotADirectory(std::path::PathBuf),
}

impl std::fmt::Display for RootError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RootError::NoDirectory => write!(f, "--root takes a directory"),
            RootError::Unreadable { dir, error } => write!(f, "--root {dir}: {error}"),
            RootError::NotADirectory(dir) => write!(f, "--root {}: not a directory", dir.display()),
        }
    }
}
