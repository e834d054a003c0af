//! The bad-input corpus (`tests/corpus/`): hostile modules, settings values, node definitions and
//! helper declarations, each with the error it must give. After every input the inventory file is
//! byte for byte what it was (nothing stored) and the lab machine's files are as they were (nothing
//! changed): refusals happen before anything moves, on the operator's side or in the helper.
//!
//! It prints its counts: inputs tried, refused with the expected error, and nothing changed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{Mesh, path_str, ssh, ssh_command};

fn corpus(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str::<Value>(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{}: not a list", path.display()))
}

fn sha256_of(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the machine has where the mesh could write: every file's digest, owner and mode, every
/// link's target, under the places a hostile input aims at. An input that broke the machine (its
/// sshd no longer lets root in) is a change too.
fn machine_state() -> Result<String, String> {
    let run = ssh(
        "node1",
        "cd / && find etc var/lib/mesh srv root usr/local -xdev -not -path 'var/lib/mesh/bin/*' \
         \\( -type f -printf '%p %U:%G %m ' -exec sha256sum {} \\; -o -type l -printf '%p -> %l\\n' \
         -o -type d -printf '%p/ %U:%G %m\\n' \\) 2>/dev/null | sed 's/  .*$//' | sort",
    );
    if run.status == 0 {
        Ok(run.stdout)
    } else {
        Err(format!(
            "node1 cannot be read any more (ssh exit {}): {}",
            run.status, run.stderr
        ))
    }
}

/// The first lines that differ, for a failure message.
fn difference(before: &str, after: &str) -> String {
    let b: std::collections::BTreeSet<&str> = before.lines().collect();
    let a: std::collections::BTreeSet<&str> = after.lines().collect();
    let gone: Vec<&&str> = b.difference(&a).take(5).collect();
    let new: Vec<&&str> = a.difference(&b).take(5).collect();
    format!("gone: {gone:?}\nnew: {new:?}")
}

#[derive(Default)]
struct Tally {
    tried: usize,
    refused: usize,
    unchanged: usize,
    failures: Vec<String>,
}

impl Tally {
    fn case(&mut self, what: &str, refused: Result<(), String>, unchanged: Result<(), String>) {
        self.tried += 1;
        match refused {
            Ok(()) => self.refused += 1,
            Err(e) => self
                .failures
                .push(format!("{what}: not refused as expected: {e}")),
        }
        match unchanged {
            Ok(()) => self.unchanged += 1,
            Err(e) => self
                .failures
                .push(format!("{what}: something changed: {e}")),
        }
    }
}

/// A refusal: a non-zero exit whose output names what it must.
fn refused(status: i32, said: &str, expect: &str) -> Result<(), String> {
    if status == 0 {
        return Err(format!("exit 0:\n{said}"));
    }
    if !said.contains(expect) {
        return Err(format!(
            "exit {status}, but it does not say {expect:?}:\n{said}"
        ));
    }
    Ok(())
}

fn text(v: &Value, field: &str) -> String {
    v[field]
        .as_str()
        .unwrap_or_else(|| panic!("corpus entry without {field}: {v}"))
        .to_string()
}

fn args(v: &Value) -> Vec<String> {
    v["args"]
        .as_array()
        .unwrap_or_else(|| panic!("corpus entry without args: {v}"))
        .iter()
        .map(|a| a.as_str().expect("args are strings").to_string())
        .collect()
}

/// Writes a corpus module into `mesh`'s catalogue folder; returns its folder.
fn write_module(mesh: &Mesh, case: &Value) -> PathBuf {
    let name = case["module"]["name"]
        .as_str()
        .expect("a corpus module has a name")
        .to_string();
    let files: Vec<(String, String)> = case["files"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let json = serde_json::to_string_pretty(&case["module"]).expect("json");
    let cat = mesh.module(&name, &json, &borrowed);
    let dir = cat.join(&name);
    // links are made here, not stored in git: `"links": {"name": "target"}`
    if let Some(links) = case["links"].as_object() {
        for (link, target) in links {
            std::os::unix::fs::symlink(target.as_str().unwrap_or(""), dir.join(link))
                .expect("a corpus link");
        }
    }
    dir
}

fn modules(mesh: &Mesh, tally: &mut Tally) {
    for case in corpus("modules.json") {
        let what = format!("module {}", text(&case, "why"));
        let expect = text(&case, "expect");
        let dir = write_module(mesh, &case);
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let before_inv = sha256_of(&mesh.inventory());
        let before = machine_state();
        let result = if case["stage"] == "plan" {
            // the definition is valid; what it renders to on this node is not
            mesh.run(&["assign", &name, "node1"]).ok();
            for set in case["settings"].as_array().into_iter().flatten() {
                let pair = set.as_str().expect("settings are K=V strings");
                mesh.run(&["settings", "set", &name, pair]).ok();
            }
            let stored = sha256_of(&mesh.inventory());
            let plan = mesh.run(&["plan", "node1"]);
            let push = mesh.run(&["push", "node1"]);
            let result = refused(plan.status, &plan.stderr, &expect).and_then(|()| {
                refused(push.status, &push.stdout, &expect)
                    .or_else(|_| refused(push.status, &push.stderr, &expect))
            });
            let unchanged = if sha256_of(&mesh.inventory()) == stored {
                Ok(())
            } else {
                Err("the refused push stored something in the inventory".to_string())
            };
            mesh.run(&["unassign", &name, "node1"]).ok();
            let unchanged = unchanged.and(machine_same(&before));
            if unchanged.is_err() {
                // what a wrongly accepted push made is taken off again, for the next case
                mesh.run(&["push", "node1"]);
            }
            tally.case(&what, result, unchanged);
            remove_module(&dir);
            continue;
        } else {
            let check = mesh.run(&["module", "check", path_str(&dir)]);
            refused(check.status, &check.stderr, &expect)
        };
        remove_module(&dir);
        let unchanged = if sha256_of(&mesh.inventory()) == before_inv {
            machine_same(&before)
        } else {
            Err("the inventory changed".into())
        };
        tally.case(&what, result, unchanged);
    }
}

/// Takes a corpus module away again, and the catalogue folder with it when it is empty (an empty
/// catalogue folder is refused, as a typo in `--catalogue` would be).
fn remove_module(dir: &Path) {
    std::fs::remove_dir_all(dir).ok();
    if let Some(cat) = dir.parent() {
        std::fs::remove_dir(cat).ok();
    }
}

fn machine_same(before: &Result<String, String>) -> Result<(), String> {
    match (before, machine_state()) {
        (Ok(before), Ok(after)) if *before == after => Ok(()),
        (Ok(before), Ok(after)) => Err(format!("on node1: {}", difference(before, &after))),
        (_, Err(e)) => Err(e),
        (Err(e), _) => Err(e.clone()),
    }
}

/// Commands of the command line (settings values, node definitions): refused, nothing stored.
fn commands(mesh: &Mesh, file: &str, tally: &mut Tally) {
    for case in corpus(file) {
        let what = format!("{file} {}", text(&case, "why"));
        let expect = text(&case, "expect");
        let argv = args(&case);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let before = sha256_of(&mesh.inventory());
        let run = mesh.run(&argv);
        let unchanged = if sha256_of(&mesh.inventory()) == before {
            Ok(())
        } else {
            Err("the inventory changed".to_string())
        };
        tally.case(&what, refused(run.status, &run.stderr, &expect), unchanged);
    }
}

/// Runs the helper on node1 with `declaration` on its stdin, as a push does.
fn helper(declaration: &str) -> (i32, String) {
    let bin = ssh(
        "node1",
        "ls /var/lib/mesh/bin/ | grep -v '\\.part$' | head -n 1",
    )
    .stdout;
    let mut child = ssh_command("node1", &format!("/var/lib/mesh/bin/{} apply", bin.trim()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(declaration.as_bytes())
        .expect("the declaration is sent");
    let out = child.wait_with_output().expect("ssh ends");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), said)
}

/// Declarations sent straight to the helper, as a hostile or broken operator would: every
/// resource fails (or the helper refuses the whole run) with the reason, and nothing changes.
fn declarations(tally: &mut Tally) {
    for case in corpus("declarations.json") {
        let what = format!("declaration {}", text(&case, "why"));
        let expect = text(&case, "expect");
        let declaration = serde_json::json!({
            "version": case.get("version").cloned().unwrap_or(mesh::wire::VERSION.into()),
            "node": "node1",
            "resources": case["resources"],
        });
        let before = machine_state();
        let (status, said) = helper(&declaration.to_string());
        let result = if status != 0 {
            refused(status, &said, &expect)
        } else {
            let report: Value = serde_json::from_str(&said).unwrap_or(Value::Null);
            let outcomes = report["resources"].as_array().cloned().unwrap_or_default();
            let all_failed =
                !outcomes.is_empty() && outcomes.iter().all(|o| o["state"] == "failed");
            let said_so = outcomes
                .iter()
                .filter_map(|o| o["detail"].as_str())
                .any(|detail| detail.contains(&expect));
            if all_failed && said_so {
                Ok(())
            } else {
                Err(format!(
                    "the helper applied it, or did not say {expect:?}:\n{said}"
                ))
            }
        };
        tally.case(&what, result, machine_same(&before));
    }
}

#[test]
fn every_hostile_input_is_refused_by_name_and_changes_nothing() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // the helper onto node1 with nothing declared: the machine as the corpus starts from it
    mesh.run(&["push", "node1"]).ok();
    let mut tally = Tally::default();
    modules(&mesh, &mut tally);
    commands(&mesh, "settings.json", &mut tally);
    commands(&mesh, "nodes.json", &mut tally);
    declarations(&mut tally);
    println!(
        "corpus: {} inputs tried, {} refused as expected, {} changed nothing",
        tally.tried, tally.refused, tally.unchanged
    );
    if tally.unchanged != tally.tried {
        // a machine an input changed is no machine for the tests after this one
        mesh.run(&["lab", "down"]);
    }
    assert!(
        tally.failures.is_empty(),
        "{} of {} corpus inputs did not hold:\n{}",
        tally.failures.len(),
        tally.tried,
        tally.failures.join("\n\n")
    );
    assert_eq!(tally.refused, tally.tried);
    assert!(tally.tried > 0, "the corpus is empty");
}
