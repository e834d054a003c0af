//! The labs the lab tests run on: a pool of `MESH_LAB_POOL` labs with the ids `MESH_LAB_ID`,
//! `MESH_LAB_ID + 1`, ..., each held by one test at a time, so that as many lab tests run at once
//! as there are labs (and harness threads). A test holds its lab through a [`HeldLab`]; while it
//! does, [`lab_id`] on that test's thread names that lab, so every helper (`address`, `on`,
//! `Mesh::command`, `lab_state`, ...) reaches the machines of the lab this test holds.
//!
//! The pool of one is the old behaviour: one lab, one lab test at a time.

use std::cell::Cell;
use std::marker::PhantomData;
use std::process::Command;
use std::sync::{Condvar, Mutex, Once, OnceLock};

/// The first lab of the pool when `MESH_LAB_ID` is not set: apart from the lab an operator may be
/// trying mesh on (id 0).
const FIRST_LAB: u32 = 7;
/// Labs the host boots at once by default, where it can take them (see [`default_size`]).
const DEFAULT_POOL: u32 = 2;
/// What a lab of three machines leaves this host short of, and then some, in KiB: each machine
/// runs systemd, sshd, dockerd, redis and the tests' own services.
const MEMORY_PER_LAB_KIB: u64 = 3 * 1024 * 1024;

thread_local! {
    /// The lab this thread's test holds, if it holds one.
    static HELD: Cell<Option<u32>> = const { Cell::new(None) };
}

/// The lab this thread's test holds; where it holds none, the first lab of the pool
/// (`MESH_LAB_ID` when set, else 7), as the environment names it.
pub fn lab_id() -> String {
    match HELD.with(Cell::get) {
        Some(id) => id.to_string(),
        None => std::env::var("MESH_LAB_ID")
            .ok()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| FIRST_LAB.to_string()),
    }
}

/// One test's hold on one lab of the pool: the lab goes back to the pool when this is dropped,
/// however the test ends. Not `Send`: the lab is this thread's.
pub struct HeldLab {
    id: u32,
    _this_thread: PhantomData<*const ()>,
}

impl HeldLab {
    /// The lab's id (`MESH_LAB_ID` of every command that reaches it).
    pub fn id(&self) -> u32 {
        self.id
    }
}

impl Drop for HeldLab {
    fn drop(&mut self) {
        HELD.with(|held| held.set(None));
        let pool = pool();
        let mut labs = pool.labs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lab) = labs.iter_mut().find(|lab| lab.id == self.id) {
            lab.held = false;
        }
        pool.returned.notify_all();
    }
}

/// A lab of the pool, and how many machines the tests have asked of it so far (a lab keeps
/// the machines it booted, so a test of six machines best goes where six already run).
struct Lab {
    id: u32,
    machines: u32,
    held: bool,
}

struct Pool {
    labs: Mutex<Vec<Lab>>,
    returned: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        labs: Mutex::new(
            ids()
                .into_iter()
                .map(|id| Lab {
                    id,
                    machines: 0,
                    held: false,
                })
                .collect(),
        ),
        returned: Condvar::new(),
    })
}

/// The ids of the pool's labs: `MESH_LAB_ID` (7 where unset) and the next ones, `MESH_LAB_POOL`
/// of them. Panics on ids the lab refuses (0..99), before any machine boots.
pub fn ids() -> Vec<u32> {
    let first = match std::env::var("MESH_LAB_ID") {
        Ok(id) if !id.is_empty() => id
            .parse::<u32>()
            .unwrap_or_else(|_| panic!("MESH_LAB_ID={id}: a lab id is a number, 0..99")),
        _ => FIRST_LAB,
    };
    let size = match std::env::var("MESH_LAB_POOL") {
        Ok(size) if !size.is_empty() => size
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .unwrap_or_else(|| panic!("MESH_LAB_POOL={size}: the number of labs, 1 or more")),
        _ => default_size(),
    };
    let last = first + size - 1;
    assert!(
        last <= 99,
        "the lab pool is labs {first}..{last} (MESH_LAB_ID={first}, MESH_LAB_POOL={size}), \
         but lab ids end at 99"
    );
    (first..=last).collect()
}

/// Two labs where the host can take them (two cores or more, and the memory of two labs
/// available), else one.
fn default_size() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(0);
    if cores >= 2 && memory >= u64::from(DEFAULT_POOL) * MEMORY_PER_LAB_KIB {
        DEFAULT_POOL
    } else {
        1
    }
}

/// Waits for a lab of the pool to be free and holds it for this thread's test (see [`choose`]).
pub fn hold(machines: u32) -> HeldLab {
    assert!(
        HELD.with(Cell::get).is_none(),
        "this test already holds a lab: one test, one lab"
    );
    let pool = pool();
    let mut labs = pool.labs.lock().unwrap_or_else(|p| p.into_inner());
    let mut said = false;
    let id = loop {
        if let Some(lab) = choose(&labs, machines).and_then(|at| labs.get_mut(at)) {
            lab.held = true;
            lab.machines = lab.machines.max(machines);
            break lab.id;
        }
        if !said {
            // on stderr itself: the harness captures eprintln! until the test ends
            use std::io::Write as _;
            let test = std::thread::current()
                .name()
                .unwrap_or("a lab test")
                .to_string();
            let _ = writeln!(
                std::io::stderr(),
                "{test}: waiting for a free lab (every lab of the pool is held; MESH_LAB_POOL \
                 makes more)"
            );
            said = true;
        }
        labs = pool.returned.wait(labs).unwrap_or_else(|p| p.into_inner());
    };
    HELD.with(|held| held.set(Some(id)));
    HeldLab {
        id,
        _this_thread: PhantomData,
    }
}

