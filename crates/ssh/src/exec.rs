//! One command run on a connection: its input written while its answer is read.
//!
//! Both at once, because a command may end without reading all of its input (the launcher that
//! finds no helper exits at once): written first, an input past sshd's window (2 MiB) waited for
//! a window that a command already gone never opens, and the push hung until its timeout.

use bytes::Bytes;
use russh::ChannelMsg;

use super::{Bound, Output, Session, SshError};

impl Session {
    /// Runs `command` with `stdin` as its input (taken as it is: a `Vec` or a static slice is
    /// not copied) and waits for it to end, reading at most
    /// `bound` of each of its streams: past it, the channel is closed and the command fails.
    /// A command that ends before it has read all of `stdin` is answered as it ended.
    ///
    /// `command` is passed to the remote user's shell: callers build it only from constants and
    /// values they have checked (a hex digest), never from operator or module text.
    pub async fn exec(
        &self,
        command: &str,
        stdin: impl Into<Bytes>,
        bound: Bound,
    ) -> Result<Output, SshError> {
        let protocol = |source| SshError::Protocol {
            node: self.node.clone(),
            source,
        };
        let channel = self.handle.channel_open_session().await.map_err(protocol)?;
        channel.exec(true, command).await.map_err(protocol)?;
        let (mut read, write) = channel.split();
        // whole packets of the machine's largest size: through `data`'s AsyncRead path, a 1 MB
        // input went as 8 KiB packets, and sshd spent 40 ms of CPU more receiving it
        let input = stdin.into();
        let send = async {
            if !input.is_empty() {
                write.data_bytes(input).await?;
            }
            write.eof().await
        };
        tokio::pin!(send);
        let mut sending = true;
        let mut unsent = None;
        let mut out = Output::default();
        // Data can arrive after the exit status: read until the channel closes.
        loop {
            tokio::select! {
                sent = &mut send, if sending => {
                    sending = false;
                    unsent = sent.err();
                }
                msg = read.wait() => {
                    let Some(msg) = msg else { break };
                    let taken = match msg {
                        ChannelMsg::Data { data } => out.take(&bound, false, &data),
                        ChannelMsg::ExtendedData { data, ext: 1 } => out.take(&bound, true, &data),
                        ChannelMsg::ExitStatus { exit_status } => {
                            out.status = Some(exit_status);
                            Ok(())
                        }
                        _ => Ok(()),
                    };
                    if let Err(over) = taken {
                        let _ = write.close().await;
                        return Err(SshError::TooMuch {
                            node: self.node.clone(),
                            what: bound.what,
                            stream: over.stream,
                            bound: over.bound,
                        });
                    }
                }
            }
        }
        // input the command never read is no failure of the connection once it has answered
        match unsent {
            Some(e) if out.status.is_none() => Err(protocol(e)),
            _ => Ok(out),
        }
    }
}
