//! The revert that survives a reboot: before a push awaiting confirmation changes anything, the
//! helper installs a oneshot unit of its own, `mesh-revert-<id>.service`, enabled for
//! multi-user.target by its `.wants` link (written, not `systemctl enable`d). A machine that
//! loses power or reboots during the wait runs it early at the next boot, before the daemons
//! start: it reverts the change if it is still pending. A confirmation or a revert removes it.

use std::io;
use std::path::{Path, PathBuf};

use crate::record::Paths;
use crate::units::UNIT_DIR as UNITS;

fn unit(id: &str) -> String {
    format!("mesh-revert-{id}.service")
}

fn unit_file(id: &str) -> PathBuf {
    Path::new(UNITS).join(unit(id))
}

fn wants_link(id: &str) -> PathBuf {
    Path::new(UNITS)
        .join("multi-user.target.wants")
        .join(unit(id))
}

/// Installs the boot-time revert of change `id`, kept in `pending`.
pub(crate) fn install(id: &str, pending: &Path, paths: &Paths) -> io::Result<()> {
    let helper = std::env::current_exe()?;
    // only a test points the helper's state elsewhere; the unit must then look there too
    let state = match std::env::var_os("MESH_HOST_STATE") {
        Some(_) => format!("Environment=MESH_HOST_STATE={}\n", paths.root.display()),
        None => String::new(),
    };
    // before sysinit.target: no daemon has read the changed files yet when they go back, so
    // nothing is reloaded and no unit waits on another's start
    let text = format!(
        "# Written by mesh-host: removed once change {id} is confirmed or reverted.\n\
         [Unit]\n\
         Description=mesh: reverts change {id}, left unconfirmed when the machine went down\n\
         DefaultDependencies=no\n\
         RequiresMountsFor={root} {UNITS}\n\
         After=local-fs.target\n\
         Before=sysinit.target\n\
         ConditionPathExists={pending}\n\
         \n\
         [Service]\n\
         Type=oneshot\n\
         {state}ExecStart={helper} revert-pending {id} --at-boot\n\
         \n\
         [Install]\n\
         WantedBy=multi-user.target\n",
        root = paths.root.display(),
        pending = pending.display(),
        helper = helper.display(),
    );
    paths.machine.write_atomically(
        &unit_file(id),
        text.as_bytes(),
        Some(crate::files::root_ids()),
        0o644,
    )?;
    paths.machine.link(&wants_link(id), &unit_file(id))
}

/// Removes the boot-time revert of change `id`: its link first, so a unit file never stays
/// enabled without it.
pub(crate) fn remove(id: &str, paths: &Paths) -> io::Result<()> {
    paths.machine.remove(&wants_link(id))?;
    paths.machine.remove(&unit_file(id))
}

/// Removes the boot-time reverts whose change is no longer pending (a helper stopped between
/// its confirmation or revert and this removal): each would do nothing at boot, but none stays.
pub(crate) fn sweep(paths: &Paths) {
    let Ok(entries) = std::fs::read_dir(paths.machine.real(Path::new(UNITS))) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = name
            .strip_prefix("mesh-revert-")
            .and_then(|rest| rest.strip_suffix(".service"))
        else {
            continue;
        };
        if !mesh_wire::Awaiting::valid_id(id) {
            continue;
        }
        // only one of this state directory's changes (a test may run a helper elsewhere)
        let pending = super::kept::dir(paths, id);
        let condition = format!("ConditionPathExists={}", pending.display());
        let ours = (paths.machine)
            .read(&Path::new(UNITS).join(&name))
            .ok()
            .flatten()
            .is_some_and(|f| {
                String::from_utf8_lossy(&f.bytes)
                    .lines()
                    .any(|l| l == condition)
            });
        if ours && !pending.exists() {
            let _ = remove(id, paths);
        }
    }
}
