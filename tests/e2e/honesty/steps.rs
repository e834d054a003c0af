//! One step of the honesty test: an operator's command, or something that happens to a machine
//! behind the mesh's back. Each says what it did, and what the plan cannot know because of it.

use std::time::Duration;

use serde_json::Value;

use super::{Excused, World};
use crate::util::{NODES, on, ssh};

/// The modules an operator assigns and takes away (the provider moves in steps of its own).
const MODULES: [&str; 4] = ["alpha", "beta", "cons", "gamma"];

/// Takes one step of `kind`; returns what it did, in words.
pub fn take(w: &mut World<'_>, kind: &str, excused: &mut Excused) -> String {
    let node = w.rng.pick(&NODES);
    match kind {
        "assign" => {
            let module = w.rng.pick(&MODULES);
            assign(w, node, module)
        }
        "unassign" => {
            let module = w.rng.pick(&MODULES);
            if w.assigned.remove(&(node.into(), module.into())) {
                if module == "cons" {
                    w.pins.remove(node);
                }
                w.mesh.run(&["unassign", module, node]).ok();
            }
            format!("unassign {module} {node}")
        }
        "settings" => settings(w, node),
        "catalogue" => {
            w.alpha_version += 1;
            w.write_alpha();
            format!("catalogue: alpha version {}", w.alpha_version)
        }
        "provider" => move_provider(w, node),
        "pin" => pin(w),
        "edit" => edit(w, node, excused),
        "refusal" => {
            w.mesh
                .run(&["settings", "set", "alpha", "label=refuse", "--replace"])
                .ok();
            excused.refusal = true;
            // the refusal lasts this step; the operator then takes it back
            w.undo_after
                .push(["settings", "clear", "alpha"].map(String::from).to_vec());
            excused.nodes.extend(
                NODES
                    .iter()
                    .filter(|n| w.has(n, "alpha"))
                    .map(|n| n.to_string()),
            );
            "refusal: alpha's label set to what its validate refuses".into()
        }
        "rollout" => rollout(w, excused),
        "helper-kill" => helper_kill(w, node, excused),
        "record" => {
            if ssh(node, "test -e /var/lib/mesh/record.json").status != 0 {
                return format!("record: {node} has none to delete");
            }
            on(node, "rm -f /var/lib/mesh/record.json");
            let adopted = w.mesh.run(&["node", "adopt", node]);
            excused.nodes.insert(node.to_string());
            format!(
                "record: deleted on {node}, then `mesh node adopt {node}` (exit {})",
                adopted.status
            )
        }
        "operator-kill" => operator_kill(w, excused),
        other => panic!("no step kind {other}"),
    }
}

pub fn assign(w: &mut World<'_>, node: &str, module: &str) -> String {
    if w.has(node, module) {
        return format!("assign {module} {node}: already there");
    }
    if module == "cons" {
        let providers: Vec<String> = w.providers.iter().cloned().collect();
        let provider = providers[w.rng.below(providers.len())].clone();
        let pin = format!("x=prov@{provider}");
        w.mesh.run(&["assign", "cons", node, "--pin", &pin]).ok();
        w.pins.insert(node.into(), provider.clone());
        w.assigned.insert((node.into(), module.into()));
        return format!("assign cons {node} --pin {pin}");
    }
    w.mesh.run(&["assign", module, node]).ok();
    w.assigned.insert((node.into(), module.into()));
    format!("assign {module} {node}")
}

/// A setting of each cost, in a node's layer or the mesh's, set or cleared.
fn settings(w: &mut World<'_>, node: &str) -> String {
    let (module, setting) = match w.rng.below(4) {
        0 => ("alpha", "level"),
        1 => ("alpha", "label"),
        2 => ("alpha", "flavour"),
        _ => ("beta", "level"),
    };
    let on_node = w.rng.below(2) == 0;
    let mut args = vec!["settings"];
    let value;
    if w.rng.below(4) == 0 {
        args.extend(["clear", module]);
        value = "cleared".to_string();
    } else {
        value = match setting {
            "level" => format!("{setting}={}", w.rng.below(4)),
            _ => format!("{setting}={}", w.rng.pick(&["a", "b", "c"])),
        };
        args.extend(["set", module, &value, "--replace"]);
    }
    if on_node {
        args.extend(["--node", node]);
    }
    w.mesh.run(&args).ok();
    format!("settings {module} {value} (node layer of {node}: {on_node})")
}

