//! Progress while nodes are pushed: a spinner per node in flight on a terminal, nothing at all
//! otherwise. Each node's result is printed the moment it is in, above the spinners.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::push::{Event, Timings};

pub(crate) struct Progress {
    bars: Option<(MultiProgress, Vec<(String, ProgressBar)>)>,
    /// `-v`: each step of each node on stderr, with the time since that node's push began.
    verbose: bool,
}

impl Progress {
    pub(crate) fn new(nodes: &[String], verbose: bool) -> Progress {
        // spinners and step lines would overwrite each other: -v prints lines instead
        if verbose || !std::io::stderr().is_terminal() {
            return Progress {
                bars: None,
                verbose,
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10));
        let style = ProgressStyle::with_template("{spinner} {prefix:<12} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bars = nodes
            .iter()
            .map(|n| {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(style.clone());
                bar.set_prefix(n.clone());
                bar.set_message("waiting");
                bar.enable_steady_tick(Duration::from_millis(120));
                (n.clone(), bar)
            })
            .collect();
        Progress {
            bars: Some((multi, bars)),
            verbose,
        }
    }

    /// Where the push sends its events.
    pub(crate) fn sink(&self) -> Arc<dyn Fn(Event) + Send + Sync> {
        let bars: Vec<(String, ProgressBar)> = self
            .bars
            .as_ref()
            .map(|(_, b)| b.clone())
            .unwrap_or_default();
        let verbose = self.verbose;
        let begun: Mutex<BTreeMap<String, Instant>> = Mutex::new(BTreeMap::new());
        Arc::new(move |event: Event| {
            let msg = event.step();
            let (Event::Connecting(node)
            | Event::Uploading(node)
            | Event::Applying(node)
            | Event::Confirming(node, _)
            | Event::Answered(node, _)
            | Event::Done(node)) = &event;
            if verbose {
                let mut begun = begun.lock().unwrap_or_else(|p| p.into_inner());
                let since = *begun.entry(node.clone()).or_insert_with(Instant::now);
                err!("{node}: {msg} (at {:.2}s)", since.elapsed().as_secs_f64());
                if let Event::Answered(_, timings) = &event {
                    for line in helper_times(timings) {
                        err!("{node}:   {line}");
                    }
                }
            }
            if let Some((_, bar)) = bars.iter().find(|(name, _)| name == node) {
                if matches!(event, Event::Done(_)) {
                    bar.finish_and_clear();
                } else {
                    bar.set_message(msg);
                }
            }
        })
    }

    /// Prints `text` on stdout above the spinners (as is, when there are none). A stdout that
    /// is gone (a closed pipe) must not stop the push before every node is recorded.
    pub(crate) fn print(&self, text: &str) {
        let out = || {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush());
        };
        match &self.bars {
            Some((multi, _)) => multi.suspend(out),
            None => out(),
        }
    }

    pub(crate) fn finish(self) {
        if let Some((multi, bars)) = self.bars {
            for (_, bar) in bars {
                bar.finish_and_clear();
            }
            let _ = multi.clear();
        }
    }
}

/// The helper's own time for `-v`: each resource, then their sum; then each step of its run
/// (a helper from before step timings has none), their sum, and how long this side waited
/// for the answer from opening its channel (the rest is sshd's session, the helper's start,
/// writing its answer and the channel's round trips).
fn helper_times(timings: &Timings) -> Vec<String> {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let timed = &timings.resources;
    let mut lines: Vec<String> = timed
        .iter()
        .map(|(id, d)| format!("{:>8.2} ms  {id}", ms(*d)))
        .collect();
    let total: Duration = timed.iter().map(|(_, d)| *d).sum();
    lines.push(format!(
        "{:>8.2} ms  on the machine, {}",
        ms(total),
        super::render::counted(timed.len(), "resource")
    ));
    if timings.steps.is_empty() {
        return lines;
    }
    lines.extend(
        timings
            .steps
            .iter()
            .map(|(step, d)| format!("{:>8.2} ms  helper step: {step}", ms(*d))),
    );
    let run: Duration = timings.steps.iter().map(|(_, d)| *d).sum();
    lines.push(format!(
        "{:>8.2} ms  the helper's run, of {:.2} ms from opening its channel to its answer",
        ms(run),
        ms(timings.waited)
    ));
    lines
}

impl crate::deploy::Progress for Progress {
    fn sink(&self) -> Arc<dyn Fn(Event) + Send + Sync> {
        Progress::sink(self)
    }

    fn print(&self, text: &str) {
        Progress::print(self, text)
    }

    fn finish(self: Box<Self>) {
        Progress::finish(*self)
    }
}
