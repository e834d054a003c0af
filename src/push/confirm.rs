//! Confirming a change that can cut the operator off: after the helper applied it and said it
//! awaits confirmation, the operator opens a **new** connection (the same host-key check and
//! login as any), and runs the helper's `confirm`. A new connection that works is the proof the
//! change did not lock the operator out; if none can be made before the deadline, the helper on
//! the machine reverts the change by itself, and the push says so as a failure.

use std::time::Duration;

use tokio::time::Instant;

use super::transport::{Call, Links};
use super::{Helper, PushError, helper};
use crate::inventory::Node;
use crate::ssh::Output;
use crate::wire::{Awaiting, EXIT_ALREADY_REVERTED, EXIT_UNKNOWN_CHANGE};

/// How a confirmation reaches the machine again: a fresh session over the push's transport.
pub(super) struct Reconnect<'a> {
    pub(super) links: &'a dyn Links,
    pub(super) node: &'a Node,
    pub(super) helper: &'a Helper,
    pub(super) connect_timeout: Duration,
}

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
pub(super) async fn confirm(how: &Reconnect<'_>, awaiting: &Awaiting) -> Confirmation {
    let deadline = Instant::now() + Duration::from_secs(awaiting.deadline);
    let call = Awaiting::valid_id(&awaiting.id).then_some(Call::Confirm(&awaiting.id));
    let mut last = match call {
        Some(_) => "no try finished".to_string(),
        None => format!(
            "the helper named the change {:?}, which is not an id",
            awaiting.id
        ),
    };
    // a try that sent the confirm and heard no answer may have confirmed it on the machine
    let mut unanswered = false;
    while let Some(call) = call {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let mut sent = false;
        let timeout = how.connect_timeout.min(left);
        let attempt = tokio::time::timeout(left, try_once(how, timeout, call, &mut sent)).await;
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
                    super::answer::describe(out.status),
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

/// One try: a new session and the helper's `confirm`; `sent` says whether it went out (from
/// then on it may have run on the machine, whatever comes back).
async fn try_once(
    how: &Reconnect<'_>,
    timeout: Duration,
    call: Call<'_>,
    sent: &mut bool,
) -> Result<Output, PushError> {
    let session = how.links.open(how.node, timeout, true).await?;
    *sent = true;
    let out = session
        .run(how.helper, call, b"", helper::CONFIRM_BOUND)
        .await;
    session.close().await;
    out
}
