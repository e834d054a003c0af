//! A rollout keeps its word: a canary that could not be reached is no canary that passed, so
//! the waves after it wait; `push --resume NODE` sends only that node of the rollout and leaves
//! the others for the next `--resume`, and a node the rollout does not have left is refused.

use crate::util::{Mesh, node_result};

#[test]
fn an_unreachable_canary_holds_the_waves_and_resume_takes_a_selection() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1", "node2", "node3"])
        .ok();
    mesh.run(&["settings", "set", "motd", "banner=canary word"])
        .ok();
    mesh.run(&["lab", "stop", "node1"]).ok();
    let run = mesh.run(&[
        "push",
        "--all",
        "--canary",
        "1",
        "--connect-timeout",
        "3",
        "--json",
    ]);
    mesh.run(&["lab", "start", "node1"]).ok();
    let results = run.code(2).json();
    assert_eq!(
        node_result(&results, "node1")["kind"],
        "unreachable",
        "{results}"
    );
    for n in ["node2", "node3"] {
        let r = node_result(&results, n);
        assert_eq!(r["kind"], "rollout-stopped", "{n} was sent: {results}");
        assert!(
            r["reason"]
                .as_str()
                .is_some_and(|w| w.contains("the canary node1 could not be reached")),
            "{results}"
        );
    }

    // a node the rollout has not left is refused; one it has is sent alone
    let stranger = mesh.run(&["push", "--resume", "nope*"]);
    assert_ne!(stranger.status, 0, "{}", stranger.stdout);
    let one = mesh
        .run(&["push", "--resume", "node2", "--json"])
        .ok()
        .json();
    assert_eq!(node_result(&one, "node2")["outcome"], "applied", "{one}");
    assert!(
        one.as_array()
            .is_some_and(|a| a.iter().all(|r| r["node"] != "node3")),
        "only node2 was resumed: {one}"
    );
    let rest = mesh.run(&["push", "--resume", "--json"]).ok().json();
    for n in ["node1", "node3"] {
        assert_eq!(node_result(&rest, n)["outcome"], "applied", "{rest}");
    }
    mesh.run(&["unassign", "motd", "node1", "node2", "node3"])
        .ok();
    mesh.run(&["settings", "clear", "motd"]).ok();
    mesh.run(&["push", "--all"]).ok();
}
