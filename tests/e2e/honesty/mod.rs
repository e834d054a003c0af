//! The plan never lies: a randomized sequence of operator steps and of things
//! that happen to machines behind the mesh's back, against lab machines. After each step `plan`
//! and `check` are compared with what the push then does: every resource's action (and, for a
//! removal, what undoing it did) and every unit action (reload, restart, start, stop).
//!
//! `check` asks the machines, so it must equal the push exactly at every step. `plan` reads only
//! the inventory, so it is excused where the machine changed behind its back in that step: the
//! resources edited by hand (and the units on that node), and whole nodes for a kill, a refusal
//! or a deleted record. Every difference is printed with the seed and the step; the test fails if
//! there is any, after the summary line `honesty: seed S, N steps, D differences`.
//!
//! Step kinds (`MESH_HONESTY_KINDS`, comma-separated, default all): `assign`, `unassign`,
//! `settings`, `catalogue`, `provider` (a provider moved to another node), `pin`, `edit` (a hand
//! edit of a file, keys, a unit file, a bundle file or a service's state, which `check` must
//! see), `refusal` (a setting `validate` refuses), `helper-kill` (the fault switch; a reload or
//! restart the plan named before it must be paid by the next push), `record` (the helper's
//! record deleted, then `mesh node adopt`), `operator-kill` (the `mesh push` process killed after
//! a random delay), `rollout` (a module rolled out one machine at a time changes; at random its
//! readiness probe fails).
//!
//! A rollout is part of the model: a node that fails in wave W holds every node of a later wave
//! (`--max-failed 0`), and a held node is sent nothing, so neither `check` nor `plan` is compared
//! with it; instead the held nodes must be exactly those of the waves after the first failure,
//! each named with the wave the plan gave it.
//! CI runs a fixed seed; a long run by hand:
//! `MESH_HONESTY_SEED=$RANDOM MESH_HONESTY_STEPS=200 cargo test --test e2e honesty -- --nocapture`

mod compare;
mod modules;
mod rollout;
mod steps;

use std::collections::{BTreeMap, BTreeSet};

use crate::util::{Mesh, NODES, on};
use compare::{Act, check_differences, plan_differences, planned, said};
use modules::{ALPHA, BETA, CLEAN, CONS, GAMMA, HONEST_UNIT, PROV, alpha_files};

/// xorshift64*: a few lines, the same sequence for the same seed everywhere.
pub struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Every kind of step, in the order a seed draws from.
pub const KINDS: [&str; 12] = [
    "assign",
    "unassign",
    "settings",
    "catalogue",
    "provider",
    "pin",
    "edit",
    "refusal",
    "helper-kill",
    "record",
    "operator-kill",
    "rollout",
];

/// What the plan cannot know after a step: nodes changed behind its back, and resources edited
/// by hand (the units on their node with them).
#[derive(Default)]
pub struct Excused {
    pub nodes: BTreeSet<String>,
    pub edited: BTreeSet<(String, String)>,
    /// A step that makes `validate` refuse: a dry run cannot run the check with the new content
    /// in place, so `check` is not held to the resources the push refused (and their units).
    pub refusal: bool,
    /// A step that makes a readiness probe fail: the push must fail the module's first wave.
    pub probe_fails: bool,
}

impl Excused {
    fn covers(&self, act: &Act) -> bool {
        self.nodes.contains(&act.0)
            || self.edited.contains(&(act.0.clone(), act.1.clone()))
            || (act.1.starts_with("unit ") && self.edited.iter().any(|(n, _)| *n == act.0))
    }
}

