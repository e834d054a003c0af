//! The local helper as a child process of `mesh`: the declaration written to its stdin, each of
//! its streams read up to its bound, its exit waited for (on a blocking thread, not polled), and
//! the child killed when the run is dropped before it ended.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::wait::{WaitPidFlag, waitid};
use nix::unistd::Pid;

use crate::ssh::{Bound, Output};

/// Kills the child when the run is dropped before it ended.
struct Reaper(Arc<Mutex<Child>>);

impl Drop for Reaper {
    fn drop(&mut self) {
        let mut child = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Why a run of the local helper gave no answer: it could not be started or waited for, or a
/// stream of it broke, stayed open or passed its bound.
#[derive(Debug, thiserror::Error)]
pub(super) enum ChildError {
    #[error("starting the helper: {0}")]
    Start(std::io::Error),
    #[error("the helper's pid: {0}")]
    Pid(std::num::TryFromIntError),
    #[error("waiting for the helper: {0}")]
    Wait(std::io::Error),
    #[error("waiting for the helper: {0}")]
    WaitThread(tokio::task::JoinError),
    #[error("waiting for the helper: it had not exited when told it had")]
    NotExited,
    #[error("{what} sent more than {most} bytes on {stream}: refused")]
    TooMuch {
        what: &'static str,
        most: usize,
        stream: &'static str,
    },
    #[error("reading the helper's {stream}: {why}")]
    Read {
        stream: &'static str,
        why: tokio::task::JoinError,
    },
    #[error(
        "the helper's {stream} stayed open {} s after it exited",
        STREAMS_AFTER_EXIT.as_secs()
    )]
    StayedOpen { stream: &'static str },
}

/// How long a helper's streams may stay open once it has exited (a process it left behind
/// holding them): then what was read is its answer.
const STREAMS_AFTER_EXIT: Duration = Duration::from_secs(5);

/// Runs `command` with `input` on its stdin, reading at most `bound` of each stream.
pub(super) async fn run_bounded(
    mut command: Command,
    input: Vec<u8>,
    bound: Bound,
) -> Result<Output, ChildError> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn(&mut command).await?;
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let child = Reaper(Arc::new(Mutex::new(child)));
    // a helper that stops reading early (it refused the declaration) is not an error here
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input);
        }
    });
    let out = tokio::task::spawn_blocking(move || read_bounded(stdout, bound.stdout));
    let err = tokio::task::spawn_blocking(move || read_bounded(stderr, bound.stderr));
    let status = exited(&child).await?;
    let _ = writer.join();
    let read = |joined: Result<Result<Result<Vec<u8>, usize>, tokio::task::JoinError>, _>,
                stream: &'static str| match joined {
        Ok(Ok(Ok(bytes))) => Ok(bytes),
        Ok(Ok(Err(most))) => Err(ChildError::TooMuch {
            what: bound.what,
            most,
            stream,
        }),
        Ok(Err(why)) => Err(ChildError::Read { stream, why }),
        Err(_) => Err(ChildError::StayedOpen { stream }),
    };
    let stdout = read(
        tokio::time::timeout(STREAMS_AFTER_EXIT, out).await,
        "stdout",
    )?;
    let stderr = read(
        tokio::time::timeout(STREAMS_AFTER_EXIT, err).await,
        "stderr",
    )?;
    Ok(Output {
        status: status.code().and_then(|c| u32::try_from(c).ok()),
        stdout,
        stderr,
    })
}

/// Waits for the child to exit, then reaps it. The wait blocks a thread without holding the
/// child (`WNOWAIT` leaves it unreaped), so a run dropped meanwhile can still kill it through
/// [`Reaper`]; the child is reaped only under its lock, so its pid is never another's when
/// killed.
async fn exited(child: &Reaper) -> Result<std::process::ExitStatus, ChildError> {
    let pid = child.0.lock().unwrap_or_else(|p| p.into_inner()).id();
    let pid = Pid::from_raw(i32::try_from(pid).map_err(ChildError::Pid)?);
    let waited = tokio::task::spawn_blocking(move || {
        loop {
            let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
            match waitid(nix::sys::wait::Id::Pid(pid), flags) {
                Err(nix::errno::Errno::EINTR) => continue,
                // reaped (ECHILD) or exited: either way try_wait below says which
                _ => return,
            }
        }
    })
    .await;
    waited.map_err(ChildError::WaitThread)?;
    match child.0.lock().unwrap_or_else(|p| p.into_inner()).try_wait() {
        Ok(Some(status)) => Ok(status),
        Ok(None) => Err(ChildError::NotExited),
        Err(e) => Err(ChildError::Wait(e)),
    }
}

/// How long a helper just stored may be busy to exec.
const BUSY_FOR: Duration = Duration::from_secs(5);

/// Starts `command`. A helper stored a moment ago can be refused as busy (ETXTBSY) while a
/// process forked by another thread of this one (another node's helper) still holds the file
/// open for writing, until it execs: tried again until [`BUSY_FOR`].
async fn spawn(command: &mut Command) -> Result<Child, ChildError> {
    let started = tokio::time::Instant::now();
    loop {
        match command.spawn() {
            Err(e)
                if e.kind() == std::io::ErrorKind::ExecutableFileBusy
                    && started.elapsed() < BUSY_FOR =>
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            spawned => return spawned.map_err(ChildError::Start),
        }
    }
}

/// All of `stream`, or `Err(most)` once it passes `most` bytes.
fn read_bounded(stream: Option<impl Read>, most: usize) -> Result<Vec<u8>, usize> {
    let mut bytes = Vec::new();
    if let Some(stream) = stream {
        let limit = u64::try_from(most).unwrap_or(u64::MAX).saturating_add(1);
        // an unreadable stream ends the answer where it broke
        let _ = stream.take(limit).read_to_end(&mut bytes);
    }
    if bytes.len() > most {
        return Err(most);
    }
    Ok(bytes)
}
