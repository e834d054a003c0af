//! The lab: throwaway Debian 12 and 13 machines on this host (systemd-nspawn, systemd as PID 1, a real
//! sshd), for tests and for trying mesh without a fleet.
//!
//! The machine work is a shell script (`lab.sh`, embedded in the binary), because it is a
//! sequence of host commands (debootstrap, mount, ip, systemd-nspawn) and reads best as one.
//! This module runs it and reads its answers; the CLI puts the machines into the inventory with
//! the host keys the lab itself generated, pinned.

use std::path::PathBuf;
use std::process::{Command, Stdio};

pub mod release;

const SCRIPT: &str = include_str!("lab.sh");

/// Why a lab command failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("cannot run bash for the lab: {0}")]
    Spawn(std::io::Error),
    #[error("lab {command} failed (exit {status}); its messages are above")]
    Failed { command: String, status: String },
    #[error("the lab answered a line this mesh cannot read: {0:?}")]
    Answer(String),
    #[error(transparent)]
    Release(#[from] release::ReleaseError),
}

/// One lab machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabNode {
    pub name: String,
    pub address: String,
    pub port: u16,
    /// The ed25519 host key the lab generated for it (OpenSSH form), or its state for `status`.
    pub detail: String,
}

/// A lab: `MESH_LAB_ID` (0..99) tells labs on one host apart; `MESH_LAB_CACHE` is where images
/// and nodes live (default `/var/tmp/mesh-lab`).
#[derive(Debug, Clone)]
pub struct Lab {
    pub id: String,
    pub cache: PathBuf,
}

impl Lab {
    /// The lab the environment names.
    pub fn from_env() -> Lab {
        Lab {
            id: std::env::var("MESH_LAB_ID").unwrap_or_else(|_| "0".into()),
            cache: std::env::var_os("MESH_LAB_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| "/var/tmp/mesh-lab".into()),
        }
    }

    /// The private key that logs in to every node of this lab as root.
    pub fn key(&self) -> PathBuf {
        self.cache
            .join(format!("lab{}", self.id))
            .join("id_ed25519")
    }

    fn script(&self, args: &[&str]) -> Result<String, LabError> {
        // the operator runs without transparent huge pages (`src/main.rs`), and a child inherits
        // that through exec: the lab's machines boot as this host would boot them
        let _ = nix::sys::prctl::set_thp_disable(false);
        let out = Command::new("bash")
            .arg("-c")
            .arg(SCRIPT)
            .arg("mesh-lab")
            .args(args)
            .env("MESH_LAB_ID", &self.id)
            .env("MESH_LAB_CACHE", &self.cache)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(LabError::Spawn)?;
        if !out.status.success() {
            return Err(LabError::Failed {
                command: args.join(" "),
                status: out
                    .status
                    .code()
                    .map_or_else(|| "killed".into(), |c| c.to_string()),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn nodes(answer: &str) -> Result<Vec<LabNode>, LabError> {
        answer
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let mut parts = line.splitn(4, ' ');
                let (Some(name), Some(address), Some(port), Some(detail)) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    return Err(LabError::Answer(line.to_string()));
                };
                Ok(LabNode {
                    name: name.to_string(),
                    address: address.to_string(),
                    port: port
                        .parse()
                        .map_err(|_| LabError::Answer(line.to_string()))?,
                    detail: detail.to_string(),
                })
            })
            .collect()
    }

    /// Boots node1..nodeN, each of the release `release` gives it (see [`release::per_machine`];
    /// bookworm where it says none), building each release's image the first time. Running
    /// nodes of their release are left alone; one of another release is made again.
    pub fn up(&self, n: Option<u32>, release: Option<&str>) -> Result<Vec<LabNode>, LabError> {
        let suites = release::per_machine(n, release)?;
        let count = suites.len().to_string();
        Self::nodes(&self.script(&["up", &count, &suites.join(",")])?)
    }

    /// Stops every node and removes them, and the lab's bridge. Nothing is left running.
    pub fn down(&self) -> Result<(), LabError> {
        self.script(&["down"]).map(|_| ())
    }

    /// Powers one node off; its disk is kept.
    pub fn stop(&self, name: &str) -> Result<(), LabError> {
        self.script(&["stop", name]).map(|_| ())
    }

    /// Boots one stopped node again and waits for its sshd.
    pub fn start(&self, name: &str) -> Result<LabNode, LabError> {
        Self::nodes(&self.script(&["start", name])?)?
            .pop()
            .ok_or_else(|| LabError::Answer(String::from("nothing")))
    }

    /// Makes one node again from the image, at its address, with new host keys: a machine
    /// reinstalled in place, which has nothing of the mesh on it.
    pub fn rebuild(&self, name: &str) -> Result<LabNode, LabError> {
        Self::nodes(&self.script(&["rebuild", name])?)?
            .pop()
            .ok_or_else(|| LabError::Answer(String::from("nothing")))
    }

    /// Every node and whether it runs.
    pub fn status(&self) -> Result<Vec<LabNode>, LabError> {
        Self::nodes(&self.script(&["status"])?)
    }
}
