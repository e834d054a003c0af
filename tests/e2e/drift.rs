//! Drift of every kind is seen and repaired, on a lab machine: a hand edit of
//! a process's bundle file or unit file is reported by `check` (exit 4) and written back by
//! `push`, which restarts the unit; a deleted bundle script is written back; a process whose
//! command cannot run is reported failed, not "started"; an owned key edited by hand is
//! reported and restored; `check --diff` shows the hand edit and never a secret file's content.
//!
//! Each test first pushes an empty declaration to every machine, which undoes what an earlier
//! run left.

use crate::container::IMAGE;
use crate::requirements::inventory_secret;
use crate::util::{Mesh, invocation, node_result, on};

/// A process running a bundle script.
const DRIFTER: &str = r#"{
  "name": "drifter", "version": "1", "description": "A process that runs a script of its bundle.",
  "resources": [
    {"kind": "process", "name": "worker", "description": "Runs its script",
     "command": ["/bin/sh", "run.sh"], "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

const RUN_SH: &str = "echo started >/run/mesh-drifter\nexec sleep infinity\n";
const UNIT: &str = "drifter-worker.service";
const SCRIPT: &str = "/var/lib/mesh/bundles/drifter-worker/run.sh";

/// A process whose command fails at once.
const BROKEN: &str = r#"{
  "name": "broken", "version": "1", "description": "A process whose command cannot run.",
  "resources": [
    {"kind": "process", "description": "Exits at once", "command": ["/bin/sh", "-c", "exit 3"]}
  ]
}"#;

/// A container.
const BOXED: &str = r#"{
  "name": "boxed", "version": "1", "description": "A container that sleeps.",
  "resources": [{"kind": "container", "image": "mesh-sleeper", "command": ["/usr/bin/sleep", "infinity"],
                 "environment": {"GREETING": "hi"}}]
}"#;

/// Keys in a shared JSON file.
const KEYED: &str = r#"{
  "name": "keyed", "version": "1", "description": "Owns one key of a shared file.",
  "resources": [
    {"kind": "keys", "path": "/etc/mesh-drift.json", "mode": "0644", "keys": {"level": "info"}}
  ]
}"#;

/// Provides a generated password.
const KEEPER: &str = r#"{
  "name": "keeper", "version": "1", "description": "Provides a password.",
  "provides": [{"name": "db", "fields": {"password": {"type": "string", "secret": true, "generate": true}}}],
  "resources": []
}"#;

/// A plain file and a file holding the password.
const READER: &str = r#"{
  "name": "reader", "version": "1", "description": "Writes a plain file and a secret one.",
  "requires": [
    {"name": "db", "kind": "module", "provision": "db", "fields": {"password": {"type": "string", "secret": true}}}
  ],
  "resources": [
    {"kind": "file", "path": "/etc/mesh-drift-plain.conf", "template": "plain.conf"},
    {"kind": "file", "path": "/etc/mesh-drift-secret.conf", "template": "secret.conf", "secret": true, "mode": "0600"}
  ]
}"#;

