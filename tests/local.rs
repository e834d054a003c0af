//! End-to-end tests through the real `mesh` binary that need no root and no lab: every node is
//! on this machine (`mesh node add NAME --local DIR`), its real helper run as a child process
//! against a root directory of its own. They run as any user and in parallel with each other.
//!
//! What they prove about real machines (sshd, systemd, a real `/`) the lab tests prove in
//! `tests/e2e/`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "local/allocation.rs"]
mod allocation;
#[path = "local/import.rs"]
mod import;
#[path = "local/remembered.rs"]
mod remembered;
#[path = "local/selecting.rs"]
mod selecting;
#[path = "local/unset.rs"]
mod unset;
#[path = "local/validate.rs"]
mod validate;
#[path = "local/wants.rs"]
mod wants;

/// One test's mesh: its own inventory, operator key and catalogue folder in a temp dir.
struct Mesh {
    dir: tempfile::TempDir,
}

/// A finished command.
struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn code(self, want: i32) -> Run {
        assert_eq!(
            self.status, want,
            "expected exit {want}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    fn ok(self) -> Run {
        self.code(0)
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

impl Mesh {
    fn new() -> Mesh {
        let mesh = Mesh {
            dir: tempfile::tempdir().unwrap(),
        };
        mesh.run(&["init"]).ok();
        mesh
    }

    fn run(&self, args: &[&str]) -> Run {
        let d = self.dir.path();
        let out = Command::new(env!("CARGO_BIN_EXE_mesh"))
            .args(args)
            .env("MESH_INVENTORY", d.join("inventory.db"))
            .env("MESH_OPERATOR_KEY", d.join("operator-key"))
            .env("MESH_CATALOGUE", d.join("catalogue"))
            // nothing of the user's own ssh configuration or agent is read
            .env("HOME", d)
            .env_remove("SSH_AUTH_SOCK")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// A new directory standing for a machine's `/`, with a unit file `demo.service` and a
    /// user and group `demo`. The helper's recording machine answers for its accounts; `demo`
    /// is given the ids of whoever runs the test, as the helper runs as them and can give a
    /// file no other owner.
    fn root(&self, name: &str) -> PathBuf {
        let root = self.dir.path().join(name);
        let units = root.join("etc/systemd/system");
        std::fs::create_dir_all(&units).unwrap();
        std::fs::write(
            units.join("demo.service"),
            "[Service]\nExecStart=/bin/true\n",
        )
        .unwrap();
        let system = root.join("var/lib/mesh/system");
        std::fs::create_dir_all(&system).unwrap();
        let (uid, gid): (u32, u32) = (id("-u").parse().unwrap(), id("-g").parse().unwrap());
        let model = serde_json::json!({
            "users": {"demo": {"uid": uid, "gid": gid, "home": "/home/demo", "shell": "/bin/sh"}},
            "groups": {"demo": gid},
        });
        std::fs::write(system.join("model.json"), model.to_string()).unwrap();
        root
    }

    /// The test module `demo` in this mesh's catalogue: a file owned by `demo`, from a template
    /// with a setting whose change restarts the service reading it, and a host directory.
    fn demo(&self) {
        let dir = self.dir.path().join("catalogue/demo");
        std::fs::create_dir_all(&dir).unwrap();
        let json = r#"{
  "name": "demo", "version": "1", "description": "A greeting file, for the local transport.",
  "settings": [
    {"name": "greeting", "type": "string", "meaning": "What the file says.", "default": "hello", "cost": "restart"}
  ],
  "requires": [{"name": "data", "kind": "host", "directory": {"owner": "demo", "group": "demo", "mode": "0750"}}],
  "resources": [
    {"kind": "file", "path": "/etc/demo.conf", "owner": "demo", "group": "demo", "mode": "0640", "template": "demo.conf", "units": ["demo.service"]},
    {"kind": "service", "unit": "demo.service", "state": "running"}
  ]
}"#;
        std::fs::write(dir.join("module.json"), json).unwrap();
        std::fs::write(
            dir.join("demo.conf"),
            "greeting ${greeting}\ndata ${data.path}\n",
        )
        .unwrap();
    }
    /// The test module `guarded`: a file whose change must be confirmed.
    fn guarded(&self) {
        let dir = self.dir.path().join("catalogue/guarded");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
        dir.join("module.json"),
        r#"{
  "name": "guarded", "version": "1", "description": "A file whose change must be confirmed.",
  "settings": [{"name": "level", "type": "string", "meaning": "Its level.", "default": "1", "cost": "none"}],
  "resources": [{"kind": "file", "path": "/etc/guarded.conf", "owner": "demo", "group": "demo", "mode": "0644", "template": "guarded.conf", "confirm": true}]
}"#,
    )
    .unwrap();
        std::fs::write(dir.join("guarded.conf"), "level ${level}\n").unwrap();
    }
}

