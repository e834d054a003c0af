//! systemd units: what state they are in, putting them in another, and paying what a change
//! costs them. [`pay`] asks the helper's `System`; the functions that ask systemd on its socket
//! (`crate::bus`, the unit a string argument) or run `systemctl` (the unit an argument after
//! `--`, never a shell) are the real machine's (`system::Real`).

use std::collections::HashMap;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mesh_wire::Cost;

use crate::bus::{Bus, Shown, Watched};
use crate::child::{self, Bounded as _};
use crate::system::{Call, SystemError};

/// Where systemd reads the units an administrator installs: the mesh's processes and its own.
pub(crate) const UNIT_DIR: &str = "/etc/systemd/system";

/// A unit as systemd reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnitState {
    /// systemd knows the unit (it has a unit file).
    pub(crate) exists: bool,
    /// `Some(true)` active, `Some(false)` inactive or failed, `None` in between or unknown.
    pub(crate) running: Option<bool>,
    /// `Some(true)` enabled, `Some(false)` disabled, `None` static, generated or unknown.
    pub(crate) enabled: Option<bool>,
    /// The unit is in the failed state (a start or restart did not succeed).
    pub(crate) failed: bool,
    /// The command lines its stop runs (`ExecStop=`, then `ExecStopPost=`).
    pub(crate) stop_runs: Vec<String>,
}

/// What [`state`] asks `systemctl show` for.
const STATE: &str = "LoadState,ActiveState,UnitFileState,ExecStop,ExecStopPost";

/// The states [`prefetch`] read in one `systemctl show`, until this run first asks systemd to
/// change anything (a verb, a daemon-reload): from then on every state is asked afresh.
static PREFETCHED: Mutex<Option<HashMap<String, UnitState>>> = Mutex::new(None);

/// Asks systemd once for the state of every unit in `units` that it knows, so that a run that
/// changes nothing asks one `systemctl show` in all rather than one per unit. A unit systemd
/// does not know is left out (writing its file may make it known), and so is everything when
/// the answer cannot be read unit by unit: each is then asked alone, as without it.
pub(crate) fn prefetch(units: &[&str]) {
    let mut units: Vec<&str> = units.to_vec();
    units.sort_unstable();
    units.dedup();
    if units.len() < 2 {
        return;
    }
    let known = match Bus::connect(child::SYSTEMCTL) {
        Ok(mut bus) => states_asked(&mut bus, &units),
        Err(_) => show_many(&units, &format!("Id,{STATE}"))
            .ok()
            .and_then(|text| states_of(&units, &text)),
    };
    if let (Some(known), Ok(mut cache)) = (known, PREFETCHED.lock()) {
        *cache = Some(known);
    }
}

/// The states of the known units among `units`, asked of systemd on its socket; `None` when
/// any could not be asked (each is then asked alone).
fn states_asked(bus: &mut Bus, units: &[&str]) -> Option<HashMap<String, UnitState>> {
    let mut known = HashMap::new();
    for unit in units {
        if !unit.contains('.') {
            return None;
        }
        let state = UnitState::from(bus.unit_state(unit).ok()?);
        if state.exists {
            known.insert((*unit).to_string(), state);
        }
    }
    Some(known)
}

/// The states of the known units among `units` in `systemctl show`'s answer for all of them:
/// one block a unit, in the order asked, each with its Id; `None` for anything else.
fn states_of(units: &[&str], text: &str) -> Option<HashMap<String, UnitState>> {
    let blocks: Vec<&str> = text.trim_end().split("\n\n").collect();
    if blocks.len() != units.len() {
        return None;
    }
    let mut known = HashMap::new();
    for (unit, block) in units.iter().zip(&blocks) {
        if show_value(block, "Id") != *unit {
            return None;
        }
        let state = parse_state(block);
        if state.exists {
            known.insert((*unit).to_string(), state);
        }
    }
    Some(known)
}

/// Forgets what [`prefetch`] read: systemd is about to change something.
fn forget_prefetched() {
    if let Ok(mut cache) = PREFETCHED.lock() {
        *cache = None;
    }
}

/// What [`prefetch`] read of the unit, while it holds.
fn prefetched(unit: &str) -> Option<UnitState> {
    PREFETCHED
        .lock()
        .ok()
        .and_then(|c| c.as_ref().and_then(|m| m.get(unit).cloned()))
}

/// Asks systemd for the unit's state.
pub(crate) fn state(unit: &str) -> Result<UnitState, SystemError> {
    if let Some(state) = prefetched(unit) {
        return Ok(state);
    }
    if unit.contains('.')
        && let Ok(mut bus) = Bus::connect(child::SYSTEMCTL)
    {
        let shown = bus
            .unit_state(unit)
            .map_err(|e| SystemError::asked("show", unit, e))?;
        return Ok(UnitState::from(shown));
    }
    Ok(parse_state(&show(unit, STATE)?))
}

