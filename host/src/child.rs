//! Every command the helper runs on the machine (a file's check, `systemctl`, `docker`,
//! `apt-get`, `getent`) runs here, under a deadline: a step that hangs is killed with its whole
//! process group and whatever below it left the group (`setsid`), and fails by itself, so the
//! helper always finishes and lets go of the machine's lock. The deadlines of every kind of step
//! are the constants below, and nowhere else.
//!
//! An operator that went away (its `--timeout` passed, its SSH session was killed) closes the
//! helper's stdout: the command running then is given [`GRACE`] more to end (a slow check ends
//! by itself; a hung one is killed), and the helper finishes the rest of its run under the usual
//! deadlines, so its record says what the machine has, and lets go of its lock.

use std::io::{self, Read};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A file's check command (`validate`): it reads a configuration, it does not serve.
pub(crate) const CHECK: Duration = Duration::from_secs(60);
/// `systemctl` (start, restart, reload, stop, show, daemon-reload): longer than systemd's own
/// start timeout (90 s by default), so systemd says why a unit did not start when it can.
pub(crate) const SYSTEMCTL: Duration = Duration::from_secs(120);
/// `docker` (inspect, run, stop, rm): a `docker run` may pull an image first.
pub(crate) const DOCKER: Duration = Duration::from_secs(600);
/// `apt-get install`: downloads, and every package's scripts.
pub(crate) const PACKAGES: Duration = Duration::from_secs(900);
/// `apt-get update`: every repository's lists downloaded, one after another; an unreachable
/// mirror is given up on by apt itself well within this.
pub(crate) const APT_UPDATE: Duration = Duration::from_secs(300);
/// A look-up (`getent`, `dpkg-query`, `docker ps`): answers at once or not at all.
pub(crate) const LOOKUP: Duration = Duration::from_secs(30);
/// `useradd`, `usermod`, `userdel`, `groupadd`, `groupdel`: files under `/etc` and a home.
pub(crate) const ACCOUNTS: Duration = Duration::from_secs(60);
/// What the command running when the operator went away has left, at most.
pub(crate) const GRACE: Duration = Duration::from_secs(15);
/// How long a helper waits for the machine's lock before it says another one is applying:
/// longer than [`GRACE`], so a push right after one that timed out waits for that helper to end.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(30);

/// How often a running command is looked at where the kernel gives no pidfd to wait on.
const TICK: Duration = Duration::from_millis(20);
/// The longest wait on a command's pidfd: how soon an operator who went away is noticed.
pub(crate) const WAKE: Duration = Duration::from_millis(250);

/// Set once the helper's stdout is closed: nobody reads the report any more.
static OPERATOR_GONE: AtomicBool = AtomicBool::new(false);

/// Whether the helper's stdout was closed: nobody reads the report any more.
pub(crate) fn operator_gone() -> bool {
    OPERATOR_GONE.load(Ordering::SeqCst)
}

/// Watches the helper's stdout (in a thread of its own) and notes when its reader goes away.
pub(crate) fn watch_operator() {
    let spawned = std::thread::Builder::new()
        .name("operator".into())
        .spawn(|| {
            use rustix::event::{PollFd, PollFlags, poll};
            let stdout = io::stdout();
            loop {
                // asking for no event: poll says only that the pipe's reader closed it
                let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
                match poll(&mut fds, None) {
                    Ok(_) if fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP) => {
                        OPERATOR_GONE.store(true, Ordering::SeqCst);
                        return;
                    }
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    // stdout cannot be watched (not a pipe or socket): only deadlines apply
                    Err(_) => return,
                }
            }
        });
    // without the watcher only the deadlines end a hung step
    drop(spawned);
}

/// Runs a command to its end within a deadline.
pub(crate) trait Bounded {
    /// Like [`Command::output`] (stdin closed), but a command still running after `deadline` is
    /// killed with its process group, and that is an error of kind [`io::ErrorKind::TimedOut`]
    /// naming the deadline.
    fn output_within(&mut self, deadline: Duration) -> io::Result<Output>;
}