/// How many times the helper asked the recording machine `call`.
fn calls(root: &Path, call: &str) -> usize {
    std::fs::read_to_string(root.join("var/lib/mesh/system/calls"))
        .unwrap_or_default()
        .lines()
        .filter(|c| *c == call)
        .count()
}

/// What the recording machine's model says of `demo.service`.
fn demo_unit(root: &Path) -> serde_json::Value {
    let model = std::fs::read(root.join("var/lib/mesh/system/model.json")).unwrap();
    let model: serde_json::Value = serde_json::from_slice(&model).unwrap();
    model["units"]["demo.service"].clone()
}

fn id(flag: &str) -> String {
    let out = Command::new("id").arg(flag).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Every path under `root` but the helper's own state, with a file's content (`None`: a
/// directory).
fn tree(root: &Path) -> BTreeMap<String, Option<String>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if name == "var" {
                continue;
            }
            if path.is_dir() {
                found.insert(name, None);
                stack.push(path);
            } else {
                found.insert(name, Some(std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    found
}

#[test]
fn a_local_node_is_planned_pushed_checked_changed_and_given_back_as_found() {
    let mesh = Mesh::new();
    mesh.demo();
    let root = mesh.root("box");
    // what was there before the mesh: taken over, and put back when the module goes
    std::fs::write(root.join("etc/demo.conf"), "by hand\n").unwrap();
    std::fs::write(root.join("etc/hostname"), "box\n").unwrap();
    let before = tree(&root);

    let added = mesh.run(&["node", "add", "box", "--local", root.to_str().unwrap()]);
    assert!(added.ok().stdout.contains("on this machine"));
    mesh.run(&["assign", "demo", "box"]).ok();
    let show = mesh.run(&["node", "show", "box"]).ok().stdout;
    let on_this = format!(
        "local:     on this machine, {} standing for its /",
        root.display()
    );
    assert!(
        show.contains(&on_this) && show.contains("modules:   demo"),
        "{show}"
    );
    let plan = mesh.run(&["plan", "box"]).ok().stdout;
    for said in [
        "+ demo:file:/etc/demo.conf",
        "+ demo:directory:/srv/mesh/demo/data",
    ] {
        assert!(plan.contains(said), "{said:?} not in {plan}");
    }

    let push = mesh.run(&["push", "box"]).ok().stdout;
    assert!(push.contains("(helper uploaded)"), "{push}");
    assert_eq!(
        std::fs::read_to_string(root.join("etc/demo.conf")).unwrap(),
        "greeting hello\ndata /srv/mesh/demo/data\n"
    );
    assert!(root.join("srv/mesh/demo/data").is_dir());
    assert_eq!(calls(&root, "systemctl start demo.service"), 1);
    assert_eq!(demo_unit(&root)["active"], true);
    let helpers: Vec<_> = std::fs::read_dir(root.join("var/lib/mesh/bin"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        helpers.len() == 1 && helpers[0].starts_with("mesh-host-"),
        "{helpers:?}"
    );

    // converged: nothing to do, and the helper is not stored again
    let check = mesh.run(&["check", "box"]).ok().stdout;
    assert!(
        check.contains("0 created, 0 changed, 3 unchanged"),
        "{check}"
    );
    let again = mesh.run(&["push", "box"]).ok().stdout;
    assert!(!again.contains("helper uploaded"), "{again}");

    // a changed setting: the plan names it, with the file's diff, before anything moves
    mesh.run(&["settings", "set", "demo", "greeting=bye"]).ok();
    let plan = mesh.run(&["plan", "box", "--diff"]).ok().stdout;
    for said in [
        "~ demo:file:/etc/demo.conf (content; settings moved: greeting)",
        "-greeting hello",
        "+greeting bye",
        "! demo.service will restart (because of demo:file:/etc/demo.conf: greeting)",
    ] {
        assert!(plan.contains(said), "{said:?} not in {plan}");
    }
    assert!(
        std::fs::read_to_string(root.join("etc/demo.conf"))
            .unwrap()
            .starts_with("greeting hello\n"),
        "a plan changes nothing"
    );
    assert_eq!(calls(&root, "systemctl restart demo.service"), 0);
    mesh.run(&["push", "box"]).ok();
    assert!(
        std::fs::read_to_string(root.join("etc/demo.conf"))
            .unwrap()
            .starts_with("greeting bye\n")
    );
    assert_eq!(calls(&root, "systemctl restart demo.service"), 1);

    // a hand edit is seen by check
    std::fs::write(root.join("etc/demo.conf"), "edited\n").unwrap();
    let check = mesh.run(&["check", "box"]).code(4).stdout;
    assert!(check.contains("1 changed"), "{check}");

    // unassigned: the root is given back as it was found
    mesh.run(&["unassign", "demo", "box"]).ok();
    mesh.run(&["push", "box"]).ok();
    assert_eq!(tree(&root), before);
    assert_eq!(
        demo_unit(&root)["active"],
        false,
        "it was not running before"
    );
}

#[test]
fn local_nodes_are_pushed_in_parallel_each_against_its_own_root() {
    let mesh = Mesh::new();
    mesh.demo();
    let names = ["a1", "a2", "a3", "a4"];
    for name in names {
        let root = mesh.root(name);
        mesh.run(&["node", "add", name, "--local", root.to_str().unwrap()])
            .ok();
        mesh.run(&["assign", "demo", name]).ok();
        mesh.run(&[
            "settings",
            "set",
            "demo",
            "--node",
            name,
            &format!("greeting={name}"),
        ])
        .ok();
    }
    let pushed = mesh
        .run(&["--json", "push", "--all", "--parallel", "4"])
        .ok();
    let json = pushed.json();
    for name in names {
        let said = std::fs::read_to_string(mesh.dir.path().join(name).join("etc/demo.conf"));
        assert!(
            said.unwrap().starts_with(&format!("greeting {name}\n")),
            "{json}"
        );
    }
}

#[test]
fn a_local_root_that_is_not_an_absolute_directory_is_refused_and_nothing_stored() {
    let mesh = Mesh::new();
    let file = mesh.dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let missing = mesh.dir.path().join("missing");
    for (dir, why) in [
        ("relative/root", "is not an absolute path"),
        (file.to_str().unwrap(), "is not a directory"),
        (missing.to_str().unwrap(), "is not a directory"),
    ] {
        let run = mesh.run(&["node", "add", "box", "--local", dir]).code(1);
        assert!(
            run.stderr.contains(why) && run.stderr.contains("nothing was stored"),
            "{dir}: {}",
            run.stderr
        );
    }
    // a local node is not also reached over SSH
    let both = mesh.run(&["node", "add", "box", "--local", "/tmp", "--address", "h"]);
    assert!(both.code(64).stderr.contains("cannot be used with"));
    let list = mesh.run(&["--json", "node", "list"]).ok().json();
    assert_eq!(list, serde_json::json!([]));
}

#[test]
fn a_local_node_has_no_host_key_to_trust() {
    let mesh = Mesh::new();
    let root = mesh.root("box");
    mesh.run(&["node", "add", "box", "--local", root.to_str().unwrap()])
        .ok();
    let trust = mesh.run(&["node", "trust", "box"]).code(1);
    assert!(trust.stderr.contains("has no host key"), "{}", trust.stderr);
}

#[test]
fn a_change_that_asks_confirmation_is_confirmed_by_a_second_run_of_the_helper() {
    let mesh = Mesh::new();
    mesh.guarded();
    let root = mesh.root("box");
    mesh.run(&["node", "add", "box", "--local", root.to_str().unwrap()])
        .ok();
    mesh.run(&["assign", "guarded", "box"]).ok();

    let push = mesh.run(&["--json", "push", "box"]).ok().json();
    let node = push
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["node"] == "box"))
        .unwrap_or_else(|| panic!("no box in {push}"));
    assert_eq!(node["confirmation"], "confirmed", "{push}");
    assert_eq!(
        std::fs::read_to_string(root.join("etc/guarded.conf")).unwrap(),
        "level 1\n"
    );
    // the machine's waiter was asked for, and a later push finds nothing awaiting
    let waiters = std::fs::read_to_string(root.join("var/lib/mesh/system/calls")).unwrap();
    assert!(waiters.contains("systemd-run"), "{waiters}");
    mesh.run(&["settings", "set", "guarded", "level=2"]).ok();
    mesh.run(&["push", "box"]).ok();
    assert_eq!(
        std::fs::read_to_string(root.join("etc/guarded.conf")).unwrap(),
        "level 2\n"
    );
}

#[test]
fn a_confirm_whose_answer_is_lost_is_asked_again_and_every_answer_lost_is_unknown() {
    let mesh = Mesh::new();
    mesh.guarded();
    let root = mesh.root("box");
    mesh.run(&["node", "add", "box", "--local", root.to_str().unwrap()])
        .ok();
    mesh.run(&["assign", "guarded", "box"]).ok();
    let push = |lose: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_mesh"))
            .args(["--json", "push", "box", "--confirm-timeout", "5"])
            .env("MESH_INVENTORY", mesh.dir.path().join("inventory.db"))
            .env("MESH_OPERATOR_KEY", mesh.dir.path().join("operator-key"))
            .env("MESH_CATALOGUE", mesh.dir.path().join("catalogue"))
            .env("HOME", mesh.dir.path())
            .env("MESH_TEST_LOSE_CONFIRM_REPLY", lose)
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), json[0]["confirmation"].clone())
    };
    // the first answer lost: the confirm ran, and asked again the helper says so
    let (status, confirmation) = push("1");
    assert_eq!(
        (status, confirmation.as_str()),
        (Some(0), Some("confirmed"))
    );
    // every answer lost: whether the change stayed cannot be said
    mesh.run(&["settings", "set", "guarded", "level=2"]).ok();
    let (status, confirmation) = push("all");
    assert_eq!(status, Some(2), "{confirmation}");
    assert!(
        confirmation
            .as_str()
            .is_some_and(|c| c.starts_with("unknown: a confirm reached the machine")),
        "{confirmation}"
    );
}