/// The provider moves to another node; its consumers are pinned to it there.
fn move_provider(w: &mut World<'_>, to: &str) -> String {
    let Some(from) = w.providers.iter().find(|p| *p != to).cloned() else {
        return format!("provider: already only on {to}");
    };
    if !w.providers.contains(to) {
        w.mesh.run(&["assign", "prov", to]).ok();
        w.assigned.insert((to.into(), "prov".into()));
        w.providers.insert(to.into());
    }
    let pinned: Vec<String> = w
        .pins
        .iter()
        .filter(|(_, p)| **p == from)
        .map(|(c, _)| c.clone())
        .collect();
    for consumer in &pinned {
        let pin = format!("x=prov@{to}");
        w.mesh
            .run(&["assign", "cons", consumer, "--pin", &pin])
            .ok();
        w.pins.insert(consumer.clone(), to.into());
    }
    w.mesh.run(&["unassign", "prov", &from]).ok();
    w.assigned.remove(&(from.clone(), "prov".into()));
    w.providers.remove(&from);
    format!("provider: prov moved from {from} to {to}, consumers {pinned:?} pinned to it")
}

/// A consumer pinned to another provider (a second provider is assigned if there is one only).
fn pin(w: &mut World<'_>) -> String {
    let consumers: Vec<String> = w.pins.keys().cloned().collect();
    if consumers.is_empty() {
        let node = w.rng.pick(&NODES);
        return format!("pin: no consumer yet: {}", assign(w, node, "cons"));
    }
    let consumer = consumers[w.rng.below(consumers.len())].clone();
    let current = w.pins[&consumer].clone();
    let others: Vec<&str> = NODES.iter().copied().filter(|n| *n != current).collect();
    let to = w.rng.pick(&others).to_string();
    if !w.providers.contains(&to) {
        w.mesh.run(&["assign", "prov", &to]).ok();
        w.assigned.insert((to.clone(), "prov".into()));
        w.providers.insert(to.clone());
    }
    let pin = format!("x=prov@{to}");
    w.mesh
        .run(&["assign", "cons", &consumer, "--pin", &pin])
        .ok();
    w.pins.insert(consumer.clone(), to.clone());
    format!("pin: cons on {consumer} pinned to prov@{to} (was {current})")
}

/// A hand edit of one thing the mesh manages on `node` (or, if it has nothing, on a node that
/// has), of a kind drawn at random among those there.
fn edit(w: &mut World<'_>, node: &str, excused: &mut Excused) -> String {
    let managed = |n: &str| ["alpha", "beta", "cons"].iter().any(|m| w.has(n, m));
    let node = if managed(node) {
        node
    } else {
        NODES.iter().copied().find(|n| managed(n)).unwrap_or(node)
    };
    let mut kinds: Vec<(&str, &str, &str)> = Vec::new();
    if w.has(node, "alpha") {
        kinds.extend([
            (
                "file",
                "alpha:file:/etc/mesh-alpha.conf",
                "test -e /etc/mesh-alpha.conf && echo 'edited by hand' >>/etc/mesh-alpha.conf",
            ),
            (
                "unit file",
                "alpha:process:alpha.service",
                "f=/etc/systemd/system/alpha.service; test -e $f && echo '# edited by hand' >>$f \
                 && systemctl daemon-reload",
            ),
            (
                "bundle file",
                "alpha:process:alpha.service",
                "f=$(ls /var/lib/mesh/bundles/*/run.sh 2>/dev/null | grep alpha | head -1); \
                 test -n \"$f\" && echo '# edited by hand' >>\"$f\"",
            ),
            (
                "service state",
                "alpha:service:mesh-honest.service",
                "systemctl stop mesh-honest.service",
            ),
        ]);
    }
    if w.has(node, "beta") {
        kinds.push((
            "keys",
            "beta:keys:/etc/mesh-beta.json",
            "test -e /etc/mesh-beta.json && sed -i 's/\"level\": [0-9]*/\"level\": 99/' /etc/mesh-beta.json",
        ));
    }
    if w.has(node, "cons") {
        kinds.push((
            "file read by a process",
            "cons:file:/etc/mesh-cons.conf",
            "test -e /etc/mesh-cons.conf && echo 'x=elsewhere:1' >/etc/mesh-cons.conf",
        ));
    }
    if kinds.is_empty() {
        return format!("edit: nothing of the mesh's on {node}");
    }
    let (what, id, script) = kinds[w.rng.below(kinds.len())];
    let done = ssh(node, script).status == 0;
    if done {
        excused.edited.insert((node.into(), id.into()));
    }
    format!(
        "edit on {node}: {what} ({id}){}",
        if done { "" } else { ": not there yet" }
    )
}