/// Which free lab a test of `machines` machines takes: the one that fits best (the fewest
/// machines of those that have enough, so a test of six goes where six already run), else the
/// biggest; on a tie the lowest id, so that a pool of one behaves as the one lab did.
fn choose(labs: &[Lab], machines: u32) -> Option<usize> {
    let rank = |lab: &Lab| match lab.machines >= machines {
        true => (0, lab.machines),
        false => (1, u32::MAX - lab.machines),
    };
    labs.iter()
        .enumerate()
        .filter(|(_, lab)| !lab.held)
        .min_by_key(|(_, lab)| rank(lab))
        .map(|(at, _)| at)
}

/// Starts, once per test process, the watcher that takes every lab of the pool down when the
/// process ends.
pub fn down_when_the_tests_end() {
    DOWN_WHEN_DONE.call_once(take_the_labs_down_when_the_tests_end);
}

static DOWN_WHEN_DONE: Once = Once::new();

/// The test command leaves nothing running: a watcher in a session of its own waits for this
/// test process to end, however it ends, then takes every lab of the pool down, all at once
/// (`MESH_LAB_KEEP=1` keeps them up, to look at the machines after a run). The harness has no
/// hook for "all tests done".
fn take_the_labs_down_when_the_tests_end() {
    if std::env::var_os("MESH_LAB_KEEP").is_some_and(|v| v == "1") {
        return;
    }
    let watched = Command::new("setsid")
        .args([
            "sh",
            "-c",
            r#"pid=$1 mesh=$2; shift 2
while kill -0 "$pid" 2>/dev/null; do sleep 1; done
for id; do MESH_LAB_ID=$id "$mesh" lab down & done; wait"#,
            "mesh-test-lab-watcher",
        ])
        .arg(std::process::id().to_string())
        .arg(env!("CARGO_BIN_EXE_mesh"))
        .args(ids().iter().map(u32::to_string))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = watched {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("the test labs will stay up after the tests: no watcher ({e})\n").as_bytes(),
        );
    }
}

#[test]
fn a_test_of_six_machines_takes_the_free_lab_that_has_six_and_a_pool_of_one_is_one_lab() {
    let lab = |id, machines, held| Lab { id, machines, held };
    let grown = [lab(7, 3, false), lab(8, 6, false)];
    assert_eq!(choose(&grown, 6), Some(1), "six already run in lab 8");
    assert_eq!(choose(&grown, 3), Some(0), "lab 7 fits three best");
    let busy = [lab(7, 3, false), lab(8, 6, true)];
    assert_eq!(choose(&busy, 6), Some(0), "lab 7 grows: lab 8 is held");
    let fresh = [lab(7, 0, false), lab(8, 0, false)];
    assert_eq!(choose(&fresh, 3), Some(0), "the lowest id first");
    assert_eq!(
        choose(&[lab(7, 6, true)], 1),
        None,
        "the one lab is held: wait"
    );
}

#[test]
fn each_lab_test_holds_a_lab_of_its_own_and_its_helpers_reach_that_lab() {
    use std::sync::mpsc;
    use std::time::Duration;
    let labs = ids();
    let (held_tx, held_rx) = mpsc::channel();
    let (said, late) = std::thread::scope(|s| {
        // each holder keeps its lab until its `give_back` is sent or dropped (also when an
        // assertion below fails, so that a failure cannot leave the scope waiting)
        let mut give_back = Vec::new();
        for _ in &labs {
            let (back_tx, back_rx) = mpsc::channel::<()>();
            give_back.push(back_tx);
            let held_tx = held_tx.clone();
            s.spawn(move || {
                let lab = hold(1);
                let mesh = crate::util::Mesh::bare().command(&["lab", "status"]);
                let env: Vec<_> = mesh
                    .get_envs()
                    .filter(|(k, _)| *k == "MESH_LAB_ID")
                    .filter_map(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
                    .collect();
                let state = crate::util::lab_state();
                held_tx.send((lab.id(), lab_id(), env, state)).unwrap();
                let _ = back_rx.recv();
            });
        }
        let said: Vec<_> = labs.iter().map(|_| held_rx.recv().unwrap()).collect();
        // every lab is held: one more test waits until one is given back
        let (late_tx, late_rx) = mpsc::channel();
        s.spawn(move || late_tx.send(hold(1).id()).unwrap());
        let early = late_rx.recv_timeout(Duration::from_millis(500));
        assert!(
            early.is_err(),
            "every lab was held, yet a test got {early:?}"
        );
        drop(give_back);
        (said, late_rx.recv_timeout(Duration::from_secs(600)))
    });
    let mut got: Vec<u32> = said.iter().map(|(id, ..)| *id).collect();
    got.sort_unstable();
    assert_eq!(got, labs, "each test its own lab, every lab of the pool");
    for (id, named, env, state) in &said {
        assert_eq!(named, &id.to_string(), "lab_id() names the lab held");
        assert_eq!(env, &[id.to_string()], "mesh commands reach the lab held");
        assert!(state.ends_with(format!("lab{id}")), "{}", state.display());
    }
    assert!(late.is_ok_and(|id| labs.contains(&id)), "{late:?}");
    assert_eq!(lab_id(), labs[0].to_string(), "no lab held: the first");
}