fn drifter(mesh: &Mesh) {
    mesh.module("drifter", DRIFTER, &[("run.sh", RUN_SH)]);
    mesh.run(&["push", "--all"]).ok();
    mesh.run(&["assign", "drifter", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on("node1", &format!("systemctl is-active {UNIT}")).trim(),
        "active"
    );
}

/// Takes `instance` off node1 and pushes, undoing what it made.
pub fn clean(mesh: &Mesh, instance: &str) {
    mesh.run(&["unassign", instance, "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

#[test]
fn a_hand_edited_bundle_file_and_unit_file_are_reported_by_check_and_restored_by_push() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    drifter(&mesh);

    // a bundle file edited by hand
    let before = invocation("node1", UNIT);
    on("node1", &format!("echo 'echo by hand' >>{SCRIPT}"));
    let check = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(
        check.contains(&format!(
            "changed drifter:process:{UNIT}: would rewrite and would restart {UNIT} (changed on the machine: bundle file run.sh was edited)"
        )),
        "{check}"
    );
    let diff = mesh.run(&["check", "node1", "--diff"]).code(4).stdout;
    assert!(diff.contains(&format!("--- a{SCRIPT}")), "{diff}");
    assert!(diff.contains("-echo by hand"), "{diff}");
    // check changed nothing
    assert!(on("node1", &format!("cat {SCRIPT}")).contains("by hand"));
    let push = mesh.run(&["push", "node1"]).ok().stdout;
    assert!(push.contains("bundle file run.sh was edited"), "{push}");
    assert_eq!(on("node1", &format!("cat {SCRIPT}")), RUN_SH);
    let after = invocation("node1", UNIT);
    assert_ne!(after, before, "the unit was not restarted");
    mesh.run(&["check", "node1"]).ok();

    // its unit file edited by hand, and its mode
    on(
        "node1",
        &format!("echo 'Nice=5' >>/etc/systemd/system/{UNIT} && chmod 0600 {SCRIPT}"),
    );
    let check = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(check.contains("unit file was edited"), "{check}");
    assert!(
        check.contains("bundle file run.sh has owner 0:0 and mode 600, not 0:0 and 755"),
        "{check}"
    );
    mesh.run(&["push", "node1"]).ok();
    assert!(!on("node1", &format!("cat /etc/systemd/system/{UNIT}")).contains("Nice=5"));
    assert_eq!(on("node1", &format!("stat -c %a {SCRIPT}")).trim(), "755");
    assert_ne!(
        invocation("node1", UNIT),
        after,
        "the unit was not restarted"
    );

    // a file added to the bundle by hand
    on(
        "node1",
        "echo extra >/var/lib/mesh/bundles/drifter-worker/extra.sh",
    );
    let check = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(
        check.contains("bundle file extra.sh was added on the machine"),
        "{check}"
    );
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        "test ! -e /var/lib/mesh/bundles/drifter-worker/extra.sh",
    );
    mesh.run(&["check", "node1"]).ok();
    clean(&mesh, "drifter");
}

#[test]
fn a_deleted_bundle_script_is_written_back_and_a_process_that_cannot_run_is_failed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    drifter(&mesh);

    // the script deleted and the unit in its restart loop: the push writes it back
    on(
        "node1",
        &format!("rm {SCRIPT} && systemctl restart {UNIT} || true"),
    );
    let check = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(check.contains("bundle file run.sh is missing"), "{check}");
    let push = mesh.run(&["push", "node1"]).ok().stdout;
    assert!(push.contains("bundle file run.sh is missing"), "{push}");
    assert_eq!(on("node1", &format!("cat {SCRIPT}")), RUN_SH);
    assert_eq!(
        on("node1", &format!("systemctl is-active {UNIT}")).trim(),
        "active"
    );
    mesh.run(&["check", "node1"]).ok();
    clean(&mesh, "drifter");

    // a command that cannot run is not "started"
    mesh.module("broken", BROKEN, &[]);
    mesh.run(&["assign", "broken", "node1"]).ok();
    let push = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let outcome = node_result(&push, "node1")["report"]["resources"]
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|o| o["id"] == "broken:process:broken.service")
        })
        .cloned()
        .unwrap_or_else(|| panic!("no outcome for the process in {push}"));
    assert_eq!(outcome["state"], "failed", "{outcome}");
    let detail = outcome["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("but broken.service is not running: systemd says"),
        "{detail}"
    );
    clean(&mesh, "broken");
}

