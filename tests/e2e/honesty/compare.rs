//! What `plan`, `check` and `push` say, each in one comparable form: a set of acts, one per
//! resource that moves (its state, and for a removal what undoing it did) and one per unit action
//! (`reload`, `restart`, `start`, `stop`), each keyed by node.

use std::collections::BTreeSet;

use serde_json::Value;

/// One act on one machine: `(node, what, how)`, where `what` is a resource id or `unit NAME`.
pub type Act = (String, String, String);

/// A plan's act that it states as a condition it cannot know offline: any of `allowed` (or
/// nothing) is what it promised.
pub struct Condition {
    pub node: String,
    pub unit: String,
    pub allowed: &'static [&'static str],
}

/// What a helper's report says (a check's or a push's), exactly as it says it.
pub struct Said {
    pub acts: BTreeSet<Act>,
    /// The same, as a plan can predict them: a unit paid while it was not running did nothing.
    pub for_plan: BTreeSet<Act>,
}

/// What a plan says.
pub struct Planned {
    pub acts: BTreeSet<Act>,
    pub conditions: Vec<Condition>,
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

fn unit_act(node: &str, unit: &str, how: &str) -> Act {
    (node.to_string(), format!("unit {unit}"), how.to_string())
}

/// The unit actions a service's or process's outcome says it took (past or conditional: the
/// stems are the same).
fn verbs(detail: &str) -> Vec<&'static str> {
    let rest = detail.replace("restart", "");
    let mut out = Vec::new();
    if detail.contains("restart") {
        out.push("restart");
    }
    if rest.contains("start") {
        out.push("start");
    }
    if detail.contains("stop") {
        out.push("stop");
    }
    if detail.contains("reload") {
        out.push("reload");
    }
    out
}

/// The unit of a service or process resource id (`alpha:process:alpha.service`).
fn unit_of(id: &str) -> Option<&str> {
    let (_, rest) = id.split_once(':')?;
    let (kind, unit) = rest.split_once(':')?;
    matches!(kind, "service" | "process").then_some(unit)
}

/// Reads a `check --json` or `push --json` answer.
pub fn said(results: &Value) -> Said {
    let mut acts = BTreeSet::new();
    let mut for_plan = BTreeSet::new();
    for r in results.as_array().into_iter().flatten() {
        let node = text(&r["node"]);
        // held because an earlier failure stopped the rollout: sent nothing, did nothing, and
        // its plan still shows the change pending
        if r["kind"] == "rollout-stopped" {
            continue;
        }
        if r["report"].is_null() {
            let act = (
                node.clone(),
                "node".to_string(),
                format!("failed ({}): {}", text(&r["kind"]), text(&r["reason"])),
            );
            acts.insert(act.clone());
            for_plan.insert(act);
            continue;
        }
        for o in r["report"]["resources"].as_array().into_iter().flatten() {
            let state = text(&o["state"]);
            if state == "unchanged" {
                continue;
            }
            let id = text(&o["id"]);
            let how = if state == "removed" {
                format!("removed {}", o["undo"])
            } else {
                state.clone()
            };
            acts.insert((node.clone(), id.clone(), how.clone()));
            for_plan.insert((node.clone(), id.clone(), how));
            let mut units: Vec<(String, &str)> = Vec::new();
            if state == "removed" {
                for unit in o["undo"]["stops"].as_array().into_iter().flatten() {
                    let unit = text(unit);
                    if !unit.starts_with("container ") {
                        units.push((unit, "stop"));
                    }
                }
            } else if let Some(unit) = unit_of(&id) {
                for verb in verbs(&text(&o["detail"])) {
                    units.push((unit.to_string(), verb));
                }
            }
            for (unit, verb) in units {
                acts.insert(unit_act(&node, &unit, verb));
                for_plan.insert(unit_act(&node, &unit, verb));
            }
        }
        for u in r["report"]["units"].as_array().into_iter().flatten() {
            let act = unit_act(&node, &text(&u["unit"]), &text(&u["action"]));
            acts.insert(act.clone());
            if !text(&u["done"]).starts_with("not running") {
                for_plan.insert(act);
            }
        }
    }
    Said { acts, for_plan }
}

/// Reads a `plan --json` answer.
pub fn planned(plans: &Value) -> Planned {
    let mut acts = BTreeSet::new();
    let mut conditions = Vec::new();
    for p in plans.as_array().into_iter().flatten() {
        let node = text(&p["node"]);
        for c in p["changes"].as_array().into_iter().flatten() {
            // only what it is made from moved: nothing on the machine does
            if c["fields"] == serde_json::json!(["source"]) {
                continue;
            }
            let how = match c["action"].as_str() {
                Some("added") => "created".to_string(),
                Some("removed") => format!("removed {}", c["undo"]),
                other => other.unwrap_or("").to_string(),
            };
            acts.insert((node.clone(), text(&c["id"]), how));
        }
        for u in p["units"].as_array().into_iter().flatten() {
            let unit = text(&u["unit"]);
            match u["verb"].as_str().unwrap_or("") {
                "start, if it is not running," => conditions.push(Condition {
                    node: node.clone(),
                    unit,
                    allowed: &["start"],
                }),
                "start (or restart, if it runs)" => conditions.push(Condition {
                    node: node.clone(),
                    unit,
                    allowed: &["start", "restart"],
                }),
                verb => {
                    acts.insert(unit_act(&node, &unit, verb));
                }
            }
        }
    }
    Planned { acts, conditions }
}

