//! The command line: clap definitions, and dispatch to one small function per command. Errors
//! become `anyhow` here and nowhere below; the exit status says how things went.
//!
//! Exit status: see [`EXIT_CODES`], shown in `--help` too.

/// Prints a line on stdout through [`out`]: a closed pipe ends the command quietly.
macro_rules! out {
    () => { $crate::cli::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Like [`out!`], without the newline.
macro_rules! out_raw {
    ($($arg:tt)*) => { $crate::cli::out(format_args!($($arg)*)) };
}

/// Prints a line on stderr through [`err`]: a closed stderr (`2>&-`) loses the line, nothing else.
macro_rules! err {
    ($($arg:tt)*) => { $crate::cli::err(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Like [`err!`], without the newline.
macro_rules! err_raw {
    ($($arg:tt)*) => { $crate::cli::err(format_args!($($arg)*)) };
}

mod adopt;
mod answers;
mod apply;
mod assign;
mod catalogue;
mod check;
mod complete;
mod config;
mod examples;
mod facts;
mod held_at;
mod history;
mod init;
mod inventory;
mod lab;
mod man;
mod modules;
mod nodes;
mod output;
mod progress;
mod push;
mod pushed;
mod reach;
mod render;
mod rollback;
mod rollout;
mod secret;
mod settings;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{CommandFactory, Parser, Subcommand};

use crate::catalogue::Catalogue;
use crate::inventory::Inventory;

pub(crate) use output::{err, out, print_json};
use output::{error_json, error_kind, said, usage_error};

/// Exit statuses, as documented in [`EXIT_CODES`].
pub mod exit {
    pub const OK: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const SOME_FAILED: u8 = 2;
    /// Some nodes were held (a container's data would move, or a rollback holds them at a
    /// generation) or some assignments (a consumer whose provider is gone or not ready), and
    /// none failed.
    pub const SOME_HELD: u8 = 3;
    pub const CHANGES: u8 = 4;
    /// The command line itself was wrong (EX_USAGE of sysexits.h).
    pub const USAGE: u8 = 64;
}

/// Every exit status, as `mesh --help` shows it (and docs/reference.md repeats).
const EXIT_CODES: &str = "\
Exit status:
  0   done (for `check`: nothing would change)
  1   refused or failed before any machine was touched
  2   some nodes failed (the others went ahead; a node that cannot be planned, its module
      missing or broken, is refused alone and sent nothing; `plan` too), or machines were
      touched and the inventory could not record it
  3   some nodes or assignments were held and none failed: a container's data would move, a
      consumer's provider is gone or has not yet made what it needs, or a rollback holds the
      node at a generation (`plan` too)
  4   `check` found changes
  64  the command line is wrong (unknown command or option, missing argument)

With --json every command prints one JSON document on stdout, an error too:
  {\"error\": {\"kind\": \"usage\", \"message\": \"...\"}}
-q prints only what changed or failed: a push that changed nothing prints nothing.";

/// mesh: keep a small fleet of Linux machines configured, over SSH, with nothing installed first.
#[derive(Parser, Debug)]
#[command(
    name = "mesh",
    version,
    about,
    propagate_version = true,
    max_term_width = 100,
    after_help = EXIT_CODES
)]
pub struct Cli {
    // Not clap's `env =`: clap counts a value from the environment as given on the command
    // line and prints it in every usage line as if it were required; the
    // environment is read in [`from_env`] instead, and these help lines say so.
    /// The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]
    #[arg(long, global = true, value_name = "PATH")]
    inventory: Option<PathBuf>,

    /// A folder of modules to add to the built-in catalogue (repeatable). A module here overrides
    /// a built-in one of the same name, read after the folders the inventory remembers (`mesh
    /// catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]
    #[arg(long, global = true, value_name = "DIR", value_delimiter = ':')]
    catalogue: Vec<PathBuf>,

    /// Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`).
    #[arg(long, global = true)]
    json: bool,

    /// Print only what changed or failed: a push or check that changed nothing prints nothing.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,

    /// Print what happens on each node as it happens, with timings (on stderr).
    #[arg(short, long, global = true)]
    verbose: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create the inventory file, remembering the catalogue folders given (--catalogue).
    Init,
    /// The catalogue folders the inventory remembers: add, remove, list.
    #[command(subcommand)]
    Catalogue(catalogue::CatalogueCommand),
    /// Machines: add, list, show, pin host keys, remove.
    #[command(subcommand)]
    Node(nodes::NodeCommand),
    /// The catalogue's modules: list, show one's settings, check a module folder.
    #[command(subcommand)]
    Module(modules::ModuleCommand),
    /// Put a module on nodes.
    Assign(assign::AssignArgs),
    /// Take a module off a node (the next push undoes it there).
    Unassign(assign::UnassignArgs),
    /// Put one of an instance's directories elsewhere on its node than the default layout.
    Place(assign::PlaceArgs),
    /// Seats: the mesh's one answer for a provision, held by one instance.
    #[command(subcommand)]
    Seat(assign::SeatCommand),
    /// Read and change a module's settings layers.
    #[command(subcommand)]
    Settings(settings::SettingsCommand),
    /// Secrets: set the operator's own (read from a terminal or stdin), rotate generated ones.
    #[command(subcommand)]
    Secret(secret::SecretCommand),
    /// Every setting of an assignment with its effective value and where it came from.
    Config(config::ConfigArgs),
    /// What a push would change: compared with what each node's helper confirmed it has.
    Plan(push::PlanArgs),
    /// What a push would change on the machines now (the helper's dry run, so drift shows).
    Check(check::CheckArgs),
    /// Apply each node's declaration on the machine.
    Push(apply::PushArgs),
    /// Past pushes and how they ended.
    History(history::HistoryArgs),
    /// Send nodes a generation the inventory kept again, and hold them at it until released.
    Rollback(rollback::RollbackArgs),
    /// What each machine last said it is (distribution, memory, CPUs, addresses): the facts a
    /// template reads through a `"fact"` requirement. Any push or check gathers them.
    Facts(facts::FactsArgs),
    /// Throwaway Debian machines on this host to try mesh on (root, systemd-nspawn).
    ///
    /// Each machine boots systemd as PID 1 with a real sshd, on an overlay of one cached
    /// debootstrap image of its release (Debian 12 bookworm, or 13 trixie with --release), on a
    /// bridge of its own with no route out: a `package` resource installs only what the image has
    /// (docker.io, redis-server, redis-tools, systemd-resolved, nftables,
    /// prometheus-node-exporter, and MESH_LAB_PACKAGES).
    ///
    /// Environment: MESH_LAB_ID (0-99, default 0) keeps labs apart (the tests use 7 and 8);
    /// MESH_LAB_CACHE (default /var/tmp/mesh-lab) holds the images and machines;
    /// MESH_LAB_PACKAGES adds Debian packages to the image (comma separated; a new image is built
    /// for them); MESH_LAB_MIRROR (default http://deb.debian.org/debian); MESH_LAB_TIMEOUT
    /// (seconds to wait for a machine's sshd, default 180); MESH_LAB_RELEASE (what `lab up`'s
    /// --release defaults to).
    #[command(subcommand)]
    Lab(lab::LabCommand),
    /// Export the inventory as a reviewable text document, or import one.
    #[command(subcommand)]
    Inventory(inventory::InventoryCommand),
    /// Print a shell completion script (node and module names too, for bash, zsh and fish).
    Completions {
        /// bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
    /// Print mesh's manual page (roff) on stdout.
    Man {
        /// Print the command reference as Markdown instead (docs/commands.md is this)
        #[arg(long, conflicts_with = "dir")]
        markdown: bool,
        /// Write the pages into DIR instead, as a package installs them: mesh.1 (the whole
        /// manual) and mesh-COMMAND.1 for every command (`man mesh-node-add`)
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// The names a completion script offers: `nodes`, `tags` or `modules`, one a line.
    #[command(name = "__complete", hide = true)]
    Complete {
        /// nodes, tags or modules
        kind: String,
    },
}

/// The command line as `--help`, the man page and completions show it: every command with its
/// examples.
fn definition() -> clap::Command {
    examples::with_examples(Cli::command())
}

/// What every command may need, opened only when asked for.
pub(crate) struct Context {
    inventory: Option<PathBuf>,
    catalogue: Vec<PathBuf>,
    /// Whether `catalogue` came from the command line (`--catalogue`), not MESH_CATALOGUE: only
    /// those `init` remembers, since an environment variable of the operator's shell is not a
    /// choice made for the inventory.
    catalogue_flag: bool,
    pub(crate) json: bool,
    pub(crate) quiet: bool,
    pub(crate) verbose: bool,
    /// Broken modules are warned about once per command, however often the catalogue is read.
    warned: std::sync::Once,
    /// Under --json, what a command did (see [`Context::answer`]), printed as one document.
    answers: std::cell::RefCell<Vec<serde_json::Value>>,
    /// The way to the machines every push, check and rollback of this command takes.
    pub(crate) transport: std::sync::Arc<dyn crate::push::Transport>,
}

impl Context {
    fn inventory_path(&self) -> Result<PathBuf> {
        match &self.inventory {
            Some(p) => Ok(p.clone()),
            None => Inventory::default_path().context(
                "no inventory location: set --inventory or MESH_INVENTORY (HOME is not set)",
            ),
        }
    }

    pub(crate) fn inventory(&self) -> Result<Inventory> {
        Ok(Inventory::open(&self.inventory_path()?)?)
    }

    /// The catalogue folders the command line gives (`--catalogue`), as given.
    pub(crate) fn catalogue_given(&self) -> &[PathBuf] {
        if self.catalogue_flag {
            &self.catalogue
        } else {
            &[]
        }
    }

    /// The folders read, in order: those the inventory remembers (`mesh catalogue list`), then
    /// those the command line adds. A remembered folder that is gone is refused by name.
    fn catalogue_folders(&self) -> Result<Vec<PathBuf>> {
        let mut folders = match self.inventory_path() {
            Ok(p) if p.is_file() => Inventory::open(&p)?.catalogue_folders()?,
            _ => Vec::new(),
        };
        for f in &folders {
            if !f.is_dir() {
                anyhow::bail!(
                    "the inventory remembers the catalogue folder {}, which is not a folder any \
                     more: put it back, or forget it (`mesh catalogue remove {}`)",
                    f.display(),
                    f.display()
                );
            }
        }
        for given in &self.catalogue {
            let same = std::path::absolute(given).ok();
            if !folders.iter().any(|f| Some(f) == same.as_ref()) {
                folders.push(given.clone());
            }
        }
        Ok(folders)
    }

    /// The catalogue; a module in it that did not load is named on stderr (once) and refuses
    /// only the commands that use it.
    pub(crate) fn catalogue(&self) -> Result<Catalogue> {
        let catalogue = Catalogue::load(&self.catalogue_folders()?)?;
        self.warned.call_once(|| {
            for dir in catalogue.empty_folders() {
                err!(
                    "mesh: warning: the catalogue folder {} holds no module (no module.json in \
                     it or in any folder directly below it)",
                    crate::plan::visible(&dir.display().to_string())
                );
            }
            for (name, reason) in catalogue.broken() {
                err!(
                    "mesh: warning: module {name} is broken and cannot be used: {}",
                    crate::plan::visible(reason)
                );
            }
        });
        Ok(catalogue)
    }

    /// One thing a command did: the sentence for a person, or under --json `value`, which joins
    /// the command's others in one document `{"done": [...]}` printed when it ends.
    /// `value` is an answer type of [`answers`].
    pub(crate) fn answer(&self, value: impl serde::Serialize, text: std::fmt::Arguments<'_>) {
        if self.json {
            // a value that cannot be JSON (a map keyed by other than strings) is a defect of
            // the answer type; it is said in its place rather than dropped
            let value = serde_json::to_value(value).unwrap_or_else(|e| {
                let said = e.to_string();
                serde_json::to_value(error_json(("internal", None), &said)).unwrap_or_default()
            });
            self.answers.borrow_mut().push(value);
        } else {
            out!("{text}");
        }
    }

    /// Colour on a terminal, unless NO_COLOR (any non-empty value, https://no-color.org) or
    /// CLICOLOR=0 says otherwise.
    pub(crate) fn color(&self) -> bool {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        !no_color && std::io::stdout().is_terminal() && console::colors_enabled()
    }
}

/// The inventory and catalogue folders: the command line's, else MESH_INVENTORY's and
/// MESH_CATALOGUE's (an empty variable counts as unset, as clap's `env` did).
fn from_env(cli: &Cli) -> (Option<PathBuf>, Vec<PathBuf>) {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let inventory = cli
        .inventory
        .clone()
        .or_else(|| set("MESH_INVENTORY").map(PathBuf::from));
    let catalogue = if cli.catalogue.is_empty() {
        set("MESH_CATALOGUE")
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default()
    } else {
        cli.catalogue.clone()
    };
    (inventory, catalogue)
}

/// The way to the machines: each node as the inventory says (over SSH, or on this machine for a
/// node added with `--local`). A debug build (`cargo test`) reads the end-to-end tests' faults
/// here, once; a release build never does.
fn transport() -> std::sync::Arc<dyn crate::push::Transport> {
    let transport = std::sync::Arc::new(crate::push::Inventoried);
    #[cfg(debug_assertions)]
    let transport = crate::push::faulty::Faults::from_env().wrap(transport);
    transport
}

/// Runs the command line; returns the process's exit status.
pub fn run() -> ExitCode {
    let json = std::env::args_os().any(|a| a == "--json");
    let parsed = definition()
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e, json),
    };
    let (inventory, catalogue) = from_env(&cli);
    crate::ssh::set_verbose(cli.verbose);
    let ctx = Context {
        inventory,
        catalogue,
        catalogue_flag: !cli.catalogue.is_empty(),
        json: cli.json,
        quiet: cli.quiet,
        verbose: cli.verbose,
        warned: std::sync::Once::new(),
        answers: std::cell::RefCell::new(Vec::new()),
        transport: transport(),
    };
    let result = dispatch(cli.command, &ctx);
    let done = ctx.answers.take();
    match result {
        Ok(code) => {
            if !done.is_empty() {
                let _ = print_json(&answers::commands::Done { done });
            }
            ExitCode::from(code)
        }
        Err(e) => {
            // `| head` closing the pipe is not an error
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            // an error can quote a module's or a machine's text: shown, never obeyed
            let text = said(&e);
            if ctx.json {
                let mut doc = error_json(error_kind(&e), &text);
                // what was done before the error still happened
                doc.done = done;
                let _ = print_json(&doc);
            } else {
                for (n, line) in text.lines().enumerate() {
                    let prefix = if n == 0 { "mesh: " } else { "" };
                    err!("{prefix}{}", crate::plan::visible(line));
                }
            }
            ExitCode::from(exit::ERROR)
        }
    }
}

fn dispatch(command: Command, ctx: &Context) -> Result<u8> {
    match command {
        Command::Init => init::init(ctx),
        Command::Catalogue(c) => catalogue::run(c, ctx),
        Command::Node(c) => nodes::run(c, ctx),
        Command::Module(c) => modules::run(c, ctx),
        Command::Assign(a) => assign::assign(a, ctx),
        Command::Unassign(a) => assign::unassign(a, ctx),
        Command::Place(a) => assign::place(a, ctx),
        Command::Seat(c) => assign::seat(c, ctx),
        Command::Settings(c) => settings::run(c, ctx),
        Command::Secret(c) => secret::run(c, ctx),
        Command::Config(a) => config::config(a, ctx),
        Command::Plan(a) => push::plan(a, ctx),
        Command::Check(a) => check::check(a, ctx),
        Command::Push(a) => apply::push(a, ctx),
        Command::History(a) => history::history(a, ctx),
        Command::Rollback(a) => rollback::rollback(a, ctx),
        Command::Facts(a) => facts::facts(a, ctx),
        Command::Lab(c) => lab::run(c, ctx),
        Command::Inventory(c) => inventory::run(c, ctx),
        Command::Completions { shell } => {
            out_raw!("{}", complete::script(shell, definition()));
            Ok(exit::OK)
        }
        Command::Man { dir: Some(dir), .. } => {
            let written = man::pages(definition(), &dir)?;
            ctx.answer(
                answers::commands::ManWritten {
                    dir: &dir,
                    pages: written,
                },
                format_args!("wrote {written} manual pages into {}", dir.display()),
            );
            Ok(exit::OK)
        }
        Command::Man { markdown: true, .. } => {
            out_raw!("{}", man::markdown(definition()));
            Ok(exit::OK)
        }
        Command::Man {
            markdown: false, ..
        } => {
            out_raw!("{}", man::page(definition())?);
            Ok(exit::OK)
        }
        Command::Complete { kind } => complete::names(&kind, ctx),
    }
}

#[cfg(test)]
mod package_tests;
#[cfg(test)]
mod running_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
