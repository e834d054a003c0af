//! The plan never lies (seed 003, guard 2): a randomized sequence of operator steps against lab
//! machines (assign, unassign, settings set and clear, a catalogue change, a hand edit on a
//! machine); after each step `plan` and `check` are compared with what the push then reports,
//! resource by resource. Any difference fails, naming the seed and the step.
//!
//! `plan` compares with what each node was last sent, so it cannot know of a hand edit; `check`
//! asks the machines. So: `check` must equal the push exactly at every step, and `plan` must equal
//! the push except for the resources edited by hand in that step.
//!
//! CI runs a fixed seed and a few steps; more by hand:
//! `MESH_HONESTY_SEED=$RANDOM MESH_HONESTY_STEPS=200 cargo test --test e2e honesty -- --nocapture`

use std::collections::BTreeSet;

use serde_json::Value;

use crate::util::{Mesh, NODES, on};

const ALPHA: &str = r#"{
  "name": "alpha", "version": "VERSION", "description": "A whole file made from two settings.",
  "settings": [
    {"name": "level", "type": "integer", "meaning": "A number.", "default": 1, "cost": "none"},
    {"name": "label", "type": "string", "meaning": "A word.", "default": "a", "cost": "none"}
  ],
  "resources": [{"kind": "file", "path": "/etc/mesh-alpha.conf", "template": "alpha.conf"}]
}"#;

const BETA: &str = r#"{
  "name": "beta", "version": "1", "description": "Keys in a shared file and a directory.",
  "settings": [{"name": "level", "type": "integer", "meaning": "A number.", "default": 1, "cost": "none"}],
  "requires": [{"name": "spool", "kind": "host", "directory": {}}],
  "resources": [
    {"kind": "keys", "path": "/etc/mesh-beta.json", "keys": {"beta": {"level": "${level}"}}}
  ]
}"#;

/// xorshift64*: a few lines, the same sequence for the same seed everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Each node's resources that a plan says will change (a change only in what a resource is made
/// from, with nothing on the machine moving, is not one).
fn planned(plans: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for p in plans.as_array().into_iter().flatten() {
        for c in p["changes"].as_array().into_iter().flatten() {
            if c["fields"] == serde_json::json!(["source"]) {
                continue;
            }
            out.insert((
                p["node"].as_str().unwrap_or("").to_string(),
                c["id"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out
}

/// Each node's resources a helper report says changed (or would).
fn reported(results: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for r in results.as_array().into_iter().flatten() {
        assert_ne!(r["outcome"], "failed", "a node failed: {r}");
        for o in r["report"]["resources"].as_array().into_iter().flatten() {
            if o["state"] != "unchanged" {
                out.insert((
                    r["node"].as_str().unwrap_or("").to_string(),
                    o["id"].as_str().unwrap_or("").to_string(),
                ));
            }
        }
    }
    out
}

#[test]
fn whatever_a_push_changes_the_plan_and_check_showed_first() {
    let seed = env_number("MESH_HONESTY_SEED", 2026);
    let steps = env_number("MESH_HONESTY_STEPS", 24);
    let mut rng = Rng(seed.max(1));
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    let mut alpha_version = 1;
    let write_alpha = |version: u32| {
        mesh.module(
            "alpha",
            &ALPHA.replace("VERSION", &version.to_string()),
            &[(
                "alpha.conf",
                &format!("# alpha {version}\nlevel=${{level}}\nlabel=${{label}}\n"),
            )],
        );
    };
    write_alpha(alpha_version);
    mesh.module("beta", BETA, &[]);
    mesh.run(&["push", "--all"]).ok();
    for n in NODES {
        on(
            n,
            "rm -rf /etc/mesh-alpha.conf /etc/mesh-beta.json /srv/mesh/beta",
        );
    }

    let mut assigned: BTreeSet<(String, String)> = BTreeSet::new();
    for step in 1..=steps {
        let node = rng.pick(&NODES);
        let module = rng.pick(&["alpha", "beta"]);
        let mut edited: BTreeSet<(String, String)> = BTreeSet::new();
        let what = match rng.below(7) {
            0 | 1 => {
                if assigned.insert((node.into(), module.into())) {
                    mesh.run(&["assign", module, node]).ok();
                }
                format!("assign {module} {node}")
            }
            2 => {
                if assigned.remove(&(node.into(), module.into())) {
                    mesh.run(&["unassign", module, node]).ok();
                }
                format!("unassign {module} {node}")
            }
            3 => {
                let level = format!("level={}", rng.below(4));
                let on_node = rng.below(2) == 0;
                let mut args = vec!["settings", "set", module, &level, "--replace"];
                if on_node {
                    args.extend(["--node", node]);
                }
                mesh.run(&args).ok();
                format!("settings set {module} {level} (node layer: {on_node})")
            }
            4 => {
                let on_node = rng.below(2) == 0;
                let mut args = vec!["settings", "clear", module];
                if on_node {
                    args.extend(["--node", node]);
                }
                mesh.run(&args).ok();
                format!("settings clear {module} (node layer: {on_node})")
            }
            5 => {
                alpha_version += 1;
                write_alpha(alpha_version);
                format!("catalogue: alpha version {alpha_version}")
            }
            _ => {
                // a hand edit of something the mesh manages on that machine, if anything
                let has = |m: &str| assigned.contains(&(node.to_string(), m.to_string()));
                let pushed = |path: &str| {
                    on(node, &format!("test -e {path} && echo yes || echo no")).trim() == "yes"
                };
                if has("alpha") && pushed("/etc/mesh-alpha.conf") {
                    on(node, "echo 'edited by hand' >>/etc/mesh-alpha.conf");
                    edited.insert((node.into(), "alpha:file:/etc/mesh-alpha.conf".into()));
                } else if has("beta") && pushed("/etc/mesh-beta.json") {
                    on(
                        node,
                        "sed -i 's/\"level\": [0-9]*/\"level\": 99/' /etc/mesh-beta.json",
                    );
                    edited.insert((node.into(), "beta:keys:/etc/mesh-beta.json".into()));
                }
                format!("hand edit on {node}: {edited:?}")
            }
        };
        let context = format!("seed {seed}, step {step}: {what}");
        let plan = planned(&mesh.run(&["plan", "--all", "--json"]).ok().json());
        let check = reported(&mesh.run(&["check", "--all", "--json"]).json());
        let push = reported(&mesh.run(&["push", "--all", "--json"]).ok().json());
        assert_eq!(check, push, "check and push differ ({context})");
        let explained: BTreeSet<_> = plan.union(&edited).cloned().collect();
        assert_eq!(
            explained, push,
            "the plan (with the hand edits) and the push differ ({context})"
        );
        println!("{context}: {} resources changed, as planned", push.len());
    }
}