/// A change to the module rolled out one machine at a time: on two machines at least, a new mark
/// (every wave passes) or, the first time and then at random, a health its probe fails (the
/// canary fails and the later waves are held). A failed probe is what no dry run can know, so
/// `check` and `plan` are not held to the resources it failed (and their units); the operator
/// takes the bad health back after the step.
fn rollout(w: &mut World<'_>, excused: &mut Excused) -> String {
    let mut added = Vec::new();
    while NODES.iter().filter(|n| w.has(n, "gamma")).count() < 2 {
        let node = w.rng.pick(&NODES);
        if !w.has(node, "gamma") {
            assign(w, node, "gamma");
            added.push(node);
        }
    }
    w.rollouts += 1;
    let bad = w.rollouts == 1 || w.rng.below(2) == 0;
    let value = if bad {
        "health=bad".to_string()
    } else {
        format!("mark={}", w.rng.pick(&["a", "b", "c", "d"]))
    };
    w.mesh
        .run(&["settings", "set", "gamma", &value, "--replace"])
        .ok();
    if bad {
        excused.refusal = true;
        excused.probe_fails = true;
        w.undo_after
            .push(["settings", "clear", "gamma"].map(String::from).to_vec());
    }
    format!("rollout: gamma {value} (assigned on {added:?} first)")
}

/// The helper dies on `node` right after one of its declared resources (the fault switch), in
/// a push that has a setting to carry.
fn helper_kill(w: &mut World<'_>, node: &str, excused: &mut Excused) -> String {
    let ids = w.declared.get(node).cloned().unwrap_or_default();
    if ids.is_empty() {
        return format!("helper-kill: nothing declared on {node}");
    }
    // a change with a cost when the node has one to carry (a new version of alpha's file)
    let change = if w.has(node, "alpha") {
        w.alpha_version += 1;
        w.write_alpha();
        format!("catalogue: alpha version {}", w.alpha_version)
    } else {
        settings(w, node)
    };
    // the helper dies after a resource this push changes, if it changes any: a change whose
    // units are not paid yet is what a kill can lose
    let changing: Vec<String> = w
        .mesh
        .run(&["check", node, "--json"])
        .json()
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| {
            r["report"]["resources"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|o| o["state"] == "created" || o["state"] == "changed")
        .filter_map(|o| o["id"].as_str().map(String::from))
        .collect();
    let ids = if changing.is_empty() { ids } else { changing };
    let id = ids[w.rng.below(ids.len())].clone();
    // a fault before the units are paid (packages, directories, files, keys): what the plan
    // says they are owed is still owed afterwards
    if ["package", "directory", "file", "keys"]
        .iter()
        .any(|kind| id.contains(&format!(":{kind}:")))
    {
        let plan = super::compare::planned(&w.mesh.run(&["plan", node, "--json"]).json());
        w.owed_after_kill = plan
            .acts
            .into_iter()
            .filter(|a| a.1.starts_with("unit ") && (a.2 == "reload" || a.2 == "restart"))
            .collect();
    }
    on(node, &format!("printf '%s' '{id}' >/var/lib/mesh/fault"));
    let killed = w.mesh.run(&["push", node, "--json"]);
    on(node, "rm -f /var/lib/mesh/fault");
    excused.nodes.insert(node.to_string());
    format!(
        "helper-kill: {change}; the helper on {node} dies after {id} (that push exited {})",
        killed.status
    )
}

/// `mesh push --all` killed (SIGKILL) after a random delay, in a push that has a setting to carry.
fn operator_kill(w: &mut World<'_>, excused: &mut Excused) -> String {
    let node = w.rng.pick(&NODES);
    let change = settings(w, node);
    let delay = Duration::from_millis(w.rng.below(900) as u64);
    let mut child = w
        .mesh
        .command(&["push", "--all", "--json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("mesh push starts");
    std::thread::sleep(delay);
    let finished = child.try_wait().ok().flatten().is_some();
    let _ = child.kill();
    let _ = child.wait();
    // the helpers it started finish on their own: wait for them before asking
    for n in NODES {
        on(
            n,
            "for i in $(seq 100); do pgrep -f '^/var/lib/mesh/bin/mesh-host' >/dev/null || break; \
             sleep 0.2; done",
        );
    }
    excused.nodes.extend(NODES.iter().map(|n| n.to_string()));
    format!(
        "operator-kill: {change}; `mesh push --all` killed after {} ms{}",
        delay.as_millis(),
        if finished { " (it had finished)" } else { "" }
    )
}

/// Notes what each node declares, from a push's answer, for the fault switch to name.
pub fn remember(w: &mut World<'_>, pushed: &Value) {
    for r in pushed.as_array().into_iter().flatten() {
        let node = r["node"].as_str().unwrap_or("").to_string();
        let ids = r["report"]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|o| o["state"] != "removed")
            .filter_map(|o| o["id"].as_str().map(String::from))
            .collect();
        w.declared.insert(node, ids);
    }
}
