//! `mesh lab …`: throwaway machines, put into the inventory with their host keys pinned.

use super::answers::nodes::{LabDown, LabMachine, LabStatus, LabStopped, LabUp};
use super::{Context, exit};
use crate::inventory::Node;
use crate::lab::{Lab, LabNode};
use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub(crate) enum LabCommand {
    /// Boot N machines (node1..nodeN) and add them to the inventory; running ones are kept.
    Up {
        /// How many machines: 1 to 240 (their addresses share the lab's /24 network). May be left
        /// out where --release counts them.
        #[arg(required_unless_present = "release")]
        n: Option<u32>,
        /// The Debian release of the machines: `bookworm` (12, the default) or `trixie` (13) for
        /// every one, or a mix in node order, `bookworm:2,trixie:2`. A running machine of another
        /// release is made again.
        #[arg(long, value_name = "RELEASE[:N],...", env = "MESH_LAB_RELEASE")]
        release: Option<String>,
    },
    /// Stop and delete every lab machine (they stay in the inventory until `node remove`).
    Down,
    /// Power one machine off (its disk is kept).
    Stop {
        /// The machine (node1, node2, …).
        name: String,
    },
    /// Boot a stopped machine again.
    Start {
        /// The machine (node1, node2, …).
        name: String,
    },
    /// Reinstall one machine in place: a blank disk, new host keys (pinned), the same address.
    Rebuild {
        /// The machine (node1, node2, …).
        name: String,
    },
    /// Every lab machine and whether it runs.
    Status,
}

pub(crate) fn run(command: LabCommand, ctx: &Context) -> Result<u8> {
    let lab = Lab::from_env();
    match command {
        LabCommand::Up { n, release } => {
            let inv = ctx.inventory()?;
            let nodes = lab.up(n, release.as_deref())?;
            for n in &nodes {
                register(&inv, &lab, n)?;
                ctx.answer(
                    up(LabMachine::Up(&n.name), n),
                    format_args!(
                        "{:<8} {}:{}  up, host key pinned",
                        n.name, n.address, n.port
                    ),
                );
            }
        }
        LabCommand::Down => {
            lab.down()?;
            ctx.answer(
                LabDown { down: &lab.id },
                format_args!("lab {} is down: no machine left running", lab.id),
            );
        }
        LabCommand::Stop { name } => {
            lab.stop(&name)?;
            ctx.answer(
                LabStopped { stopped: &name },
                format_args!("{name} is stopped"),
            );
        }
        LabCommand::Start { name } => {
            let inv = ctx.inventory()?;
            let n = lab.start(&name)?;
            register(&inv, &lab, &n)?;
            ctx.answer(
                up(LabMachine::Up(&n.name), &n),
                format_args!("{:<8} {}:{}  up", n.name, n.address, n.port),
            );
        }
        LabCommand::Rebuild { name } => {
            let inv = ctx.inventory()?;
            let n = lab.rebuild(&name)?;
            register(&inv, &lab, &n)?;
            ctx.answer(
                up(LabMachine::Rebuilt(&n.name), &n),
                format_args!(
                    "{:<8} {}:{}  rebuilt: a blank disk, its new host key pinned",
                    n.name, n.address, n.port
                ),
            );
        }
        LabCommand::Status => {
            let machines = lab.status()?;
            if ctx.json {
                let list: Vec<_> = machines
                    .iter()
                    .map(|n| LabStatus {
                        name: &n.name,
                        address: &n.address,
                        port: n.port,
                        state: &n.detail,
                    })
                    .collect();
                super::print_json(&list)?;
            } else {
                for n in &machines {
                    out!("{:<8} {}:{}  {}", n.name, n.address, n.port, n.detail);
                }
            }
        }
    }
    Ok(exit::OK)
}

/// A machine booted or rebuilt, where it listens.
fn up<'a>(machine: LabMachine<'a>, n: &'a LabNode) -> LabUp<'a> {
    LabUp {
        machine,
        address: &n.address,
        port: n.port,
    }
}

/// The lab generated each machine's host key itself, so pinning it here is pinning a known key.
fn register(inv: &crate::inventory::Inventory, lab: &Lab, n: &LabNode) -> Result<()> {
    let node = Node {
        port: n.port,
        identity: Some(lab.key()),
        host_key: Some(n.detail.clone()),
        lab: true,
        ..Node::new(&n.name, &n.address)
    };
    inv.put_node(&node)?;
    Ok(())
}
