//! The waiter of a change to confirm: a transient systemd unit of its own, started detached
//! from the helper's session, that reverts the change at its deadline unless it is confirmed.

use crate::record::Paths;
use crate::system::SystemError;

/// Why the waiter did not start: this helper's own path is unknown, or systemd-run failed.
/// (The helper keeps to a few dependencies: its errors' `Display` is written out, as
/// [`SystemError`]'s.)
#[derive(Debug)]
pub(super) enum WaiterError {
    NoHelper(std::io::Error),
    Start(SystemError),
}

impl std::fmt::Display for WaiterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaiterError::NoHelper(e) => write!(f, "cannot find the helper: {e}"),
            WaiterError::Start(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WaiterError {}

/// The waiter's unit for change `id`.
pub(super) fn waiter_unit(id: &str) -> String {
    format!("mesh-confirm-{id}.service")
}

/// Starts the waiter, detached from this session: argv words, no shell.
pub(super) fn start_waiter(id: &str, deadline: u64, paths: &Paths) -> Result<(), WaiterError> {
    let helper = std::env::current_exe().map_err(WaiterError::NoHelper)?;
    let mut settings = vec![
        format!("--unit={}", waiter_unit(id)),
        "--collect".to_string(),
        "--quiet".to_string(),
        "--property=Type=exec".to_string(),
        format!(
            "--description=mesh: reverts change {id} unless it is confirmed within {deadline} s"
        ),
    ];
    if std::env::var_os("MESH_HOST_STATE").is_some() {
        settings.push(format!("--setenv=MESH_HOST_STATE={}", paths.root.display()));
    }
    // systemd runs this however the waiter ends (a word per argument: a path and a hex id)
    settings.push(format!(
        "--property=ExecStopPost={} revert-pending {id}",
        helper.display()
    ));
    let argv = [
        helper.display().to_string(),
        "await-confirm".to_string(),
        id.to_string(),
        "--deadline".to_string(),
        deadline.to_string(),
        "--applier".to_string(),
        std::process::id().to_string(),
    ];
    paths
        .system
        .run_detached(&settings, &argv)
        .map_err(WaiterError::Start)
}
