//! What a remote command sends back, read within bounds.
//!
//! Everything read from a machine is the machine's to choose: its root, or a helper replaced by
//! another program, can answer with gigabytes. Every command is run with a [`Bound`] for each of
//! its streams, and a machine that sends more fails on its own, named, before the operator holds
//! more than the bound of it (during `push --all` the other machines go on).

/// The most of each stream of one command mesh reads, and what the command is, for the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// What answers, in a few words ("the helper's answer").
    pub what: &'static str,
    pub stdout: usize,
    pub stderr: usize,
}

/// What a remote command gave back.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// The exit status; `None` when it was killed by a signal or the channel closed first.
    pub status: Option<u32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// A stream that went past its bound: which, and the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Overflow {
    pub(super) stream: &'static str,
    pub(super) bound: usize,
}

impl Output {
    /// Adds what arrived on stdout (`stderr` false) or stderr, refusing what would pass the
    /// bound: nothing past it is ever held.
    pub(super) fn take(
        &mut self,
        bound: &Bound,
        stderr: bool,
        data: &[u8],
    ) -> Result<(), Overflow> {
        let (buffer, most, stream) = if stderr {
            (&mut self.stderr, bound.stderr, "stderr")
        } else {
            (&mut self.stdout, bound.stdout, "stdout")
        };
        if data.len() > most.saturating_sub(buffer.len()) {
            return Err(Overflow {
                stream,
                bound: most,
            });
        }
        buffer.extend_from_slice(data);
        Ok(())
    }
}

/// A size as an operator reads it: `64 MiB`, `512 KiB`, `100 bytes`, and the bytes too where
/// the unit rounds (`64.0 MiB (67110126 bytes)`).
pub fn size(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    let (unit, name) = match bytes {
        b if b >= MIB => (MIB, "MiB"),
        b if b >= KIB => (KIB, "KiB"),
        _ => return format!("{bytes} bytes"),
    };
    if bytes.is_multiple_of(unit) {
        format!("{} {name}", bytes / unit)
    } else {
        // one decimal of a size far below 2^53 bytes: a float is exact enough
        let shown = bytes as f64 / unit as f64;
        format!("{shown:.1} {name} ({bytes} bytes)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_past_its_bound_is_refused_and_nothing_past_it_held() {
        let bound = Bound {
            what: "the helper's answer",
            stdout: 10,
            stderr: 4,
        };
        let mut out = Output::default();
        out.take(&bound, false, b"12345").unwrap();
        out.take(&bound, false, b"67890").unwrap();
        assert_eq!(
            out.take(&bound, false, b"x"),
            Err(Overflow {
                stream: "stdout",
                bound: 10
            })
        );
        assert_eq!(out.stdout, b"1234567890");
        assert_eq!(
            out.take(&bound, true, b"12345"),
            Err(Overflow {
                stream: "stderr",
                bound: 4
            })
        );
        assert!(out.stderr.is_empty());
        assert_eq!(size(64 << 20), "64 MiB");
        assert_eq!(size(3 << 10), "3 KiB");
        assert_eq!(size(1000), "1000 bytes");
        assert_eq!(size((64 << 20) + 1000), "64.0 MiB (67109864 bytes)");
    }
}
