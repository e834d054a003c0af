//! Confirming a change that can cut the operator off: after the helper applied it and said it
//! awaits confirmation, the operator opens a **new** connection (the same host-key check and
//! login as any), and runs the helper's `confirm`. A new connection that works is the proof the
//! change did not lock the operator out; if none can be made before the deadline, the helper on
//! the machine reverts the change by itself, and the push says so as a failure.

use std::time::Duration;

use tokio::time::Instant;

use super::Helper;
use crate::ssh::{self, Credentials, Target};
use crate::wire::{Awaiting, EXIT_ALREADY_REVERTED, EXIT_UNKNOWN_CHANGE};

/// Environment variable for the end-to-end tests only: the operator exits right after the
/// helper's answer, before it confirms, as if it were killed there. Only an operator built with
/// debug assertions (`cargo test`) has it: a release `mesh` never reads it.
#[cfg(debug_assertions)]
pub const STOP_BEFORE_CONFIRMING: &str = "MESH_TEST_STOP_BEFORE_CONFIRMING";

/// Environment variable for the end-to-end tests only, read only by a debug build: the first
/// confirm (every one, when it is `all`) runs on the machine and its connection is dropped
/// before its exit status is read.
#[cfg(debug_assertions)]
pub const LOSE_CONFIRM_REPLY: &str = "MESH_TEST_LOSE_CONFIRM_REPLY";

/// How a change awaiting confirmation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// Confirmed over a new connection: it stays.
    Confirmed,
    /// No new connection could confirm it within `seconds`, or the helper said it had reverted
    /// it: the helper reverts it at its deadline. `last` says why the last try failed.
    Reverted { seconds: u64, last: String },
    /// Whether change `id` stayed cannot be said, and `why`: the machine knows nothing of it
    /// (nothing awaits, no note says what became of it), or a confirm reached the machine and no
    /// answer ever came back.
    Unknown { id: String, why: String },
}

impl Confirmation {
    /// In words, for the report.
    pub fn said(&self) -> String {
        match self {
            Confirmation::Confirmed => "confirmed".into(),
            Confirmation::Reverted { seconds, last } => {
                format!("reverted: could not reconnect within {seconds} s ({last})")
            }
            Confirmation::Unknown { id, why } => format!(
                "unknown: {why}, so whether change {id} stayed cannot be said; the next push or \
                 check asks the machine"
            ),
        }
    }
}

/// Pause between two tries to reconnect.
const RETRY: Duration = Duration::from_secs(1);

/// Confirms `awaiting` over new connections, tried until its deadline.
pub(super) async fn confirm(
    target: &Target,
    sudo: bool,
    helper: &Helper,
    credentials: &Credentials,
    connect_timeout: Duration,
    awaiting: &Awaiting,
) -> Confirmation {
    let deadline = Instant::now() + Duration::from_secs(awaiting.deadline);
    let command =
        Awaiting::valid_id(&awaiting.id).then(|| helper.confirm_command(&awaiting.id, sudo));
    let mut last = match command {
        Some(_) => "no try finished".to_string(),
        None => format!(
            "the helper named the change {:?}, which is not an id",
            awaiting.id
        ),
    };
    // a try that sent the confirm and heard no answer may have confirmed it on the machine
    let mut unanswered = false;
    while let Some(command) = &command {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let mut sent = false;
        let timeout = connect_timeout.min(left);
        let attempt = tokio::time::timeout(
            left,
            try_once(target, credentials, timeout, command, &mut sent),
        )
        .await;
        unanswered |= sent && !matches!(&attempt, Ok(Ok(out)) if out.status.is_some());
        // a try whose answer was lost may have confirmed it: the helper says so when asked again
        match attempt {
            Ok(Ok(out)) if out.status == Some(0) => return Confirmation::Confirmed,
            Ok(Ok(out)) if out.status == Some(EXIT_ALREADY_REVERTED) => {
                return Confirmation::Reverted {
                    seconds: awaiting.deadline,
                    last: "the helper had reverted it already".into(),
                };
            }
            Ok(Ok(out)) if out.status == Some(EXIT_UNKNOWN_CHANGE) => {
                return Confirmation::Unknown {
                    id: awaiting.id.clone(),
                    why: "the machine knows nothing of it".into(),
                };
            }
            Ok(Ok(out)) => {
                last = format!(
                    "the helper's confirm failed (exit {}): {}",
                    out.status.map_or("none".into(), |s| s.to_string()),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok(Err(e)) => last = e.to_string(),
            Err(_) => break,
        }
        tokio::time::sleep(RETRY.min(deadline.saturating_duration_since(Instant::now()))).await;
    }
    if unanswered {
        return Confirmation::Unknown {
            id: awaiting.id.clone(),
            why: format!(
                "a confirm reached the machine and no answer came back within {} s ({last})",
                awaiting.deadline
            ),
        };
    }
    Confirmation::Reverted {
        seconds: awaiting.deadline,
        last,
    }
}

/// One try: a new connection and the helper's `confirm`; `sent` says whether the command went
/// out (from then on it may have run on the machine, whatever comes back).
async fn try_once(
    target: &Target,
    credentials: &Credentials,
    timeout: Duration,
    command: &str,
    sent: &mut bool,
) -> Result<ssh::Output, ssh::SshError> {
    let session = ssh::connect(target, credentials, timeout).await?;
    *sent = true;
    #[cfg(debug_assertions)]
    if lose_reply() {
        session.exec_then_drop(command).await?;
        return Ok(ssh::Output {
            status: None,
            stdout: Vec::new(),
            stderr: b"the connection dropped before the exit status came back".to_vec(),
        });
    }
    let out = session
        .exec(command, b"", super::helper::CONFIRM_BOUND)
        .await;
    session.close().await;
    out
}

/// Whether this try's answer is to be lost: the first of this process's, or every one when the
/// tests say `all`; never in a release build.
#[cfg(debug_assertions)]
fn lose_reply() -> bool {
    static LOST_ONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    match std::env::var(LOSE_CONFIRM_REPLY).as_deref() {
        Ok("all") => true,
        Ok(_) => !LOST_ONE.swap(true, std::sync::atomic::Ordering::SeqCst),
        Err(_) => false,
    }
}
