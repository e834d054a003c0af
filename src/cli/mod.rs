//! The command line: clap definitions, and dispatch to one small function per command. Errors
//! become `anyhow` here and nowhere below; the exit status says how things went.
//!
//! Exit status: 0 done (for `check`: nothing would change); 1 refused or failed before any machine
//! was touched; 2 some nodes failed (the others went ahead), or machines were touched and the
//! inventory could not record it; 3 some nodes held; 4 `check` found changes.

mod adopt;
mod assign;
mod lab;
mod modules;
mod nodes;
mod progress;
mod push;
mod render;
mod settings;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{CommandFactory, Parser, Subcommand};

use crate::catalogue::Catalogue;
use crate::inventory::Inventory;

/// Exit statuses, as documented above.
pub mod exit {
    pub const OK: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const SOME_FAILED: u8 = 2;
    /// Some nodes were held (a container's data would move) and none failed.
    pub const SOME_HELD: u8 = 3;
    pub const CHANGES: u8 = 4;
}

/// mesh: keep a small fleet of Linux machines configured, over SSH, with nothing installed first.
#[derive(Parser, Debug)]
#[command(
    name = "mesh",
    version,
    about,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// The inventory file [default: $XDG_STATE_HOME/mesh/inventory.db]
    #[arg(long, global = true, env = "MESH_INVENTORY", value_name = "PATH")]
    inventory: Option<PathBuf>,

    /// A folder of modules to add to the built-in catalogue (repeatable; `:`-separated in the
    /// environment). A module here overrides a built-in one of the same name.
    #[arg(
        long,
        global = true,
        env = "MESH_CATALOGUE",
        value_name = "DIR",
        value_delimiter = ':'
    )]
    catalogue: Vec<PathBuf>,

    /// Print results as JSON, for scripts.
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create the inventory file.
    Init,
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
    /// Every setting of an assignment with its effective value and where it came from.
    Config(settings::ConfigArgs),
    /// What a push would change: compared with what each node's helper confirmed it has.
    Plan(push::PlanArgs),
    /// What a push would change on the machines now (the helper's dry run, so drift shows).
    Check(push::CheckArgs),
    /// Apply each node's declaration on the machine.
    Push(push::PushArgs),
    /// Past pushes and how they ended.
    History(push::HistoryArgs),
    /// Throwaway Debian machines on this host to try mesh on (root, systemd-nspawn).
    #[command(subcommand)]
    Lab(lab::LabCommand),
    /// Print a shell completion script.
    Completions {
        /// bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
}

/// What every command may need, opened only when asked for.
pub(crate) struct Context {
    inventory: Option<PathBuf>,
    catalogue: Vec<PathBuf>,
    pub(crate) json: bool,
    /// Broken modules are warned about once per command, however often the catalogue is read.
    warned: std::sync::Once,
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

    /// The catalogue; a module in it that did not load is named on stderr (once) and refuses
    /// only the commands that use it.
    pub(crate) fn catalogue(&self) -> Result<Catalogue> {
        let catalogue = Catalogue::load(&self.catalogue)?;
        self.warned.call_once(|| {
            for (name, reason) in catalogue.broken() {
                eprintln!(
                    "mesh: warning: module {name} is broken and cannot be used: {}",
                    crate::plan::visible(reason)
                );
            }
        });
        Ok(catalogue)
    }

    /// Colour on a terminal, unless NO_COLOR (any non-empty value, https://no-color.org) or
    /// CLICOLOR=0 says otherwise.
    pub(crate) fn color(&self) -> bool {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        !no_color && std::io::stdout().is_terminal() && console::colors_enabled()
    }
}

/// Runs the command line; returns the process's exit status.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let ctx = Context {
        inventory: cli.inventory.clone(),
        catalogue: cli.catalogue.clone(),
        json: cli.json,
        warned: std::sync::Once::new(),
    };
    match dispatch(cli.command, &ctx) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // `| head` closing the pipe is not an error
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            // an error can quote a module's or a machine's text: shown, never obeyed
            let text = format!("{e:#}");
            for (n, line) in text.lines().enumerate() {
                let prefix = if n == 0 { "mesh: " } else { "" };
                eprintln!("{prefix}{}", crate::plan::visible(line));
            }
            ExitCode::from(exit::ERROR)
        }
    }
}

fn dispatch(command: Command, ctx: &Context) -> Result<u8> {
    match command {
        Command::Init => {
            let path = ctx.inventory_path()?;
            Inventory::init(&path)?;
            println!("created the inventory {}", path.display());
            Ok(exit::OK)
        }
        Command::Node(c) => nodes::run(c, ctx),
        Command::Module(c) => modules::run(c, ctx),
        Command::Assign(a) => assign::assign(a, ctx),
        Command::Unassign(a) => assign::unassign(a, ctx),
        Command::Place(a) => assign::place(a, ctx),
        Command::Seat(c) => assign::seat(c, ctx),
        Command::Settings(c) => settings::run(c, ctx),
        Command::Config(a) => settings::config(a, ctx),
        Command::Plan(a) => push::plan(a, ctx),
        Command::Check(a) => push::check(a, ctx),
        Command::Push(a) => push::push(a, ctx),
        Command::History(a) => push::history(a, ctx),
        Command::Lab(c) => lab::run(c, ctx),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "mesh", &mut std::io::stdout());
            Ok(exit::OK)
        }
    }
}

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
