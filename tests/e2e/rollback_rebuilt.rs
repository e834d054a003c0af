//! A rollback to a generation sent before the machine was rebuilt (found by an
//! attacker): what that push sent was sealed to the machine's old host key, which the rebuilt
//! machine no longer has; the rollback seals it again, from the copy the inventory kept, to the
//! key the machine has now, so the secret file comes back byte for byte.

use crate::util::{Mesh, fed, node_result, on, rebuild};

/// Writes an API token the operator gives it into a root-only file.
const TOKENED: &str = r#"{
  "name": "tokened", "version": "1", "description": "Reads an API token the operator gives it.",
  "provides": [{"name": "api", "fields": {"token": {"type": "string", "secret": true, "from": "operator"}}}],
  "resources": [{"kind": "file", "path": "/etc/tokened.token", "mode": "0600", "secret": true, "template": "token"}]
}"#;

/// `tokened` assigned to node1, with the operator's token `value`.
fn tokened_on_node1(mesh: &Mesh, value: &str) {
    mesh.module("tokened", TOKENED, &[("token", "token=${api.token}\n")]);
    mesh.run(&["assign", "tokened", "node1"]).ok();
    set_token(mesh, value);
}

fn set_token(mesh: &Mesh, value: &str) {
    fed(
        mesh.command(&["secret", "set", "tokened", "api.token"]),
        &format!("{value}\n"),
    )
    .ok();
}

/// Rolls node1 back to generation `to`, which must apply.
fn rolled_back(mesh: &Mesh, to: u64) {
    let out = mesh
        .run(&["--json", "rollback", "node1", "--to", &to.to_string()])
        .ok()
        .json();
    let r = node_result(&out, "node1");
    assert_eq!(r["outcome"], "applied", "{r}");
}

fn pushed_generation(mesh: &Mesh) -> u64 {
    let out = mesh.run(&["--json", "push", "node1"]).ok().json();
    node_result(&out, "node1")["report"]["generation"]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("node1: no generation: {out}"))
}

#[test]
fn a_rollback_to_a_generation_sent_before_the_machine_was_rebuilt_opens_its_secret_there() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    tokened_on_node1(&mesh, "before-the-rebuild");
    let first = pushed_generation(&mesh);
    assert_eq!(
        on("node1", "cat /etc/tokened.token"),
        "token=before-the-rebuild\n"
    );

    // a blank disk and a new host key, pinned again; then another token sent to it
    rebuild(&mesh, "node1");
    set_token(&mesh, "after-the-rebuild");
    let second = pushed_generation(&mesh);
    assert!(second > first, "{second} after {first}");
    assert_eq!(
        on("node1", "cat /etc/tokened.token"),
        "token=after-the-rebuild\n"
    );

    rolled_back(&mesh, first);
    assert_eq!(
        on(
            "node1",
            "cat /etc/tokened.token; stat -c '%a %U' /etc/tokened.token"
        ),
        "token=before-the-rebuild\n600 root\n",
        "generation {first}'s secret file did not come back"
    );
    mesh.run(&["rollback", "node1", "--release"]).ok();
}

/// Plans and checks compose secrets in a trial, which notes no copy of them (attack37): a
/// rollback to a generation whose secret was only ever planned and checked before a push sent
/// it, with the machine rebuilt between, still finds the copy that push kept.
#[test]
fn a_rollback_finds_the_copy_of_a_secret_that_plans_and_checks_composed_before_its_push() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    tokened_on_node1(&mesh, "planned-first");
    mesh.run(&["plan", "node1"]).ok();
    mesh.run(&["check", "node1"]);
    let first = pushed_generation(&mesh);
    mesh.run(&["plan", "node1"]).ok();
    mesh.run(&["check", "node1"]).ok();

    set_token(&mesh, "planned-second");
    mesh.run(&["plan", "node1"]).ok();
    mesh.run(&["check", "node1"]);
    let second = pushed_generation(&mesh);
    assert!(second > first, "{second} after {first}");
    rebuild(&mesh, "node1");
    mesh.run(&["plan", "node1"]).ok();
    mesh.run(&["check", "node1"]);

    rolled_back(&mesh, first);
    assert_eq!(
        on("node1", "cat /etc/tokened.token"),
        "token=planned-first\n",
        "generation {first}'s secret file did not come back"
    );
    mesh.run(&["rollback", "node1", "--release"]).ok();
}