impl From<Shown> for UnitState {
    fn from(shown: Shown) -> UnitState {
        UnitState::of(&shown.load, &shown.active, &shown.file, shown.stop_runs)
    }
}

impl UnitState {
    /// From what systemd says of the unit's `LoadState`, `ActiveState` and `UnitFileState`, and
    /// the command lines its stop runs.
    fn of(load: &str, active: &str, file: &str, stop_runs: Vec<String>) -> UnitState {
        UnitState {
            exists: load != "not-found",
            running: match active {
                "active" | "reloading" => Some(true),
                "inactive" | "failed" => Some(false),
                _ => None,
            },
            enabled: match file {
                "enabled" | "enabled-runtime" => Some(true),
                "disabled" => Some(false),
                _ => None,
            },
            failed: active == "failed",
            stop_runs,
        }
    }
}

/// A unit's state from its block of `systemctl show`.
fn parse_state(text: &str) -> UnitState {
    let value = |key: &str| show_value(text, key);
    // a unit with several commands of one kind shows one line for each
    let stop_runs = ["ExecStop=", "ExecStopPost="]
        .into_iter()
        .flat_map(|key| text.lines().filter_map(move |l| l.strip_prefix(key)))
        .flat_map(command_lines)
        .collect();
    UnitState::of(
        value("LoadState"),
        value("ActiveState"),
        value("UnitFileState"),
        stop_runs,
    )
}

/// The command lines of an `Exec*=` property as `systemctl show` gives it: one
/// `{ path=… ; argv[]=ARGV ; … }` per command, ARGV its words joined by spaces.
fn command_lines(value: &str) -> Vec<String> {
    value
        .split("argv[]=")
        .skip(1)
        .filter_map(|rest| rest.split(" ; ").next())
        .map(|argv| argv.trim().to_string())
        .filter(|argv| !argv.is_empty())
        .collect()
}

/// How long a unit just started or restarted is watched before it is called running: a command
/// that cannot run fails (or enters systemd's restart loop) within it.
const SETTLE: Duration = Duration::from_millis(1500);