/// A removal's undo as a plan promised it (`deletes_if_empty` a condition) against what the push
/// did (`deletes` or `keeps`, every condition settled): whether the promise was kept.
fn undo_kept(promised: &Value, done: &Value) -> bool {
    let list = |v: &Value, field: &str| -> BTreeSet<String> {
        v[field]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect()
    };
    let conditional = list(promised, "deletes_if_empty");
    let deleted = list(done, "deletes");
    let mut expected = list(promised, "deletes");
    expected.extend(conditional.intersection(&deleted).cloned());
    list(done, "keeps").is_subset(&conditional)
        && expected == deleted
        && ["stops", "restores", "reloads", "restarts"]
            .iter()
            .all(|f| list(promised, f) == list(done, f))
}

/// What differs between a plan and what the push did, leaving out what `excused` says the plan
/// could not know. Each line names the side that said it.
pub fn plan_differences(
    plan: &Planned,
    push: &Said,
    excused: impl Fn(&Act) -> bool,
) -> Vec<String> {
    let mut done: BTreeSet<Act> = push
        .for_plan
        .iter()
        .filter(|a| !excused(a))
        .cloned()
        .collect();
    let mut promised: BTreeSet<Act> = plan.acts.iter().filter(|a| !excused(a)).cloned().collect();
    for c in &plan.conditions {
        for verb in c.allowed {
            done.remove(&unit_act(&c.node, &c.unit, verb));
        }
    }
    // a removal the plan stated with its condition: kept if the push settled it as promised
    let removal = |a: &Act| a.2.starts_with("removed ");
    let undo = |a: &Act| -> Value {
        serde_json::from_str(a.2.trim_start_matches("removed ")).unwrap_or(Value::Null)
    };
    // a resource newly declared may be on the machine as declared already (a service running, a
    // directory kept): the plan says it is added, the push finds nothing to do
    for p in promised.clone().iter().filter(|a| a.2 == "created") {
        let moved = done
            .iter()
            .find(|d| d.0 == p.0 && d.1 == p.1 && (d.2 == "created" || d.2 == "changed"))
            .cloned();
        if let Some(d) = &moved {
            done.remove(d);
        }
        promised.remove(p);
    }
    for p in promised.clone().iter().filter(|a| removal(a)) {
        let matching = done
            .iter()
            .find(|d| removal(d) && d.0 == p.0 && d.1 == p.1)
            .cloned();
        if let Some(d) = matching
            && (undo(p).is_null() || undo_kept(&undo(p), &undo(&d)))
        {
            promised.remove(p);
            done.remove(&d);
        }
    }
    let mut out: Vec<String> = promised
        .difference(&done)
        .map(|a| format!("plan said, push did not: {a:?}"))
        .collect();
    out.extend(
        done.difference(&promised)
            .map(|a| format!("push did, plan did not say: {a:?}")),
    );
    out
}

/// What differs between a check and the push that followed it: nothing may, but for what
/// `excused` says a dry run cannot know (a refusal of the check a file is written with).
pub fn check_differences(check: &Said, push: &Said, excused: impl Fn(&Act) -> bool) -> Vec<String> {
    let mut out: Vec<String> = check
        .acts
        .difference(&push.acts)
        .filter(|a| !excused(a))
        .map(|a| format!("check said, push did not: {a:?}"))
        .collect();
    out.extend(
        push.acts
            .difference(&check.acts)
            .filter(|a| !excused(a))
            .map(|a| format!("push did, check did not say: {a:?}")),
    );
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_directory_promised_if_empty_is_kept_by_either_outcome() {
        let promised = json!({"deletes_if_empty": ["/d"]});
        assert!(undo_kept(&promised, &json!({"deletes": ["/d"]})));
        assert!(undo_kept(&promised, &json!({"keeps": ["/d"]})));
        assert!(!undo_kept(
            &json!({"deletes": ["/d"]}),
            &json!({"keeps": ["/d"]})
        ));
        assert!(!undo_kept(
            &json!({"deletes": ["/f"]}),
            &json!({"deletes": ["/f"], "reloads": ["u.service"]})
        ));
    }

    #[test]
    fn unit_verbs_are_read_from_done_and_conditional_words_alike() {
        assert_eq!(verbs("rewrote and restarted a.service"), vec!["restart"]);
        assert_eq!(
            verbs("would rewrite and restart a.service"),
            vec!["restart"]
        );
        assert_eq!(
            verbs("created, enabled and started a.service"),
            vec!["start"]
        );
        assert_eq!(verbs("would stop a.service"), vec!["stop"]);
    }
}
