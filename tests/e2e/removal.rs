//! A removal is predicted as it is done: `plan` says what the helper's record
//! promises, with the condition it cannot know offline ("if it is empty then"); `check` and `push`
//! settle that condition the same way, in the order the push acts: a file the same push removes
//! does not keep its directory, a file someone else put there does.

use serde_json::{Value, json};

use crate::util::{Mesh, node_result, on};

const SPOOL: &str = r#"{
  "name": "spool", "version": "1", "description": "A file in a directory the host gives it.",
  "requires": [{"name": "data", "kind": "host", "directory": {}}],
  "resources": [{"kind": "file", "path": "${data.path}/made.conf", "template": "made.conf"}]
}"#;

const DIR: &str = "/srv/mesh/spool/data";
const DIR_ID: &str = "spool:directory:/srv/mesh/spool/data";
const FILE_ID: &str = "spool:file:/srv/mesh/spool/data/made.conf";

/// What a `plan --json` says removing `id` on node1 will do.
fn planned(plans: &Value, id: &str) -> Value {
    plans
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["node"] == "node1"))
        .and_then(|p| p["changes"].as_array())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c["id"] == id && c["action"] == "removed")
        })
        .map(|c| c["undo"].clone())
        .unwrap_or_else(|| panic!("no removal of {id} planned: {plans}"))
}

/// What a `check --json` or `push --json` says removing `id` on node1 did (or would do).
fn done(results: &Value, id: &str) -> Value {
    node_result(results, "node1")["report"]["resources"]
        .as_array()
        .and_then(|os| os.iter().find(|o| o["id"] == id && o["state"] == "removed"))
        .map(|o| o["undo"].clone())
        .unwrap_or_else(|| panic!("no removal of {id} reported: {results}"))
}

/// Assigns, pushes, unassigns; `before` runs on the machine before the plan is asked.
fn removed(mesh: &Mesh, before: &str) -> (Value, Value, Value) {
    mesh.module("spool", SPOOL, &[("made.conf", "made by the mesh\n")]);
    mesh.run(&["assign", "spool", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    on("node1", before);
    mesh.run(&["unassign", "spool", "node1"]).ok();
    let plan = mesh.run(&["plan", "node1", "--json"]).ok().json();
    let check = mesh.run(&["check", "node1", "--json"]).code(4).json();
    let push = mesh.run(&["push", "node1", "--json"]).ok().json();
    (plan, check, push)
}

#[test]
fn a_directory_emptied_by_the_same_push_is_predicted_removed_and_removed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // /srv/mesh is there before the push (found, not made: kept); the instance folder
    // /srv/mesh/spool is the parent the mesh makes, and removes once empty
    on("node1", "rm -rf /srv/mesh/spool; mkdir -p /srv/mesh");
    let (plan, check, push) = removed(&mesh, "true");
    assert_eq!(
        planned(&plan, DIR_ID),
        json!({"deletes_if_empty": [DIR, "/srv/mesh/spool"]}),
        "the plan cannot know what the directory will hold: it says the condition, and of the \
         instance folder the mesh made for it"
    );
    assert_eq!(
        planned(&plan, FILE_ID),
        json!({"deletes": [format!("{DIR}/made.conf")]})
    );
    // the file goes first, so the directory is empty when it is judged: check says so too
    assert_eq!(
        done(&check, DIR_ID),
        json!({"deletes": [DIR, "/srv/mesh/spool"]})
    );
    assert_eq!(done(&check, DIR_ID), done(&push, DIR_ID));
    assert_eq!(done(&check, FILE_ID), done(&push, FILE_ID));
    assert_eq!(
        on(
            "node1",
            "test -e /srv/mesh/spool && echo there || echo gone"
        ),
        "gone\n"
    );
    assert_eq!(
        on("node1", "test -d /srv/mesh && echo there || echo gone"),
        "there\n",
        "a parent the mesh found is never removed"
    );
}

#[test]
fn a_directory_holding_someone_elses_file_is_predicted_kept_and_kept() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on("node1", "rm -rf /srv/mesh/spool; mkdir -p /srv/mesh");
    let (plan, check, push) = removed(&mesh, &format!("echo data >{DIR}/precious"));
    assert_eq!(
        planned(&plan, DIR_ID),
        json!({"deletes_if_empty": [DIR, "/srv/mesh/spool"]})
    );
    assert_eq!(
        done(&check, DIR_ID),
        json!({"keeps": [DIR, "/srv/mesh/spool"]})
    );
    assert_eq!(done(&check, DIR_ID), done(&push, DIR_ID));
    assert_eq!(on("node1", &format!("cat {DIR}/precious")), "data\n");
    on("node1", "rm -rf /srv/mesh/spool");
}
