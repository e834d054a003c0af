//! A plan made from what the machine has, not only from what it confirmed. `mesh rollback` asks
//! each machine first (a dry run of the generation it sends): a resource changed on the machine
//! by hand since its last push is then in the plan, a change the machine already has is not, and
//! a file's diff is from the machine's bytes to what the push writes.

use super::{Action, Change, Plan, UnitChange};
use crate::wire::{Declaration, FileSpec, Outcome, Report, State};

/// `p`, planned from `next` against what the machine confirmed (`confirmed`), made what the
/// machine's own dry run of `next` (`checked`) found: what it has as `next` says is no change;
/// what differs there that the inventory did not know of is a change marked [`Change::drift`];
/// every change the machine measured carries its files as found ([`Change::found`]). Units and
/// confirmations follow: those of the changes dropped go, those the helper said the drift costs
/// come.
pub fn against_machine(
    mut p: Plan,
    next: &Declaration,
    confirmed: Option<&Declaration>,
    checked: &Report,
) -> Plan {
    let outcome = |id: &str| checked.resources.iter().find(|o| o.id == id);
    // a resource the machine already has as `next` says is not changed by the push
    p.changes
        .retain(|c| outcome(&c.id).is_none_or(|o| o.state != State::Unchanged));
    for c in &mut p.changes {
        if let Some(o) = outcome(&c.id) {
            c.found.clone_from(&o.seen);
            // a hand edit under a change the plan makes anyway is still said
            if !c.drift && found_differs(c) {
                c.drift = true;
                c.fields.push("differs on the machine".into());
            }
        }
    }
    let mut drifted = Vec::new();
    for o in &checked.resources {
        if p.changes.iter().any(|c| c.id == o.id) {
            continue;
        }
        if let Some(change) = drift(o, next, confirmed) {
            drifted.push(change.id.clone());
            p.changes.push(change);
        }
    }
    // a unit's cause is a resource's id, or its id followed by what moved in it
    let kept = |because: &str| {
        p.changes.iter().any(|c| {
            because
                .strip_prefix(c.id.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', ' ']))
        })
    };
    p.units.retain(|u| u.because.iter().any(|b| kept(b)));
    for u in &checked.units {
        let because: Vec<String> = u
            .because
            .iter()
            .filter(|b| drifted.contains(b))
            .cloned()
            .collect();
        if because.is_empty() || p.units.iter().any(|have| have.unit == u.unit) {
            continue;
        }
        p.units.push(UnitChange {
            unit: u.unit.clone(),
            action: u.action,
            because,
            stops: false,
            verb: u.action.as_str(),
        });
    }
    let changed: Vec<&str> = p.changes.iter().map(|c| c.id.as_str()).collect();
    p.needs_confirmation
        .retain(|id| changed.contains(&id.as_str()));
    for c in p.changes.iter().filter(|c| c.drift) {
        if c.new.as_ref().or(c.old.as_ref()).is_some_and(|r| r.confirm) {
            p.needs_confirmation.push(c.id.clone());
        }
    }
    p
}

/// Whether the machine's bytes of a changed file are not what the inventory confirmed it has
/// (an edit by hand since), where the machine sent them (a file of text, holding no secret).
fn found_differs(c: &Change) -> bool {
    let Some(old) = c.old.as_ref().and_then(|r| r.spec.get::<FileSpec>()) else {
        return false;
    };
    !old.secret
        && c.found
            .iter()
            .any(|s| s.path == old.path && s.found.as_deref() != Some(old.content.as_str()))
}

/// What the machine's outcome `o` says differs there though the plan saw no change: made,
/// changed or given back again by the push.
fn drift(o: &Outcome, next: &Declaration, confirmed: Option<&Declaration>) -> Option<Change> {
    let action = match o.state {
        State::Created => Action::Added,
        State::Changed => Action::Changed,
        State::Removed => Action::Removed,
        State::Unchanged | State::Failed => return None,
    };
    let of = |d: Option<&Declaration>| {
        d.and_then(|d| d.resources.iter().find(|r| r.id == o.id))
            .cloned()
    };
    Some(Change {
        id: o.id.clone(),
        action,
        fields: vec!["differs on the machine".into()],
        old: of(confirmed),
        new: of(Some(next)),
        undo: (action == Action::Removed).then(|| o.undo.clone().unwrap_or_default()),
        settings: Vec::new(),
        drift: true,
        found: o.seen.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Cost, Costing, FileSpec, Mode, Resource, Seen, Spec, UnitOutcome};

    fn file(path: &str, content: &str) -> Resource {
        Resource {
            id: format!("m:file:{path}"),
            instance: "m".into(),
            module: "m@1".into(),
            confirm: false,
            spec: Spec::File(FileSpec {
                path: path.into(),
                owner: "root".into(),
                group: "root".into(),
                mode: 0o644,
                content: content.into(),
                validate: vec![],
                secret: false,
                sealed: None,
                effective: None,
                costing: Costing {
                    source: "s".into(),
                    settings: Default::default(),
                    cost: Cost::Restart,
                    units: vec![],
                },
            }),
        }
    }

    fn declaration(resources: Vec<Resource>) -> Declaration {
        Declaration {
            version: crate::wire::VERSION,
            node: "n".into(),
            resources,
            expects_record: true,
            confirm_within: None,
            confirm_removals: vec![],
            keep: vec![],
            planned: None,
        }
    }

    fn outcome(id: &str, state: State, seen: Vec<Seen>) -> Outcome {
        Outcome {
            id: id.into(),
            state,
            detail: String::new(),
            undo: None,
            seen,
            micros: 0,
        }
    }

    fn checked(resources: Vec<Outcome>, units: Vec<UnitOutcome>) -> Report {
        Report {
            version: 1,
            mode: Mode::DryRun,
            hostname: "n".into(),
            host_keys: vec![],
            new_machine: false,
            resources,
            units,
            adoption: None,
            awaiting: None,
            reverted: vec![],
            pending: None,
            generation: None,
            facts: None,
            steps: Vec::new(),
            generation_not_kept: None,
        }
    }

    #[test]
    fn what_the_machine_has_makes_the_plan_drift_included_and_its_bytes_in_the_diff() {
        // generation one has a=1 and b=1; the machine confirmed a=3, b=1; b was edited by hand
        let next = declaration(vec![file("/a", "1\n"), file("/b", "1\n")]);
        let last = declaration(vec![file("/a", "3\n"), file("/b", "1\n")]);
        let from_confirmed = super::super::plan(&next, Some(&last), None);
        assert_eq!(from_confirmed.changes.len(), 1);
        let seen = Seen {
            path: "/b".into(),
            found: Some("by hand\n".into()),
            declared: "1\n".into(),
        };
        let report = checked(
            vec![
                outcome("m:file:/a", State::Changed, vec![]),
                outcome("m:file:/b", State::Changed, vec![seen.clone()]),
            ],
            vec![UnitOutcome {
                unit: "b.service".into(),
                action: Cost::Restart,
                because: vec!["m:file:/b".into()],
                done: None,
                error: None,
            }],
        );
        let p = against_machine(from_confirmed.clone(), &next, Some(&last), &report);
        let ids: Vec<(&str, bool)> = p.changes.iter().map(|c| (c.id.as_str(), c.drift)).collect();
        assert_eq!(ids, [("m:file:/a", false), ("m:file:/b", true)]);
        assert_eq!(p.changes[1].found, [seen]);
        assert_eq!(p.changes[1].fields, ["differs on the machine"]);
        let units: Vec<(&str, &str)> = p.units.iter().map(|u| (u.unit.as_str(), u.verb)).collect();
        assert_eq!(units, [("b.service", "restart")]);
        // a change the machine has already (put back by hand) is none
        let report = checked(
            vec![
                outcome("m:file:/a", State::Unchanged, vec![]),
                outcome("m:file:/b", State::Unchanged, vec![]),
            ],
            vec![],
        );
        let p = against_machine(from_confirmed, &next, Some(&last), &report);
        assert!(p.changes.is_empty(), "{:?}", p.changes);
    }

    #[test]
    fn a_hand_edit_under_a_change_the_plan_makes_anyway_is_said_as_drift() {
        // found by an attacker: the generation differs from what was confirmed, and the machine
        // was edited by hand too; the plan named only the change, never the edit
        let next = declaration(vec![file("/a", "1\n")]);
        let last = declaration(vec![file("/a", "3\n")]);
        let from_confirmed = super::super::plan(&next, Some(&last), None);
        let seen = |found: &str| Seen {
            path: "/a".into(),
            found: Some(found.into()),
            declared: "1\n".into(),
        };
        let edited = checked(
            vec![outcome(
                "m:file:/a",
                State::Changed,
                vec![seen("by hand\n")],
            )],
            vec![],
        );
        let p = against_machine(from_confirmed.clone(), &next, Some(&last), &edited);
        assert!(p.changes[0].drift, "{:?}", p.changes[0]);
        assert!(
            p.changes[0]
                .fields
                .iter()
                .any(|f| f == "differs on the machine"),
            "{:?}",
            p.changes[0].fields
        );
        // the machine has what was confirmed: the change alone, no drift
        let as_confirmed = checked(
            vec![outcome("m:file:/a", State::Changed, vec![seen("3\n")])],
            vec![],
        );
        let p = against_machine(from_confirmed, &next, Some(&last), &as_confirmed);
        assert!(!p.changes[0].drift, "{:?}", p.changes[0]);
    }
}
