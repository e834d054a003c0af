//! The helper's own time on each step of a run outside its resources (reading the declaration,
//! the lock, its record, the units' state, writing the record, the facts …), sent back in the
//! answer (`Report::steps`) so that the operator's `-v` can say where a run spends its time on
//! the machine; each resource's own time is its outcome's (`Outcome::micros`).
//!
//! One clock per process: a step is the time since the step before it ended (or since
//! [`start`]), so the steps add up to the run, with nothing counted twice. Only `main` starts
//! it: code run by a test, or by a command that sends no answer, marks nothing.

use std::sync::Mutex;
use std::time::Instant;

use mesh_wire::StepTime;

struct Clock {
    since: Instant,
    steps: Vec<StepTime>,
}

impl Clock {
    fn new() -> Clock {
        Clock {
            since: Instant::now(),
            steps: Vec::new(),
        }
    }

    /// Ends `step`: the time since the last step ended is its time. A step named twice (the dry
    /// run that asks whether a change needs confirming measures the resources too) adds up
    /// under its first place.
    fn done(&mut self, step: &str) {
        let now = Instant::now();
        let micros = u64::try_from(now.duration_since(self.since).as_micros()).unwrap_or(u64::MAX);
        self.since = now;
        match self.steps.iter_mut().find(|s| s.step == step) {
            Some(earlier) => earlier.micros = earlier.micros.saturating_add(micros),
            None => self.steps.push(StepTime {
                step: step.to_string(),
                micros,
            }),
        }
    }
}

static CLOCK: Mutex<Option<Clock>> = Mutex::new(None);

fn clock() -> std::sync::MutexGuard<'static, Option<Clock>> {
    // a step's time is only ever told, never relied on: a poisoned lock still counts
    CLOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts timing this process's run.
pub(crate) fn start() {
    *clock() = Some(Clock::new());
}

/// Ends `step` (see [`Clock::done`]); nothing where the clock was not started.
pub(crate) fn done(step: &str) {
    if let Some(clock) = clock().as_mut() {
        clock.done(step);
    }
}

/// The steps timed so far, in order; empty where nothing started the clock.
pub(crate) fn taken() -> Vec<StepTime> {
    clock()
        .as_ref()
        .map(|c| c.steps.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_add_up_in_order_each_named_once() {
        // a clock of the test's own: the process's is shared with every other test's runs
        let mut clock = Clock::new();
        clock.done("lock");
        std::thread::sleep(std::time::Duration::from_millis(2));
        clock.done("record read");
        clock.done("lock");
        let names: Vec<&str> = clock.steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(names, ["lock", "record read"]);
        assert!(clock.steps[1].micros >= 2000, "{:?}", clock.steps);
    }
}
