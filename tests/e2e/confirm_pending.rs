//! A change awaiting confirmation is pending until the machine says it was confirmed or
//! reverted: a `check` during the wait records nothing of it, and `plan` says it is pending. And
//! confirming is idempotent: a confirm whose answer was lost is asked again and heard confirmed;
//! the helper answers for a reverted change that it was reverted, and for one it never had that
//! it is unknown.

use std::time::Duration;

use crate::confirm::{
    DROP_IN, ID, no_waiter, reverted_on_node3_within, take_sshd_off, unconfirmed_on_node3,
};
use crate::util::{Mesh, Run, node_result, on};

/// Asks the helper this mesh uploaded on `node` about change `id`: its exit status and what it
/// said.
fn ask_helper(node: &str, id: &str) -> (i32, String) {
    let local = crate::helper::helper();
    let sum = std::process::Command::new("sha256sum")
        .arg(&local)
        .output()
        .expect("sha256sum runs");
    let sum = String::from_utf8_lossy(&sum.stdout);
    let sha = sum.split_whitespace().next().expect("a digest");
    let out = on(
        node,
        &format!("/var/lib/mesh/bin/mesh-host-{sha} confirm {id} 2>&1; echo \"exit=$?\""),
    );
    let (said, status) = out.trim_end().rsplit_once("exit=").expect("an exit line");
    (status.parse().expect("a status"), said.to_string())
}

/// Pushes sshd with `max-auth-tries=TRIES` to `node` (deadline 8 s), the confirm's answers lost
/// as `lose` says to the operator's test switch: `1` the first, `all` every one.
fn sshd_losing_answers(mesh: &Mesh, node: &str, tries: &str, lose: &str) -> Run {
    mesh.run(&["push", node]).ok();
    mesh.run(&["assign", "sshd", node]).ok();
    let setting = format!("max-auth-tries={tries}");
    mesh.run(&["settings", "set", "sshd", "--node", node, &setting])
        .ok();
    let push = mesh
        .command(&["--json", "push", node, "--confirm-timeout", "8"])
        .env("MESH_TEST_LOSE_CONFIRM_REPLY", lose)
        .output()
        .expect("mesh runs");
    Run::from(push)
}

#[test]
fn a_check_during_the_wait_confirms_nothing_and_the_plan_still_shows_a_reverted_change() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // the operator is gone (killed right after the helper's answer) while the change waits
    unconfirmed_on_node3(&mesh, "25");

    let plan = mesh.run(&["plan", "node3"]).ok().stdout;
    assert!(
        plan.contains("node3: pending confirmation: change "),
        "{plan}"
    );
    assert!(plan.contains(ID), "{plan}");
    // inside the deadline, a check says the change is pending and takes none of it as confirmed
    let check = mesh.run(&["check", "node3"]).code(4).stdout;
    assert!(check.contains("pending confirmation: change "), "{check}");
    // its count says why it exits 4 though no resource of the check changes
    assert!(check.contains(" failed, 1 pending confirmation"), "{check}");
    let checked = mesh.run(&["--json", "check", "node3"]).code(4).json();
    let id = node_result(&checked, "node3")["pending_confirmation"]
        .as_str()
        .unwrap_or_else(|| panic!("no pending_confirmation: {checked}"))
        .to_string();
    let planned = mesh.run(&["--json", "plan", "node3"]).ok().json();
    assert_eq!(planned[0]["pending_confirmation"], id.as_str(), "{planned}");
    // nor is the machine taken as it is now, nor pushed to, while the change waits; it stays
    // pending confirmation
    let adopt = mesh.run(&["node", "adopt", "node3"]).code(2).stdout;
    assert!(
        adopt.contains("awaits confirmation on the machine"),
        "{adopt}"
    );
    let push = mesh.run(&["push", "node3"]).code(2).stdout;
    assert!(
        push.contains("awaits confirmation on the machine"),
        "{push}"
    );
    let plan = mesh.run(&["plan", "node3"]).ok().stdout;
    assert!(
        plan.contains(&format!("node3: pending confirmation: change {id}")),
        "{plan}"
    );

    // nobody confirms: the machine puts it back, and the plan still has it to make
    reverted_on_node3_within(Duration::from_secs(25 + 15), "node3 did not revert");
    let plan = mesh.run(&["plan", "node3"]).ok().stdout;
    assert!(!plan.contains("no changes"), "the machine differs: {plan}");
    assert!(
        plan.contains(ID),
        "the reverted change is still to be made: {plan}"
    );
    let check = mesh.run(&["check", "node3"]).code(4).stdout;
    assert!(
        check.contains(&format!("reverted on the machine earlier (change {id}")),
        "{check}"
    );
    let plan = mesh.run(&["plan", "node3"]).ok().stdout;
    assert!(plan.contains(ID) && !plan.contains("pending"), "{plan}");

    // the next push makes it (and says the revert, once); the helper asked about the reverted
    // change still answers reverted, and about one it never had, unknown
    let next = mesh.run(&["push", "node3"]).ok().stdout;
    assert!(next.contains("reverted on the machine earlier"), "{next}");
    let (status, said) = ask_helper("node3", &id);
    assert_eq!(status, 30, "EXIT_ALREADY_REVERTED: {said}");
    assert!(said.contains("reverted"), "{said}");
    let (status, said) = ask_helper("node3", "0123abcd");
    assert_eq!(status, 31, "EXIT_UNKNOWN_CHANGE: {said}");
    assert!(said.contains("unknown"), "{said}");
    take_sshd_off(&mesh, &["node3"]);
}

