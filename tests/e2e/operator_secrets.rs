//! Operator-delivered secrets, on lab machines: `mesh secret set` reads the
//! value from stdin (never argv), seals it, and a push delivers it as a file, printed by nothing;
//! `mesh secret rotate` makes a new generated value, and the plan shows every file that reads it
//! and the unit that restarts for it before the push delivers it.

use crate::sealed::{assert_nowhere_in_clear, kv_and_its_client, secrets};
use crate::util::{Mesh, Run, fed, on};

/// Takes an API token from the operator and writes it into a root-only file.
const TOKENED: &str = r#"{
  "name": "tokened", "version": "1", "description": "Reads an API token the operator gives it.",
  "provides": [{"name": "api", "fields": {"token": {"type": "string", "secret": true, "from": "operator"}}}],
  "resources": [{"kind": "file", "path": "/etc/tokened.token", "mode": "0600", "secret": true, "template": "token"}]
}"#;

/// `mesh ARGS` with `input` on its stdin.
fn with_stdin(mesh: &Mesh, args: &[&str], input: &str) -> Run {
    fed(mesh.command(args), input)
}

#[test]
fn an_operator_secret_is_read_from_stdin_sealed_delivered_as_a_file_and_never_printed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on("node1", "rm -f /etc/tokened.token");
    mesh.module("tokened", TOKENED, &[("token", "token=${api.token}\n")]);
    mesh.run(&["assign", "tokened", "node1"]).ok();

    // never set: the plan says how to set it
    let refused = mesh.run(&["plan", "node1"]).code(1).stderr;
    assert!(
        refused.contains("the secret api.token is the operator's and was never set: `mesh secret set tokened api.token --node node1`"),
        "{refused}"
    );
    // a generated secret is rotated, an operator's is set: each refused the other way
    let wrong = mesh
        .run(&["secret", "rotate", "tokened", "api.token"])
        .code(1)
        .stderr;
    assert!(
        wrong.contains("mesh secret set tokened api.token"),
        "{wrong}"
    );

    let value = "op-S3cret-value-1";
    let set = with_stdin(
        &mesh,
        &["secret", "set", "tokened", "api.token"],
        &format!("{value}\n"),
    )
    .ok();
    assert!(
        set.stdout
            .contains("set api.token of tokened on node1, sealed"),
        "{}",
        set.stdout
    );

    let mut said = vec![set.stdout, set.stderr];
    said.push(mesh.run(&["plan", "node1", "--diff"]).ok().stdout);
    said.push(mesh.run(&["plan", "node1", "--json", "--diff"]).ok().stdout);
    said.push(mesh.run(&["push", "node1", "--json"]).ok().stdout);
    said.push(mesh.run(&["history", "--json"]).ok().stdout);
    said.push(
        mesh.run(&["config", "tokened", "--node", "node1", "--json"])
            .ok()
            .stdout,
    );
    for out in &said {
        assert!(!out.contains(value), "the secret was printed: {out}");
    }
    assert_eq!(
        on("node1", "cat /etc/tokened.token"),
        format!("token={value}\n")
    );
    assert_eq!(on("node1", "stat -c %a /etc/tokened.token").trim(), "600");
    assert_nowhere_in_clear(&mesh, &[value.to_string()]);

    // a new value: the file shows as changed (never its content) and the push delivers it
    let next = "op-S3cret-value-2";
    with_stdin(&mesh, &["secret", "set", "tokened", "api.token"], next).ok();
    let plan = mesh.run(&["plan", "node1", "--diff"]).ok().stdout;
    assert!(plan.contains("tokened:file:/etc/tokened.token"), "{plan}");
    assert!(!plan.contains(next) && !plan.contains(value), "{plan}");
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on("node1", "cat /etc/tokened.token"),
        format!("token={next}\n")
    );

    mesh.run(&["unassign", "tokened", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

#[test]
fn rotating_a_generated_secret_shows_every_file_and_unit_it_costs_then_delivers_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    kv_and_its_client(&mesh);
    let old = secrets(&mesh).remove(0);

    let wrong = with_stdin(&mesh, &["secret", "set", "kv", "kv.password"], "mine\n")
        .code(1)
        .stderr;
    assert!(
        wrong.contains("mesh secret rotate kv kv.password"),
        "{wrong}"
    );
    mesh.run(&["secret", "rotate", "kv", "kv.password"]).ok();
    let new = secrets(&mesh).remove(0);
    assert_ne!(old, new);

    // the store's file first; its client waits for the new login, and is sent in the same push
    let plan = mesh.run(&["plan", "--all", "--diff"]).code(3).stdout;
    assert!(
        plan.contains("kv:file:/srv/mesh/kv/data/auth.conf"),
        "{plan}"
    );
    assert!(
        plan.contains("node2: kv-client is waiting for kv@node1"),
        "{plan}"
    );
    assert!(plan.contains("kv.service will restart"), "{plan}");
    assert!(!plan.contains(&old) && !plan.contains(&new), "{plan}");

    mesh.run(&["push", "--all"]).ok();
    let on_store = on("node1", "cat /srv/mesh/kv/data/auth.conf");
    assert!(on_store.contains(&format!("user kv-client_node2 on >{new} ")));
    assert_eq!(
        on("node2", "cat /srv/mesh/kv-client/home/store-password").trim(),
        new
    );
    assert_nowhere_in_clear(&mesh, &[old, new]);
}
