//! A test transport: another transport with a fault of the end-to-end tests, for promises about
//! an operator that dies or loses an answer at one moment of a confirmation. Only a debug build
//! (`cargo test`) has it; the CLI reads [`Faults`] from the environment once, at its edge, and a
//! release `mesh` never does.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::helper::Stored;
use super::transport::{Boxed, Call, Links, PrepareError, Prepared, Session, Transport};
use super::{Helper, PushError};
use crate::inventory::Node;
use crate::ssh::{Bound, Output};

/// The operator exits (status 9) right after the helper's answer, before it opens the
/// confirmation's session, as if it were killed there.
pub const STOP_BEFORE_CONFIRMING: &str = "MESH_TEST_STOP_BEFORE_CONFIRMING";

/// The first confirm (every one, when it is `all`) runs on the machine and its answer is lost
/// before its exit status is read.
pub const LOSE_CONFIRM_REPLY: &str = "MESH_TEST_LOSE_CONFIRM_REPLY";

/// The faults a test asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    pub stop_before_confirming: bool,
    pub lose_confirm_reply: Lose,
}

/// Which confirms' answers are lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Lose {
    #[default]
    None,
    First,
    All,
}

impl Faults {
    /// The faults the environment asks for: read once, by the CLI.
    pub fn from_env() -> Faults {
        Faults {
            stop_before_confirming: std::env::var_os(STOP_BEFORE_CONFIRMING).is_some(),
            lose_confirm_reply: match std::env::var(LOSE_CONFIRM_REPLY).as_deref() {
                Ok("all") => Lose::All,
                Ok(_) => Lose::First,
                Err(_) => Lose::None,
            },
        }
    }

    /// `inner` with these faults; `inner` itself when there are none.
    pub fn wrap(self, inner: Arc<dyn Transport>) -> Arc<dyn Transport> {
        if self == Faults::default() {
            return inner;
        }
        Arc::new(Faulty {
            inner,
            faults: self,
            lost_one: Arc::new(AtomicBool::new(false)),
        })
    }
}

/// A transport with faults.
#[derive(Debug)]
struct Faulty {
    inner: Arc<dyn Transport>,
    faults: Faults,
    /// One answer was lost already (for [`Lose::First`]), across the whole process.
    lost_one: Arc<AtomicBool>,
}

impl Transport for Faulty {
    fn prepare(&self, nodes: &[&Node], all: &[Node]) -> Result<Prepared, PrepareError> {
        let prepared = self.inner.prepare(nodes, all)?;
        Ok(Prepared {
            links: Arc::new(FaultyLinks {
                inner: prepared.links,
                faults: self.faults,
                lost_one: self.lost_one.clone(),
            }),
            unusable: prepared.unusable,
        })
    }
}

struct FaultyLinks {
    inner: Arc<dyn Links>,
    faults: Faults,
    lost_one: Arc<AtomicBool>,
}

impl Links for FaultyLinks {
    fn open<'a>(
        &'a self,
        node: &'a Node,
        timeout: Duration,
        fresh: bool,
    ) -> Boxed<'a, Result<Box<dyn Session>, PushError>> {
        Box::pin(async move {
            // a fresh session is a confirmation's: the operator dies before it tries one (a
            // machine that locks it out never lets one open)
            if fresh && self.faults.stop_before_confirming {
                std::process::exit(9);
            }
            let inner = self.inner.open(node, timeout, fresh).await?;
            let session: Box<dyn Session> = Box::new(FaultySession {
                inner,
                faults: self.faults,
                lost_one: self.lost_one.clone(),
            });
            Ok(session)
        })
    }
}

struct FaultySession {
    inner: Box<dyn Session>,
    faults: Faults,
    lost_one: Arc<AtomicBool>,
}

impl FaultySession {
    /// Whether this confirm's answer is lost.
    fn loses(&self) -> bool {
        match self.faults.lose_confirm_reply {
            Lose::None => false,
            Lose::All => true,
            Lose::First => !self.lost_one.swap(true, Ordering::SeqCst),
        }
    }
}

impl Session for FaultySession {
    fn run<'a>(
        &'a self,
        helper: &'a Helper,
        call: Call<'a>,
        input: &'a [u8],
        bound: Bound,
    ) -> Boxed<'a, Result<Output, PushError>> {
        Box::pin(async move {
            if !matches!(call, Call::Confirm(_)) {
                return self.inner.run(helper, call, input, bound).await;
            }
            if !self.loses() {
                return self.inner.run(helper, call, input, bound).await;
            }
            // the confirm runs on the machine; what it answered never reaches the operator
            let _ = self.inner.run(helper, call, input, bound).await;
            Ok(Output {
                status: None,
                stdout: Vec::new(),
                stderr: b"the connection dropped before the exit status came back".to_vec(),
            })
        })
    }

    fn upload<'a>(&'a self, helper: &'a Helper) -> Boxed<'a, Result<Output, PushError>> {
        self.inner.upload(helper)
    }

    fn run_storing<'a>(
        &'a self,
        helper: &'a Helper,
        call: Call<'a>,
        input: &'a [u8],
        bound: Bound,
    ) -> Boxed<'a, Result<Stored, PushError>> {
        // the faults are a confirmation's, never a run's
        self.inner.run_storing(helper, call, input, bound)
    }

    fn via(&self) -> Option<&str> {
        self.inner.via()
    }

    fn close(self: Box<Self>) -> Boxed<'static, ()> {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::push::helper::CONFIRM_BOUND;
    use crate::push::local::LocalTransport;

    #[tokio::test]
    async fn a_lost_answer_is_lost_after_the_confirm_ran_and_only_the_first_unless_all() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // each confirm the machine runs is one line
        let helper = Helper::of(b"#!/bin/sh\necho \"$4\" >> \"$2/confirms\"\n", None);
        let node = Node {
            local: Some(root.to_path_buf()),
            ..Node::new("box", "localhost")
        };
        for (lose, answered) in [
            (Lose::None, [true, true]),
            (Lose::First, [false, true]),
            (Lose::All, [false, false]),
        ] {
            let faults = Faults {
                lose_confirm_reply: lose,
                ..Faults::default()
            };
            let transport = faults.wrap(Arc::new(LocalTransport));
            let links = transport.prepare(&[&node], &[]).unwrap().links;
            let _ = std::fs::remove_file(root.join("confirms"));
            for answer in answered {
                let s = links
                    .open(&node, Duration::from_secs(1), true)
                    .await
                    .unwrap();
                s.upload(&helper).await.unwrap();
                let out = s
                    .run(&helper, Call::Confirm("00ff"), b"", CONFIRM_BOUND)
                    .await
                    .unwrap();
                assert_eq!(out.status.is_some(), answer, "{lose:?}: {out:?}");
            }
            let ran = std::fs::read_to_string(root.join("confirms")).unwrap();
            assert_eq!(ran, "00ff\n00ff\n", "{lose:?}: every confirm ran");
        }
    }
}