#[test]
fn a_confirm_whose_answer_is_lost_is_asked_again_and_reported_confirmed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // the first confirm runs on the machine; its connection drops before its exit status is read
    let push = sshd_losing_answers(&mesh, "node2", "4", "1").ok().json();
    let node2 = node_result(&push, "node2");
    assert_eq!(node2["outcome"], "applied", "{node2}");
    assert_eq!(node2["confirmation"], "confirmed", "{node2}");

    // past the deadline the change is still there, and the plan has nothing to do
    std::thread::sleep(Duration::from_secs(10));
    assert!(on("node2", &format!("cat {DROP_IN}")).contains("MaxAuthTries 4"));
    assert!(on("node2", "sshd -T").contains("maxauthtries 4"));
    assert!(no_waiter("node2"));
    let plan = mesh.run(&["plan", "node2"]).ok().stdout;
    assert!(plan.contains("no changes"), "{plan}");
    let history = mesh.run(&["history", "node2", "--limit", "1"]).ok().stdout;
    assert!(history.contains("applied"), "{history}");
    mesh.run(&["settings", "clear", "sshd", "--node", "node2"])
        .ok();
    take_sshd_off(&mesh, &["node2"]);
}

#[test]
fn a_confirm_that_reached_the_machine_and_never_answered_is_unknown_not_reverted() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // every confirm runs on the machine, and every answer is lost: the first confirmed it
    let push = sshd_losing_answers(&mesh, "node1", "5", "all")
        .code(2)
        .json();
    let node1 = node_result(&push, "node1");
    assert_eq!(node1["outcome"], "failed", "{node1}");
    let said = node1["confirmation"].as_str().unwrap_or_default();
    assert!(
        said.starts_with("unknown: a confirm reached the machine"),
        "never said reverted while the change may stay: {said}"
    );
    std::thread::sleep(Duration::from_secs(10));
    assert!(on("node1", "sshd -T").contains("maxauthtries 5"));
    // the node stays unconfirmed until the machine is asked; then plan and check agree
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(plan.contains("node1: unconfirmed"), "{plan}");
    mesh.run(&["check", "node1"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert!(plan.contains("node1: no changes"), "{plan}");
    mesh.run(&["settings", "clear", "sshd", "--node", "node1"])
        .ok();
    take_sshd_off(&mesh, &["node1"]);
}