#[test]
fn a_hand_edited_owned_key_is_reported_and_restored() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("keyed", KEYED, &[]);
    mesh.run(&["push", "--all"]).ok();
    on("node1", "rm -f /etc/mesh-drift.json");
    mesh.run(&["assign", "keyed", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        "printf '{\"level\": \"debug\", \"mine\": 1}\\n' >/etc/mesh-drift.json && chmod 0666 /etc/mesh-drift.json",
    );
    let check = mesh.run(&["check", "node1"]).code(4).stdout;
    for said in [
        "changed keyed:keys:/etc/mesh-drift.json: would set level; would set owner and mode \
         (/etc/mesh-drift.json has owner 0:0 and mode 666, not 0:0 and 644)",
        "some had been changed on the machine",
    ] {
        assert!(check.contains(said), "{said}: {check}");
    }
    mesh.run(&["push", "node1"]).ok();
    let json: serde_json::Value =
        serde_json::from_str(&on("node1", "cat /etc/mesh-drift.json")).unwrap();
    assert_eq!(json["level"], "info");
    assert_eq!(json["mine"], 1, "a key the mesh does not own was touched");
    assert_eq!(on("node1", "stat -c %a /etc/mesh-drift.json").trim(), "644");
    mesh.run(&["check", "node1"]).ok();
    clean(&mesh, "keyed");
}

#[test]
fn check_diff_shows_a_hand_edit_and_never_a_secret_files_content() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("keeper", KEEPER, &[]);
    mesh.module(
        "reader",
        READER,
        &[
            ("plain.conf", "level = info\n"),
            ("secret.conf", "password = ${db.password}\n"),
        ],
    );
    mesh.run(&["push", "--all"]).ok();
    mesh.run(&["assign", "keeper", "node1"]).ok();
    mesh.run(&["assign", "reader", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let password = inventory_secret(&mesh);

    on(
        "node1",
        "echo 'level = debug # by hand' >/etc/mesh-drift-plain.conf && \
         echo 'password = typed-by-hand' >/etc/mesh-drift-secret.conf",
    );
    let diff = mesh.run(&["check", "node1", "--diff"]).code(4).stdout;
    assert!(diff.contains("--- a/etc/mesh-drift-plain.conf"), "{diff}");
    assert!(diff.contains("-level = debug # by hand"), "{diff}");
    assert!(diff.contains("+level = info"), "{diff}");
    // the secret file is named as drifted, its content never shown either way
    assert!(
        diff.contains("would rewrite /etc/mesh-drift-secret.conf (it was changed on the machine)"),
        "{diff}"
    );
    assert!(!diff.contains("typed-by-hand"), "{diff}");
    assert!(!diff.contains(&password), "{diff}");
    let json = mesh.run(&["check", "node1", "--json"]).code(4).stdout;
    assert!(
        !json.contains("typed-by-hand") && !json.contains(&password),
        "{json}"
    );

    mesh.run(&["push", "node1"]).ok();
    mesh.run(&["check", "node1", "--diff"]).ok();
    clean(&mesh, "reader");
    clean(&mesh, "keeper");
}

#[test]
fn a_container_changed_by_hand_is_reported_and_recreated() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("boxed", BOXED, &[]);
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        &format!("docker rm -f boxed >/dev/null 2>&1; {IMAGE}"),
    );
    mesh.run(&["assign", "boxed", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let inspect = |format: &str| {
        on(
            "node1",
            &format!("docker inspect --format '{format}' boxed"),
        )
        .trim()
        .to_string()
    };
    let policy = inspect("{{.HostConfig.RestartPolicy.Name}}");
    let first = inspect("{{.Id}}");
    // a converged container is left alone
    mesh.run(&["check", "node1"]).ok();

    let other = if policy == "no" { "always" } else { "no" };
    on(
        "node1",
        &format!("docker update --restart={other} boxed >/dev/null"),
    );
    let check = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(
        check.contains("would recreate container boxed (restart changed on the machine)"),
        "{check}"
    );
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(inspect("{{.HostConfig.RestartPolicy.Name}}"), policy);
    assert_ne!(inspect("{{.Id}}"), first, "the container was not recreated");
    assert_eq!(inspect("{{.State.Running}}"), "true");
    mesh.run(&["check", "node1"]).ok();
    clean(&mesh, "boxed");
}