/// The test's account of the mesh: what is assigned where, and to which provider each consumer
/// is pinned.
pub struct World<'m> {
    pub mesh: &'m Mesh,
    pub rng: Rng,
    pub assigned: BTreeSet<(String, String)>,
    pub providers: BTreeSet<String>,
    /// consumer node → provider node
    pub pins: BTreeMap<String, String>,
    pub alpha_version: u32,
    /// Each node's declared resource ids, as the last push reported them.
    pub declared: BTreeMap<String, Vec<String>>,
    /// Commands that end what a step began (a refusal lasts one step), run after its comparison.
    pub undo_after: Vec<Vec<String>>,
    /// After a helper killed before it paid any unit: what the plan said units would be paid
    /// (reload, restart) on that node. The next push must pay them: a kill loses no cost owed.
    pub owed_after_kill: Vec<Act>,
    /// How many rollout steps were taken (the first one's probe fails).
    pub rollouts: u32,
}

impl World<'_> {
    pub fn write_alpha(&self) {
        let files = alpha_files(self.alpha_version);
        let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
        self.mesh.module(
            "alpha",
            &ALPHA.replace("VERSION", &self.alpha_version.to_string()),
            &files,
        );
    }

    pub fn has(&self, node: &str, module: &str) -> bool {
        self.assigned
            .contains(&(node.to_string(), module.to_string()))
    }
}

/// Runs `mesh ARGS --json` and reads its answer; a command that answers no JSON is a difference
/// of its own (the test never asks for something refused on purpose here).
fn answer(mesh: &Mesh, args: &[&str], differences: &mut Vec<String>) -> serde_json::Value {
    let run = mesh.run(args);
    serde_json::from_str(&run.stdout).unwrap_or_else(|_| {
        differences.push(format!(
            "`mesh {}` answered no JSON (exit {}): {}",
            args.join(" "),
            run.status,
            run.stderr.trim()
        ));
        serde_json::Value::Null
    })
}

