//! The seam between a push and the machines: what pushing one node needs of a way to it. A
//! [`Transport`] makes ready to reach a fan-out's nodes; its [`Links`] open a [`Session`] to one
//! of them; a session runs the helper ([`Call`]) with a declaration on stdin and a bound on its
//! answer, and stores the helper where it is missing (in the same round trip, where it can). `push_one` and the confirmation hold a
//! transport and do not know which it is: SSH ([`super::over_ssh`]), a root directory on this
//! machine ([`super::local`]), the inventory's choice per node ([`Inventoried`]), or a test's.
//!
//! The caller chooses it (the CLI, in [`super::Options`]); deploy, `mesh check` and a
//! rollback's reading of the machines take it from there.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use super::helper::Stored;
use super::{Helper, PushError};
use crate::inventory::Node;
use crate::ssh::{Bound, Output};
use crate::wire::Mode;

/// A future a transport hands back (boxed, so the traits are object-safe).
pub type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the helper is asked to do: the only things mesh runs on a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call<'a> {
    /// Apply, dry-run or adopt the declaration on stdin.
    Run(Mode),
    /// Confirm the change with this id (lower-case hex, checked by the caller).
    Confirm(&'a str),
}

impl Call<'_> {
    /// The helper's own arguments for it.
    pub fn args(&self) -> Vec<&str> {
        match self {
            Call::Run(Mode::Apply) => vec!["apply"],
            Call::Run(Mode::DryRun) => vec!["apply", "--dry-run"],
            Call::Run(Mode::Adopt) => vec!["adopt"],
            Call::Confirm(id) => vec!["confirm", id],
        }
    }
}

/// A way to machines, chosen by the caller of a push.
pub trait Transport: Send + Sync + std::fmt::Debug {
    /// Makes ready to reach `nodes` (`all` is the inventory, for jump hosts that are nodes),
    /// once, before any of them is reached. A node that cannot be reached as said comes back in
    /// [`Prepared::unusable`] with why: it fails alone, the others go ahead.
    fn prepare(&self, nodes: &[&Node], all: &[Node]) -> Result<Prepared, PrepareError>;
}

/// Why no node of a fan-out can be reached.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Reach(#[from] super::reach::ReachError),
}

/// A fan-out made ready: the links to its nodes, and the nodes that cannot be reached.
pub struct Prepared {
    pub links: Arc<dyn Links>,
    pub unusable: BTreeMap<String, PushError>,
}

/// The links to the nodes of one fan-out.
pub trait Links: Send + Sync {
    /// Opens a session to `node` within `timeout`. `fresh`: nothing is shared with earlier
    /// sessions (no jump host's connection reused): a confirmation's proof that the machine
    /// still lets the operator in.
    fn open<'a>(
        &'a self,
        node: &'a Node,
        timeout: Duration,
        fresh: bool,
    ) -> Boxed<'a, Result<Box<dyn Session>, PushError>>;
}

/// One open session to a node.
pub trait Session: Send + Sync {
    /// Runs the helper for `call` with `input` on its stdin, reading at most `bound` of its
    /// answer. A helper that is not there exits [`crate::wire::EXIT_HELPER_MISSING`].
    fn run<'a>(
        &'a self,
        helper: &'a Helper,
        call: Call<'a>,
        input: &'a [u8],
        bound: Bound,
    ) -> Boxed<'a, Result<Output, PushError>>;

    /// Stores `helper` where [`Session::run`] finds it, verified by its sha256 before it takes
    /// its place; exit 0 stored, [`crate::wire::EXIT_WRONG_PLATFORM`] (stderr: the platform)
    /// where it cannot run.
    fn upload<'a>(&'a self, helper: &'a Helper) -> Boxed<'a, Result<Output, PushError>>;

    /// Runs the helper for `call` as [`Session::run`] does, storing it first where the machine
    /// lacks it. This way runs it, stores it and runs it again; a transport that can send the
    /// helper ahead of its input does all of it in one round trip
    /// ([`Helper::run_storing_command`]).
    fn run_storing<'a>(
        &'a self,
        helper: &'a Helper,
        call: Call<'a>,
        input: &'a [u8],
        bound: Bound,
    ) -> Boxed<'a, Result<Stored, PushError>> {
        Box::pin(async move {
            let output = self.run(helper, call, input, bound).await?;
            if output.status != Some(crate::wire::EXIT_HELPER_MISSING) {
                return Ok(Stored::Ran {
                    output,
                    stored: false,
                });
            }
            let up = self.upload(helper).await?;
            if up.status != Some(0) {
                return Ok(Stored::NotStored(up));
            }
            let output = self.run(helper, call, input, bound).await?;
            Ok(Stored::Ran {
                output,
                stored: true,
            })
        })
    }

    /// Ends the session.
    fn close(self: Box<Self>) -> Boxed<'static, ()>;

    /// The jump host the session goes through (the last hop), for messages.
    fn via(&self) -> Option<&str> {
        None
    }
}

/// Each node the way the inventory says: a node added with `--local DIR` on this machine
/// ([`super::local::LocalTransport`]), every other over SSH ([`super::over_ssh::SshTransport`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct Inventoried;

impl Transport for Inventoried {
    fn prepare(&self, nodes: &[&Node], all: &[Node]) -> Result<Prepared, PrepareError> {
        let (local, remote): (Vec<&Node>, Vec<&Node>) =
            nodes.iter().partition(|n| n.local.is_some());
        let mut unusable = BTreeMap::new();
        let local = super::local::LocalTransport.prepare(&local, all)?;
        unusable.extend(local.unusable);
        // only a fan-out with a node over SSH reads the ssh configuration and keys
        let remote = if remote.is_empty() {
            None
        } else {
            let remote = super::over_ssh::SshTransport.prepare(&remote, all)?;
            unusable.extend(remote.unusable);
            Some(remote.links)
        };
        Ok(Prepared {
            links: Arc::new(Split {
                local: local.links,
                remote,
            }),
            unusable,
        })
    }
}

/// Local nodes one way, the others another.
struct Split {
    local: Arc<dyn Links>,
    remote: Option<Arc<dyn Links>>,
}

impl Links for Split {
    fn open<'a>(
        &'a self,
        node: &'a Node,
        timeout: Duration,
        fresh: bool,
    ) -> Boxed<'a, Result<Box<dyn Session>, PushError>> {
        match (&node.local, &self.remote) {
            (Some(_), _) => self.local.open(node, timeout, fresh),
            (None, Some(remote)) => remote.open(node, timeout, fresh),
            (None, None) => Box::pin(async move {
                Err(PushError::Local {
                    node: node.name.clone(),
                    reason: "it was not made ready before the push (a bug)".into(),
                })
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_is_a_fixed_verb_and_a_confirm_carries_only_its_id() {
        assert_eq!(Call::Run(Mode::Apply).args(), ["apply"]);
        assert_eq!(Call::Run(Mode::DryRun).args(), ["apply", "--dry-run"]);
        assert_eq!(Call::Run(Mode::Adopt).args(), ["adopt"]);
        assert_eq!(Call::Confirm("00ff").args(), ["confirm", "00ff"]);
    }
}
