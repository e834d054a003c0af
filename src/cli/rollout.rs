//! The rollout flags `mesh plan` and `mesh push` share, and how a rollout reads: its waves, the
//! nodes a stop held, a stopped rollout and what it has left.

use std::fmt::Write as _;

use clap::Args;

use crate::deploy::{self, FailureBudget, MaxUnavailable, RolloutRow, RolloutState, Wave};

/// How the selected nodes are grouped into waves.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct RolloutArgs {
    /// Nodes pushed first, in a wave of their own: if one fails, no further wave starts.
    #[arg(long, default_value_t = 0, value_name = "N")]
    canary: usize,
    /// At most this many (N) or this share (P%) of each module's assignments restart at once,
    /// for this push (instead of each module.json's "rollout": {"max-unavailable"}).
    #[arg(long, value_name = "N|P%", value_parser = MaxUnavailable::parse)]
    max_unavailable: Option<MaxUnavailable>,
}

impl RolloutArgs {
    pub(crate) fn options(&self, max_failed: FailureBudget) -> deploy::Options {
        deploy::Options {
            canary: self.canary,
            max_unavailable: self.max_unavailable,
            max_failed,
        }
    }
}

/// The waves, a line each.
pub(crate) fn waves_text(waves: &[Wave]) -> String {
    let mut out = String::new();
    if waves.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "waves (a push sends them in this order, at most --parallel nodes of a wave at once):"
    );
    for w in waves {
        let _ = writeln!(
            out,
            "  wave {}{}: {}",
            w.number,
            if w.canary { " (canary)" } else { "" },
            w.nodes.join(" ")
        );
    }
    if let [first, .., last] = waves {
        // the default holds independent machines too: said before a cron push meets it
        let _ = writeln!(
            out,
            "  a failure in wave {} holds waves {}-{} (--max-failed 0, the default; `--max-failed \
             N|P%` lets that many fail, for machines that do not depend on each other; a failed \
             canary always holds them)",
            first.number,
            first.number + 1,
            last.number
        );
    }
    out
}

/// The line a push says as a wave starts; a wave wider than `parallel` says it goes that many
/// at a time.
pub(crate) fn wave_start(w: &Wave, of: usize, parallel: usize) -> String {
    let mut line = format!(
        "wave {} of {of}{}: {}",
        w.number,
        if w.canary { " (canary)" } else { "" },
        w.nodes.join(" ")
    );
    if w.nodes.len() > parallel.max(1) {
        let _ = write!(line, " ({} at a time: --parallel)", parallel.max(1));
    }
    line
}

pub(crate) use crate::deploy::wave_map;

/// What a push says at its end when its rollout stopped or left nodes for `--resume`.
pub(crate) fn stop_text(by: &str, held: &[(String, usize)], unreachable: &[String]) -> String {
    let mut out = format!("rollout stopped: {by}\n");
    if !held.is_empty() {
        let names: Vec<&str> = held.iter().map(|(n, _)| n.as_str()).collect();
        let _ = writeln!(
            out,
            "held (rollout stopped), sent nothing: {}",
            names.join(", ")
        );
    }
    if !unreachable.is_empty() {
        let _ = writeln!(
            out,
            "unreachable (not counted against --max-failed): {}",
            unreachable.join(", ")
        );
    }
    out.push_str("once the failure is fixed, `mesh push --resume` sends the nodes not yet applied, in their waves\n");
    out
}

/// What `mesh plan` says of the last rollout when it did not finish. `running_now`: another
/// command holds the push lock, so a rollout not yet ended is running, not cut short, and the
/// nodes it has not reached are still its own to send.
pub(crate) fn unfinished_text(r: &RolloutRow, running_now: bool) -> String {
    let left: Vec<String> = r
        .left()
        .iter()
        .map(|n| format!("{} (wave {})", n.node, n.wave))
        .collect();
    if running_now && r.state == RolloutState::Running {
        return format!(
            "the rollout started {} is running now (another mesh command holds this inventory's \
             push lock)\n  not sent yet: {}\n",
            r.started_at,
            left.join(", ")
        );
    }
    let how = match (&r.state, &r.stopped_by) {
        (RolloutState::Running, _) => "was cut short (its operator stopped before it ended)".into(),
        (_, Some(by)) => format!("stopped: {by}"),
        _ => "stopped".into(),
    };
    format!(
        "the rollout started {} {how}\n  left: {}\n  `mesh push --resume` sends them in their waves\n",
        r.started_at,
        left.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::wave_start;
    use crate::deploy::Wave;

    #[test]
    fn a_wave_wider_than_parallel_says_it_goes_that_many_at_a_time() {
        let w = Wave {
            number: 2,
            canary: false,
            nodes: vec!["a".into(), "b".into(), "c".into()],
        };
        assert_eq!(wave_start(&w, 3, 10), "wave 2 of 3: a b c");
        assert_eq!(wave_start(&w, 3, 3), "wave 2 of 3: a b c");
        assert_eq!(
            wave_start(&w, 3, 2),
            "wave 2 of 3: a b c (2 at a time: --parallel)"
        );
    }
}
