//! How plans and push results read: plain, greppable lines (coloured diffs on a terminal), and
//! the same as JSON.

use std::fmt::Write as _;

use crate::plan::{Action, Plan, content, visible};
use crate::push::{self, NodeResult};
use crate::wire::{ContainerSpec, FileSpec, Mode, PackageSpec, State};

/// One node's plan as text; an unchanged node is one line saying so.
pub(crate) fn plan(p: &Plan, diff: bool, color: bool) -> String {
    let mut out = headline(p);
    if p.changes.is_empty() {
        let _ = writeln!(
            out,
            "{}: no changes{}",
            p.node,
            if p.first_send {
                " (nothing sent yet, nothing to send)"
            } else {
                ""
            }
        );
        return out;
    }
    out.push_str(&counts(p));
    for c in &p.changes {
        let _ = writeln!(out, "{}", visible(&change_line(p, c)));
        // a check is a command the helper runs as root: a new or changed one is shown, always
        if let Some(f) = c.new.as_ref().and_then(|r| r.spec.get::<FileSpec>())
            && !f.validate.is_empty()
            && (c.action == Action::Added || c.fields.iter().any(|x| x == "validate"))
        {
            let line = format!("      checked as root with: {}", quoted(&f.validate));
            let _ = writeln!(out, "{}", visible(&line));
        }
        if diff && let Some(text) = change_diff(c, color) {
            if p.first_send && c.action == Action::Added {
                let _ = writeln!(
                    out,
                    "      (against nothing: what the machine has is not known until asked)"
                );
            }
            for line in text.lines() {
                let _ = writeln!(out, "      {line}");
            }
        }
    }
    for u in &p.units {
        let line = format!(
            "  ! {} will {} (because of {})",
            u.unit,
            u.verb,
            u.because.join(", ")
        );
        let _ = writeln!(out, "{}", visible(&line));
    }
    if !p.needs_confirmation.is_empty() {
        let line = format!(
            "  needs confirmation: {} (confirmed over a new connection after the push, else the \
             machine reverts it)",
            p.needs_confirmation.join(", ")
        );
        let _ = writeln!(out, "{}", visible(&line));
    }
    out
}

/// A change's line of a plan: its sign and id, the fields (and settings) that move, and what
/// it will do.
fn change_line(p: &Plan, c: &crate::plan::Change) -> String {
    let fields = match (c.fields.is_empty(), c.settings.is_empty()) {
        // a package added absent or at a version says so: `+ m:package:telnet (absent)`
        (true, _) => match c.new.as_ref().and_then(|r| r.spec.get::<PackageSpec>()) {
            Some(p) if c.action == Action::Added && p.wanted() != "present" => {
                format!(" ({})", p.wanted())
            }
            _ => String::new(),
        },
        (false, true) => format!(" ({})", c.fields.join(", ")),
        (false, false) => format!(
            " ({}; settings moved: {})",
            c.fields.join(", "),
            c.settings.join(", ")
        ),
    };
    let what = match c.action {
        Action::Removed => removal(c),
        Action::Changed
            if c.new
                .as_ref()
                .is_some_and(|r| r.spec.get::<ContainerSpec>().is_some()) =>
        {
            " — the container will be recreated".to_string()
        }
        // never asked: the machine may already have it, and the push then takes it over
        Action::Added if p.first_send => " — add, or take over what the machine has".into(),
        _ => String::new(),
    };
    format!("  {} {}{fields}{what}", c.action.sign(), c.id)
}

/// The plan's summary line: how many of each, and what a first push does not know yet.
fn counts(p: &Plan) -> String {
    let count = |a: Action| p.changes.iter().filter(|c| c.action == a).count();
    let unknown = if p.first_send {
        format!(
            " (first push to this node: the machine was never asked what it has, so each + may \
             add or take over what is there; `mesh check {}` asks it)",
            p.node
        )
    } else {
        String::new()
    };
    format!(
        "{}: {} to add, {} to change, {} to remove{unknown}\n",
        p.node,
        count(Action::Added),
        count(Action::Changed),
        count(Action::Removed),
    )
}

