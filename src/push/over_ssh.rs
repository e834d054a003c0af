//! The SSH transport: each node reached as the inventory and OpenSSH's configuration say
//! ([`super::reach`], [`super::route`]), its host key verified, the helper run by one of the
//! constant commands of [`super::helper`] (through `sudo -n` for a user other than root), and
//! uploaded gzipped where the machine lacks this version of it: ahead of the helper's input, in
//! the same `exec`.

use std::sync::Arc;
use std::time::Duration;

use super::helper::Stored;
use super::transport::{Boxed, Call, Links, PrepareError, Prepared, Session, Transport};
use super::{Helper, PushError, Reach, helper};
use crate::inventory::Node;
use crate::ssh::{self, Bound, Output, SshError};

/// Reaches every node over SSH.
#[derive(Debug, Default, Clone, Copy)]
pub struct SshTransport;

impl Transport for SshTransport {
    fn prepare(&self, nodes: &[&Node], all: &[Node]) -> Result<Prepared, PrepareError> {
        let (reach, unusable) = super::reach::reach(nodes, all)?;
        Ok(Prepared {
            links: Arc::new(reach),
            unusable,
        })
    }
}

impl Links for Reach {
    fn open<'a>(
        &'a self,
        node: &'a Node,
        timeout: Duration,
        fresh: bool,
    ) -> Boxed<'a, Result<Box<dyn Session>, PushError>> {
        Box::pin(async move {
            let target = self
                .targets
                .get(&node.name)
                .ok_or_else(|| SshError::Config {
                    node: node.name.clone(),
                    reason: "it was not resolved before the push (a bug)".into(),
                })?;
            // a fresh session opens its jump hosts' connections anew too
            let hops = (!fresh).then_some(&self.hops);
            let session = ssh::connect_via(target, &self.credentials, hops, timeout).await?;
            let session: Box<dyn Session> = Box::new(SshSession {
                session,
                sudo: node.sudo,
                via: target.jumps.last().map(|hop| hop.node.clone()),
            });
            Ok(session)
        })
    }
}

/// One SSH connection to a node.
struct SshSession {
    session: ssh::Session,
    sudo: bool,
    via: Option<String>,
}

impl Session for SshSession {
    fn run<'a>(
        &'a self,
        helper: &'a Helper,
        call: Call<'a>,
        input: &'a [u8],
        bound: Bound,
    ) -> Boxed<'a, Result<Output, PushError>> {
        Box::pin(async move {
            let command = helper.command(call, self.sudo);
            Ok(self.session.exec(&command, input.to_vec(), bound).await?)
        })
    }

    fn upload<'a>(&'a self, helper: &'a Helper) -> Boxed<'a, Result<Output, PushError>> {
        Box::pin(async move {
            let command = helper.upload_command(self.sudo);
            Ok(self
                .session
                .exec(&command, helper.gzipped(), helper::UPLOAD_BOUND)
                .await?)
        })
    }

    fn run_storing<'a>(
        &'a self,
        helper: &'a Helper,
        call: Call<'a>,
        input: &'a [u8],
        bound: Bound,
    ) -> Boxed<'a, Result<Stored, PushError>> {
        Box::pin(async move {
            let command = helper.run_storing_command(call, self.sudo);
            let mut stdin = Vec::with_capacity(helper.gzipped().len() + input.len());
            stdin.extend_from_slice(helper.gzipped());
            stdin.extend_from_slice(input);
            let out = self.session.exec(&command, stdin, bound).await?;
            Ok(helper::launched(out))
        })
    }

    fn close(self: Box<Self>) -> Boxed<'static, ()> {
        Box::pin(self.session.close())
    }

    fn via(&self) -> Option<&str> {
        self.via.as_deref()
    }
}