/// Waits a moment after a unit's start or restart and says why it is not running, if it is not:
/// failed, in a restart loop (`Restart=` hides a crash as "activating"), or stopped. A unit that
/// stays active through the wait, and was not restarted by systemd in it, runs. Asked of systemd
/// on its socket where it can be (one connection for the whole watch), else of `systemctl show`.
pub(crate) fn settled(unit: &str) -> Result<(), SystemError> {
    let mut bus = if unit.contains('.') {
        Bus::connect(child::SYSTEMCTL).ok()
    } else {
        None
    };
    let started = Instant::now();
    let mut first = None;
    loop {
        let now = match bus.as_mut() {
            Some(bus) => bus
                .watched(unit)
                .map_err(|e| SystemError::asked("show", unit, e))?,
            None => watched_of(&show(
                unit,
                "ActiveState,SubState,Result,NRestarts,ExecMainStatus",
            )?),
        };
        let before = *first.get_or_insert(now.restarts);
        let looping = now.sub == "auto-restart" || now.restarts > before;
        if now.active == "failed" || now.active == "inactive" || looping {
            return Err(SystemError::NotRunning {
                unit: unit.to_string(),
                why: format!(
                    "systemd says {} ({}), result {}, exit status {}{}; see `journalctl -u {unit}`",
                    now.active,
                    now.sub,
                    now.result,
                    now.status,
                    if looping { ", in its restart loop" } else { "" }
                ),
            });
        }
        if started.elapsed() >= SETTLE {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What [`settled`] watches, from `systemctl show`'s answer.
fn watched_of(text: &str) -> Watched {
    let value = |key: &str| show_value(text, key).to_string();
    Watched {
        active: value("ActiveState"),
        sub: value("SubState"),
        result: value("Result"),
        restarts: show_value(text, "NRestarts").parse().unwrap_or(0),
        status: show_value(text, "ExecMainStatus").parse().unwrap_or(0),
    }
}

/// `systemctl show` of the named properties.
fn show(unit: &str, properties: &str) -> Result<String, SystemError> {
    show_many(&[unit], properties)
}

/// `systemctl show` of the named properties of each of `units`: a block each, in their order,
/// separated by an empty line.
fn show_many(units: &[&str], properties: &str) -> Result<String, SystemError> {
    let call = Call::systemctl("show", &units.join(" "));
    let out = Command::new("systemctl")
        .args(["show", &format!("--property={properties}"), "--"])
        .args(units)
        .output_within(child::SYSTEMCTL);
    let out = SystemError::ran(&call, out)?;
    SystemError::check(call, &out)?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One property's value in `systemctl show`'s answer; empty when it is not there.
fn show_value<'t>(text: &'t str, key: &str) -> &'t str {
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or("")
}

/// Runs `systemctl VERB -- UNIT`, or asks systemd for the same on its socket ([`bus`]) for the
/// verbs that pay a change's cost or start or stop a unit, where the unit is named in full
/// (`systemctl` completes a bare name with `.service`; systemd itself does not).
pub(crate) fn systemctl(verb: &str, unit: &str) -> Result<(), SystemError> {
    if matches!(
        verb,
        "reload" | "restart" | "start" | "stop" | "reset-failed"
    ) && unit.contains('.')
        && let Ok(mut bus) = Bus::connect(child::SYSTEMCTL)
    {
        forget_prefetched();
        let done = if verb == "reset-failed" {
            bus.reset_failed(unit)
        } else {
            bus.job(verb, unit)
        };
        return done.map_err(|e| SystemError::asked(verb, unit, e));
    }
    run(&[verb, "--", unit], Call::systemctl(verb, unit))
}

/// Makes systemd read unit files again.
pub(crate) fn daemon_reload() -> Result<(), SystemError> {
    run(&["daemon-reload"], Call::DaemonReload)
}

/// `systemctl ARGS`, which is `call`.
fn run(args: &[&str], call: Call) -> Result<(), SystemError> {
    forget_prefetched();
    let out = Command::new("systemctl")
        .args(args)
        .output_within(child::SYSTEMCTL);
    SystemError::check(call.clone(), &SystemError::ran(&call, out)?)
}

/// What paying a unit that is not running did: nothing, as it reads its files when it starts.
pub(crate) const NOT_RUNNING: &str = "not running: it reads the change when it starts";

/// What paying a unit did when the same run then started it (`NOT_RUNNING` said before the
/// start would read as if the change were still unread).
pub(crate) const STARTED: &str = "started by this push: it read the change as it started";

/// Reloads or restarts a unit that is running. A unit that is not running reads its files when
/// it next starts, so nothing is owed, unless `owed_before` says an earlier restart of it failed:
/// then it is down because of the mesh, and the restart is tried again.
pub(crate) fn pay(
    system: &dyn crate::system::System,
    unit: &str,
    cost: Cost,
    owed_before: bool,
) -> Result<&'static str, SystemError> {
    if cost == Cost::None {
        return Ok("nothing to do");
    }
    let now = system.unit_state(unit)?;
    let retry = owed_before && now.failed;
    if now.running != Some(true) && !retry {
        return Ok(NOT_RUNNING);
    }
    if cost == Cost::Reload && !retry {
        system.systemctl("reload", unit).map(|()| "reloaded")
    } else {
        // A restart the mesh owes is deliberate, not a crash loop: systemd's start-rate limit
        // (docker.service allows 3 starts a minute) must not refuse a few pushes in a row.
        let _ = system.systemctl("reset-failed", unit);
        system.systemctl("restart", unit).map(|()| "restarted")
    }
}

#[cfg(test)]
mod tests {
    use super::states_of;

    #[test]
    fn one_show_of_many_units_is_read_unit_by_unit_or_not_at_all() {
        let text = "Id=a.service\nLoadState=loaded\nActiveState=active\nUnitFileState=enabled\n\n\
                    Id=b.service\nLoadState=not-found\nActiveState=inactive\n\n\
                    Id=c.service\nLoadState=loaded\nActiveState=failed\nUnitFileState=disabled\n";
        let units = ["a.service", "b.service", "c.service"];
        let known = states_of(&units, text).unwrap();
        assert_eq!(
            known.len(),
            2,
            "a unit systemd does not know is asked again: {known:?}"
        );
        let a = &known["a.service"];
        assert_eq!(
            (a.running, a.enabled, a.failed),
            (Some(true), Some(true), false)
        );
        let c = &known["c.service"];
        assert_eq!(
            (c.running, c.enabled, c.failed),
            (Some(false), Some(false), true)
        );
        // a block missing, or out of order (an alias answers with its own Id): nothing is kept
        assert!(states_of(&units[..2], text).is_none());
        assert!(states_of(&["a.service", "c.service", "b.service"], text).is_none());
    }

    #[test]
    fn what_a_stop_runs_is_read_from_systemctl_show() {
        let shown = "{ path=/usr/sbin/nft ; argv[]=/usr/sbin/nft flush ruleset ; \
                     ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; \
                     code=(null) ; status=0/0 }";
        assert_eq!(
            super::command_lines(shown),
            vec!["/usr/sbin/nft flush ruleset"]
        );
        assert!(super::command_lines("").is_empty());
    }
}