/// What a plan is made against, when that is not simply what the machine last confirmed.
fn headline(p: &Plan) -> String {
    let mut out = String::new();
    if let Some(id) = &p.pending_confirmation {
        let _ = writeln!(
            out,
            "{}: pending confirmation: change {id} awaits confirmation on the machine (the push \
             that made it was cut short); it stays only if confirmed in time, else the machine \
             puts back what it last confirmed. Planned against that:",
            p.node
        );
    } else if p.running {
        let _ = writeln!(
            out,
            "{}: a push or rollback of it is running now in another command (it holds the \
             inventory's push lock), and records what it makes when it ends. Planned against \
             what it last confirmed:",
            p.node
        );
    } else if p.unconfirmed {
        let _ = writeln!(
            out,
            "{}: unconfirmed: the last push was interrupted; the next push or check asks the \
             machine. Planned against what it last confirmed:",
            p.node
        );
    }
    if p.rekeyed {
        let _ = writeln!(
            out,
            "{}: its pinned host key is not one the machine had when its helper last answered: \
             another machine may be at its address (rebuilt); the next check or push asks it. \
             Planned against what it last confirmed:",
            p.node
        );
    }
    if p.new_machine {
        let _ = writeln!(
            out,
            "{}: new: `mesh check` found no record and no signs of the mesh on the machine; a \
             push applies everything:",
            p.node
        );
    }
    for m in &p.facts_moved {
        let line = format!(
            "{}: fact {} moved since the last push: {} -> {} (read by {})",
            p.node,
            m.fact,
            m.was,
            m.now,
            m.read_by.join(", ")
        );
        let _ = writeln!(out, "{}", visible(&line));
    }
    out
}

/// A change's content as a unified diff, for what is added or changed: from the machine's bytes
/// when the machine was asked (a rollback), else from what it confirmed.
pub(crate) fn change_diff(c: &crate::plan::Change, color: bool) -> Option<String> {
    if c.action == Action::Removed {
        return None;
    }
    if !c.found.is_empty() {
        let each = c.found.iter().map(|s| {
            let found = s.found.as_deref().unwrap_or_default();
            crate::plan::diff::render(&s.path, found, &s.declared, color)
        });
        return Some(each.collect());
    }
    // drift the machine did not show (a secret, not text, too long): no diff to make
    if c.drift {
        return None;
    }
    let old = c.old.as_ref().map(|r| content(&r.spec)).unwrap_or_default();
    let new = c.new.as_ref().map(|r| content(&r.spec)).unwrap_or_default();
    let path = c.new.as_ref().or(c.old.as_ref()).map(|r| r.spec.target())?;
    Some(crate::plan::diff::render(path, &old, &new, color))
}

/// A node that cannot be planned, in a plan of others: it fails alone, with every problem.
pub(crate) fn refused(node: &str, problems: &[crate::resolve::Problem]) -> String {
    let mut out = format!(
        "{}\n",
        visible(&format!(
            "{node}: FAILED (refused): nothing will be sent to it until this is fixed:"
        ))
    );
    for p in problems {
        let _ = writeln!(out, "  - {}", visible(&p.reason));
    }
    out
}

