//! What a removal's stop runs is shown before it happens: unassigning a module whose
//! `service` the mesh started stops the unit, and the unit's own `ExecStop=` then runs (Debian's
//! nftables flushes every rule). `plan --diff` names what it runs; a service declared
//! `"on-removal": "leave-running"` is left running.

use crate::util::{Mesh, on};

/// A unit of the machine's own (as a package installs one) whose stop removes what its start
/// made, as nftables' `flush ruleset` does.
const GUARD_UNIT: &str = "[Unit]\nDescription=rules others come to depend on\n\n[Service]\n\
Type=oneshot\nRemainAfterExit=yes\nExecStart=/bin/touch /run/guard-rules\n\
ExecStop=/bin/rm -f /run/guard-rules\n";

fn guard_module(mesh: &Mesh, on_removal: Option<&str>) {
    let extra = on_removal
        .map(|v| format!(", \"on-removal\": \"{v}\""))
        .unwrap_or_default();
    let json = format!(
        r#"{{"name": "guard", "version": "1", "description": "Starts the machine's rules unit.",
  "resources": [{{"kind": "service", "unit": "guard-rules.service", "state": "running"{extra}}}]}}"#
    );
    mesh.module("guard", &json, &[]);
}

/// The unit on node3, stopped, and no rules: as a package leaves it.
fn install_guard() {
    on(
        "node3",
        &format!(
            "systemctl stop guard-rules.service 2>/dev/null; rm -f /run/guard-rules; \
             printf '{}' >/etc/systemd/system/guard-rules.service; systemctl daemon-reload",
            GUARD_UNIT.replace('\n', "\\n")
        ),
    );
}

fn rules() -> String {
    on(
        "node3",
        "systemctl is-active guard-rules.service; test -e /run/guard-rules && echo rules || echo none",
    )
}

/// The guard assigned to node3 and pushed (the mesh starts its unit), then unassigned: the plan
/// of the removal, with `--diff`.
fn started_then_unassigned(mesh: &Mesh) -> String {
    mesh.run(&["assign", "guard", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(rules(), "active\nrules\n", "the mesh started it");
    mesh.run(&["unassign", "guard", "node3"]).ok();
    mesh.run(&["plan", "node3", "--diff"]).ok().stdout
}

#[test]
fn plan_diff_shows_what_the_stop_of_a_removal_runs() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    install_guard();
    guard_module(&mesh, None);
    let plan = started_then_unassigned(&mesh);
    assert!(
        plan.contains(
            "- guard:service:guard-rules.service — stops guard-rules.service (runs: /bin/rm -f /run/guard-rules)"
        ),
        "{plan}"
    );
    let json = mesh.run(&["plan", "node3", "--json"]).ok().json();
    assert_eq!(
        json[0]["changes"][0]["undo"]["stop_runs"]["guard-rules.service"][0],
        "/bin/rm -f /run/guard-rules",
        "{json}"
    );
    // and that is what the push does
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(rules(), "inactive\nnone\n", "stopped, as the plan said");
}

#[test]
fn a_service_to_be_left_running_on_removal_keeps_running_after_unassign() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    install_guard();
    guard_module(&mesh, Some("leave-running"));
    let shown = mesh.run(&["module", "show", "guard"]).ok().stdout;
    assert!(
        shown.contains("guard-rules.service (running, on removal: leave-running)"),
        "{shown}"
    );
    let plan = started_then_unassigned(&mesh);
    assert!(
        plan.contains("leaves guard-rules.service running"),
        "{plan}"
    );
    assert!(!plan.contains("will stop"), "{plan}");
    let pushed = mesh.run(&["push", "node3"]).ok().stdout;
    assert!(pushed.contains("leave-running"), "{pushed}");
    assert_eq!(
        rules(),
        "active\nrules\n",
        "left running, its rules with it"
    );
    on("node3", "systemctl stop guard-rules.service");
}

#[test]
fn an_on_removal_that_means_nothing_is_refused_naming_the_field() {
    let mesh = Mesh::new();
    guard_module(&mesh, Some("keep"));
    let dir = mesh.dir.path().join("catalogue/guard");
    let refused = mesh.run(&["module", "check", crate::util::path_str(&dir)]);
    assert_ne!(refused.status, 0, "{}", refused.stdout);
    let said = format!("{}{}", refused.stdout, refused.stderr);
    assert!(said.contains("on-removal"), "{said}");
    assert!(said.contains("leave-running"), "{said}");
}