impl Bounded for Command {
    fn output_within(&mut self, deadline: Duration) -> io::Result<Output> {
        let gone_before = OPERATOR_GONE.load(Ordering::SeqCst);
        let mut child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // its own group: killing it kills what it started too
            .process_group(0)
            .spawn()?;
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        // woken the moment the command ends, instead of at the next tick (a look-up costs
        // microseconds, not a tick); the child is not reaped yet, so its pid is still its own
        let pidfd = rustix::process::pidfd_open(
            rustix::process::Pid::from_child(&child),
            rustix::process::PidfdFlags::empty(),
        )
        .ok();
        let started = Instant::now();
        let mut abandoned_at = None;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            let overran = started.elapsed() >= deadline;
            if abandoned_at.is_none() && !gone_before && OPERATOR_GONE.load(Ordering::SeqCst) {
                abandoned_at = Some(Instant::now());
            }
            let abandoned = abandoned_at.is_some_and(|at| at.elapsed() >= GRACE);
            if overran || abandoned {
                // what left the group (`setsid`) is still below it: taken before the group goes,
                // since its parent's death would hand it to init
                let escaped = descendants(child.id());
                let _ = rustix::process::kill_process_group(
                    rustix::process::Pid::from_child(&child),
                    rustix::process::Signal::KILL,
                );
                for pid in escaped {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
                let _ = child.wait();
                let why = if overran {
                    format!(
                        "did not finish within its deadline of {} s and was killed",
                        deadline.as_secs()
                    )
                } else {
                    format!(
                        "was killed after {} s: the operator went away (its connection closed) \
                         and it did not end within {} s",
                        started.elapsed().as_secs(),
                        GRACE.as_secs()
                    )
                };
                return Err(io::Error::new(io::ErrorKind::TimedOut, why));
            }
            let left = deadline.saturating_sub(started.elapsed());
            await_exit(pidfd.as_ref(), left.min(WAKE));
        };
        Ok(Output {
            status,
            stdout: collect(&stdout),
            stderr: collect(&stderr),
        })
    }
}

/// Waits until a command may have ended, for at most `most`: on its pidfd, which is readable
/// once it has exited, else (no pidfd) a short sleep.
fn await_exit(pidfd: Option<&std::os::fd::OwnedFd>, most: Duration) {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    if let Some(fd) = pidfd {
        let timeout = Timespec {
            tv_sec: i64::try_from(most.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(most.subsec_nanos()),
        };
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        if poll(&mut fds, Some(&timeout)).is_ok() {
            return;
        }
    }
    std::thread::sleep(most.min(TICK));
}

/// Every process below `root` now, by the parent each names in `/proc/PID/stat`.
fn descendants(root: u32) -> Vec<rustix::process::Pid> {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = std::collections::HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(parent) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .as_deref()
                .and_then(parent_of)
            {
                children.entry(parent).or_default().push(pid);
            }
        }
    }
    let mut out = Vec::new();
    let mut next = vec![root];
    while let Some(pid) = next.pop() {
        for &c in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if let Some(p) = i32::try_from(c)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                out.push(p);
            }
            next.push(c);
        }
    }
    out
}

/// The parent pid in a `/proc/PID/stat` line: the second field after the command's `)` (the
/// command itself may hold spaces and parentheses).
fn parent_of(stat: &str) -> Option<u32> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Reads a child's pipe to its end in a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = tx.send(bytes);
        });
    }
    rx
}

/// What a pipe held; a process the command left behind, out of its group, may keep the pipe open:
/// what came by then is enough.
fn collect(rx: &mpsc::Receiver<Vec<u8>>) -> Vec<u8> {
    rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_ends_gives_its_output_and_status() {
        let out = Command::new("sh")
            .args(["-c", "echo out; echo err >&2; exit 3"])
            .output_within(Duration::from_secs(10))
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn a_command_past_its_deadline_is_killed_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let started = Instant::now();
        let e = Command::new("sh")
            .args([
                "-c",
                &format!("sleep 100000 & echo $! > {}; wait", pid_file.display()),
            ])
            .output_within(Duration::from_secs(1))
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(e.to_string().contains("deadline of 1 s"), "{e}");
        // the sleep the shell started is gone too
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let alive = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|stat| !stat.contains(") Z "));
        assert!(!alive, "the grandchild {pid} still runs");
    }

    #[test]
    fn a_process_that_left_the_group_is_killed_with_the_command_past_its_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let e = Command::new("sh")
            .args([
                "-c",
                &format!(
                    "setsid sleep 100000 & echo $! > {}; wait",
                    pid_file.display()
                ),
            ])
            .output_within(Duration::from_secs(1))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let alive = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|stat| !stat.contains(") Z "));
        if alive {
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        }
        assert!(!alive, "the process that left the group ({pid}) still runs");
    }

    #[test]
    fn the_parent_is_read_past_a_command_with_spaces_and_parentheses() {
        assert_eq!(parent_of("42 (a (b) c) S 7 42 42 0"), Some(7));
        assert_eq!(parent_of("garbage"), None);
    }
}