/// An argv as a person would type it: each word quoted when it holds anything but plain letters.
fn quoted(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a removal will do: exactly, when the machine's helper has said it; else what the kind
/// does in general.
fn removal(c: &crate::plan::Change) -> String {
    if let Some(undo) = &c.undo {
        let mut said = crate::plan::removal::words(undo);
        if said.is_empty() {
            said.push("leaves the machine as it is".into());
        }
        return format!(" — {}", said.join("; "));
    }
    match &c.old {
        Some(old) => format!(" — {}", old.spec.removal()),
        None => String::new(),
    }
}

/// One node's result as text: a line, then each resource and unit that moved; with `diff`
/// (`Some(color)`), each file a dry run found different as a unified diff from what the machine
/// has to what a push would write.
pub(crate) fn node(r: &NodeResult, mode: Mode, diff: Option<bool>) -> String {
    let mut out = String::new();
    let answer = match &r.result {
        Err(e) => {
            let line = format!("{}: FAILED ({}): {e}", r.node, e.kind());
            let _ = writeln!(out, "{}", visible(&line));
            return out;
        }
        Ok(answer) => answer,
    };
    let report = &answer.report;
    out.push_str(&verdict(&r.node, answer, mode));
    if let Some(confirmation) = &answer.confirmation {
        let line = format!("  {}", confirmation.said());
        let _ = writeln!(out, "{}", visible(&line));
    }
    if let Some(not_kept) = &report.generation_not_kept {
        let line = format!(
            "  WARNING: {not_kept}; the change is applied, but the machine cannot roll back to \
             it (`mesh-host rollback`): make room in /var/lib/mesh/generations"
        );
        let _ = writeln!(out, "{}", visible(&line));
    }
    if let Some(refused) = &answer.facts_refused {
        let line = format!(
            "  facts refused: {refused}; the facts known before are kept, and nothing is \
             rendered from these (look at what the machine says of itself: /etc/os-release, \
             its hostname, its interfaces)"
        );
        let _ = writeln!(out, "{}", visible(&line));
    }
    if let Some(id) = &report.pending {
        let line = format!(
            "  pending confirmation: change {id} awaits confirmation on the machine; what it has \
             now is not taken as confirmed until it is confirmed or reverted"
        );
        let _ = writeln!(out, "{}", visible(&line));
    }
    for r in &report.reverted {
        let mut line = format!(
            "  reverted on the machine earlier (change {}, not confirmed in time): {}",
            r.id,
            r.restored.join("; ")
        );
        if !r.failed.is_empty() {
            line.push_str(&format!("; NOT put back: {}", r.failed.join("; ")));
        }
        let _ = writeln!(out, "{}", visible(&line));
    }
    for o in report
        .resources
        .iter()
        .filter(|o| o.state != State::Unchanged)
    {
        let line = format!("  {} {}: {}", o.state.as_str(), o.id, o.detail);
        let _ = writeln!(out, "{}", visible(&line));
        if let Some(color) = diff {
            out.push_str(&seen(o, color));
        }
    }
    for u in &report.units {
        let done = match (&u.error, mode) {
            (Some(e), _) => format!("FAILED, still owed: {e}"),
            (None, Mode::DryRun) => format!("would {}", u.action.as_str()),
            (None, Mode::Apply | Mode::Adopt) => u
                .done
                .clone()
                .unwrap_or_else(|| format!("{} done", u.action.as_str())),
        };
        let line = format!(
            "  unit {}: {done} (because of {})",
            u.unit,
            u.because.join(", ")
        );
        let _ = writeln!(out, "{}", visible(&line));
    }
    out
}

/// A node's first line: how it went, and how many resources went which way.
fn verdict(node: &str, answer: &push::Answer, mode: Mode) -> String {
    let report = &answer.report;
    let n = |s: State| report.resources.iter().filter(|o| o.state == s).count();
    let verdict = if answer.reverted() {
        "FAILED (reverted)"
    } else if answer.unknown() {
        "FAILED (unknown)"
    } else if report.failed() {
        "FAILED (resources)"
    } else if mode == Mode::DryRun {
        "checked"
    } else {
        "applied"
    };
    // a change awaiting confirmation on the machine is counted: the node differs from what is
    // confirmed though no resource of this run changes
    let pending = if report.pending.is_some() {
        ", 1 pending confirmation"
    } else {
        ""
    };
    format!(
        "{node}: {verdict}: {} created, {} changed, {} unchanged, {} removed, {} failed{pending}{}\n",
        n(State::Created),
        n(State::Changed),
        n(State::Unchanged),
        n(State::Removed),
        n(State::Failed),
        if answer.uploaded {
            " (helper uploaded)"
        } else {
            ""
        }
    )
}

/// A count and its noun, `1 node` or `2 nodes`: every count the command line prints with a noun
/// goes through here, so none says `1 nodes`. The nouns it is given are regular.
pub(crate) fn counted(n: usize, one: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// The line that ends a push or check: how many nodes went which way.
pub(crate) fn summary(results: &[NodeResult], mode: Mode) -> String {
    let failed = results
        .iter()
        .filter(|r| r.result.as_ref().map_or(true, push::Answer::failed))
        .count();
    format!(
        "{}: {} {}, {failed} failed\n",
        counted(results.len(), "node"),
        results.len() - failed,
        if mode == Mode::DryRun {
            "checked"
        } else {
            "applied"
        }
    )
}

/// The diffs of the files the helper found different, indented under their resource. A missing
/// file reads as empty.
fn seen(o: &crate::wire::Outcome, color: bool) -> String {
    let mut out = String::new();
    for s in &o.seen {
        let found = s.found.as_deref().unwrap_or_default();
        if s.found.is_none() {
            let _ = writeln!(out, "      {} is missing on the machine", visible(&s.path));
        }
        for line in crate::plan::diff::render(&s.path, found, &s.declared, color).lines() {
            let _ = writeln!(out, "      {line}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1, "node"), "1 node");
        assert_eq!(counted(0, "node"), "0 nodes");
        assert_eq!(counted(2, "resource"), "2 resources");
    }

    #[test]
    fn the_summary_of_one_node_says_one_node() {
        let failed = |node: &str| NodeResult {
            node: node.into(),
            result: Err(push::PushError::Platform {
                node: node.into(),
                machine: "sparc".into(),
            }),
        };
        assert_eq!(
            summary(&[failed("a")], Mode::Apply),
            "1 node: 0 applied, 1 failed\n"
        );
        assert_eq!(
            summary(&[failed("a"), failed("b")], Mode::DryRun),
            "2 nodes: 0 checked, 2 failed\n"
        );
    }
}