#[test]
fn whatever_a_push_changes_the_plan_and_check_showed_first() {
    let seed = env_number("MESH_HONESTY_SEED", 2026);
    let steps = env_number("MESH_HONESTY_STEPS", 24);
    let kinds: Vec<&str> = match std::env::var("MESH_HONESTY_KINDS") {
        Ok(list) if !list.trim().is_empty() => KINDS
            .iter()
            .copied()
            .filter(|k| list.split(',').any(|w| w.trim() == *k))
            .collect(),
        _ => KINDS.to_vec(),
    };
    assert!(
        !kinds.is_empty(),
        "MESH_HONESTY_KINDS names none of {KINDS:?}"
    );
    // the operator's everyday steps come more often, so the machines hold something to break
    let draw: Vec<&str> = kinds
        .iter()
        .flat_map(|k| {
            let weight = match *k {
                "assign" | "settings" => 4,
                "edit" => 2,
                _ => 1,
            };
            std::iter::repeat_n(*k, weight)
        })
        .collect();
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let mut world = World {
        mesh: &mesh,
        rng: Rng(seed.max(1)),
        assigned: BTreeSet::new(),
        providers: BTreeSet::new(),
        pins: BTreeMap::new(),
        alpha_version: 1,
        declared: BTreeMap::new(),
        undo_after: Vec::new(),
        owed_after_kill: Vec::new(),
        rollouts: 0,
    };
    world.write_alpha();
    mesh.module("beta", BETA, &[]);
    mesh.module(
        "gamma",
        GAMMA,
        &[("run.sh", "# mark ${mark}\nwhile :; do sleep 10; done\n")],
    );
    mesh.module("prov", PROV, &[("prov.conf", "port=${listen.port}\n")]);
    mesh.module(
        "cons",
        CONS,
        &[
            ("cons.conf", "x=${x.host}:${x.port}\n"),
            (
                "run.sh",
                "while :; do cat /etc/mesh-cons.conf >/dev/null; sleep 10; done\n",
            ),
        ],
    );
    // what earlier tests left is given back, then cleared
    mesh.run(&["push", "--all"]);
    for n in NODES {
        on(n, CLEAN);
        on(n, HONEST_UNIT);
    }
    // a provider from the start, so a consumer always has one to be pinned to; and one of each
    // module, so the first steps have something to change and to break
    mesh.run(&["assign", "prov", "node1"]).ok();
    world.assigned.insert(("node1".into(), "prov".into()));
    world.providers.insert("node1".into());
    for (module, node) in [("alpha", "node1"), ("beta", "node2"), ("cons", "node3")] {
        steps::assign(&mut world, node, module);
    }
    mesh.run(&["push", "--all"]).ok();

    let mut total = 0;
    for step in 1..=steps {
        // every kind once first, so a short run (CI's) takes each; then at random
        let kind = match kinds.get(step as usize - 1) {
            Some(kind) => kind,
            None => world.rng.pick(&draw),
        };
        let mut excused = Excused::default();
        let what = steps::take(&mut world, kind, &mut excused);
        let context = format!("seed {seed}, step {step}: {what}");
        let mut differences = Vec::new();
        let plan_json = answer(&mesh, &["plan", "--all", "--json"], &mut differences);
        let plan = planned(&plan_json);
        let check = said(&answer(
            &mesh,
            &["check", "--all", "--json"],
            &mut differences,
        ));
        let pushed = answer(&mesh, &["push", "--all", "--json"], &mut differences);
        steps::remember(&mut world, &pushed);
        let push = said(&pushed);
        let (held, wrong_holds) = rollout::held(&plan_json, &pushed, excused.probe_fails, |n| {
            excused.nodes.contains(n)
        });
        differences.extend(wrong_holds);
        let refused: BTreeSet<(String, String)> = push
            .acts
            .iter()
            .filter(|a| excused.refusal && a.2 == "failed")
            .map(|a| (a.0.clone(), a.1.clone()))
            .collect();
        differences.extend(check_differences(&check, &push, |a| {
            held.contains(&a.0)
                || refused.contains(&(a.0.clone(), a.1.clone()))
                || (a.1.starts_with("unit ") && refused.iter().any(|(n, _)| *n == a.0))
        }));
        for owed in std::mem::take(&mut world.owed_after_kill) {
            if !push.acts.contains(&owed) {
                differences.push(format!(
                    "the plan before the helper was killed said {owed:?}; no push did it"
                ));
            }
        }
        // nothing changes unseen: a hand edit is something `check` finds
        for (node, id) in &excused.edited {
            if !check.acts.iter().any(|a| a.0 == *node && a.1 == *id) {
                differences.push(format!("check did not see the hand edit of {id} on {node}"));
            }
        }
        differences.extend(plan_differences(&plan, &push, |a| {
            excused.covers(a)
                || held.contains(&a.0)
                || refused.contains(&(a.0.clone(), a.1.clone()))
                || (a.1.starts_with("unit ") && refused.iter().any(|(n, _)| *n == a.0))
        }));
        let units = push
            .acts
            .iter()
            .filter(|a| a.1.starts_with("unit "))
            .count();
        println!(
            "{context}\n  compared check = push and plan = push: {} resource actions, {units} unit actions{}",
            push.acts.len() - units,
            if excused.nodes.is_empty() && excused.edited.is_empty() {
                String::new()
            } else {
                format!(
                    "; plan not held to: nodes {:?}, edited {:?}",
                    excused.nodes, excused.edited
                )
            }
        );
        for d in &differences {
            println!("  DIFFERENCE: {d}");
        }
        if !differences.is_empty() && std::env::var_os("MESH_HONESTY_SHOW").is_some() {
            println!("  plan: {plan_json}\n  push: {pushed}");
        }
        total += differences.len();
        for args in std::mem::take(&mut world.undo_after) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            mesh.run(&args).ok();
            println!("  then: mesh {}", args.join(" "));
        }
    }
    println!("honesty: seed {seed}, {steps} steps, {total} differences");
    assert_eq!(
        total, 0,
        "the plan or check lied (seed {seed}): see the DIFFERENCE lines above"
    );
}