#[test]
fn an_operator_gone_before_it_confirms_leaves_the_change_pending_on_the_machine() {
    let mesh = Mesh::new();
    mesh.guarded();
    let root = mesh.root("box");
    mesh.run(&["node", "add", "box", "--local", root.to_str().unwrap()])
        .ok();
    mesh.run(&["assign", "guarded", "box"]).ok();
    let out = Command::new(env!("CARGO_BIN_EXE_mesh"))
        .args(["push", "box", "--confirm-timeout", "600"])
        .env("MESH_INVENTORY", mesh.dir.path().join("inventory.db"))
        .env("MESH_OPERATOR_KEY", mesh.dir.path().join("operator-key"))
        .env("MESH_CATALOGUE", mesh.dir.path().join("catalogue"))
        .env("HOME", mesh.dir.path())
        .env("MESH_TEST_STOP_BEFORE_CONFIRMING", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(9), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("etc/guarded.conf")).unwrap(),
        "level 1\n"
    );
    // nobody confirmed it: the machine still awaits, and says so
    let plan = mesh.run(&["plan", "box"]).ok().stdout;
    assert!(
        plan.contains("box: pending confirmation: change "),
        "{plan}"
    );
}

#[test]
fn verbose_shows_the_helpers_steps_outside_its_resources_and_the_wait_for_its_answer() {
    let mesh = Mesh::new();
    mesh.demo();
    let root = mesh.root("box");
    mesh.run(&["node", "add", "box", "--local", root.to_str().unwrap()])
        .ok();
    mesh.run(&["assign", "demo", "box"]).ok();
    mesh.run(&["push", "box"]).ok();
    // a no-op: each step of the helper's run, timed on the machine and sent in its answer
    let said = mesh.run(&["-v", "push", "box"]).ok().stderr;
    let ms = |line: &str| -> f64 { line.split_whitespace().nth(1).unwrap().parse().unwrap() };
    let steps: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("helper step: "))
        .collect();
    for step in [
        "lock",
        "record read",
        "units' state",
        "resources",
        "record written",
        "facts",
    ] {
        assert!(
            steps
                .iter()
                .any(|l| l.ends_with(&format!("helper step: {step}"))),
            "no step {step:?} in\n{said}"
        );
    }
    let run = said
        .lines()
        .find(|l| l.contains("the helper's run, of "))
        .unwrap_or_else(|| panic!("no run line in\n{said}"));
    let waited: f64 = run
        .rsplit(" of ")
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let sum: f64 = steps.iter().map(|l| ms(l)).sum();
    // the steps add up to the run, which fits in the operator's wait for its answer
    assert!(
        ms(run) > 0.0 && (sum - ms(run)).abs() < 0.05 && ms(run) <= waited,
        "{said}"
    );
}
