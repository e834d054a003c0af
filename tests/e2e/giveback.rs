//! Undeclaring gives the machine back as the mesh found it (seed 002), checked on a lab machine:
//! a replaced file byte for byte, a unit the mesh started stopped again, one that was running left
//! running, a process the mesh created gone with its files, a directory holding data kept, an empty
//! one removed, a package left installed; and a helper killed mid-apply converges on the next push
//! and still gives the original back.

use crate::util::{Mesh, invocation, node_result, on};

const KEEPER: &str = r#"{
  "name": "keeper", "version": "1", "description": "Everything the mesh gives back, on one machine.",
  "settings": [{"name": "greeting", "type": "string", "meaning": "What the worker says (at start).", "default": "hello", "cost": "restart"}],
  "requires": [
    {"name": "empty", "kind": "host", "directory": {}},
    {"name": "data", "kind": "host", "directory": {"mode": "0750"}}
  ],
  "resources": [
    {"kind": "package", "name": "mesh-test-tool"},
    {"kind": "file", "path": "/etc/issue", "template": "issue", "mode": "0644"},
    {"kind": "service", "unit": "mesh-idle.service", "state": "running", "enabled": true},
    {"kind": "service", "unit": "ssh.service", "state": "running"},
    {"kind": "process", "name": "worker", "description": "A worker that says its greeting",
     "command": ["/bin/sh", "run.sh"], "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

/// A local apt repository on the machine with one package, the only source apt knows while the
/// test runs (the lab has no route to a mirror).
const LOCAL_REPO: &str = r#"set -e
dpkg -r mesh-test-tool >/dev/null 2>&1 || true
d=$(mktemp -d); mkdir -p "$d/pkg/DEBIAN" "$d/pkg/usr/bin" /srv/mesh-repo
printf 'Package: mesh-test-tool\nVersion: 1.0\nArchitecture: all\nMaintainer: mesh tests <t@example.org>\nDescription: a package for the mesh tests\n' >"$d/pkg/DEBIAN/control"
printf '#!/bin/sh\necho mesh-test-tool\n' >"$d/pkg/usr/bin/mesh-test-tool"; chmod 755 "$d/pkg/usr/bin/mesh-test-tool"
dpkg-deb --build "$d/pkg" /srv/mesh-repo/mesh-test-tool_1.0_all.deb >/dev/null
cd /srv/mesh-repo
{ cat "$d/pkg/DEBIAN/control"; echo "Filename: ./mesh-test-tool_1.0_all.deb"
  echo "Size: $(stat -c %s mesh-test-tool_1.0_all.deb)"
  echo "SHA256: $(sha256sum mesh-test-tool_1.0_all.deb | cut -d' ' -f1)"; echo; } >Packages
[ -e /etc/apt/sources.list ] && mv /etc/apt/sources.list /etc/apt/sources.list.mesh-test
echo 'deb [trusted=yes] file:/srv/mesh-repo ./' >/etc/apt/sources.list.d/mesh-test.list
apt-get update -q >/dev/null 2>&1"#;

/// A unit the machine has, stopped and disabled, as the mesh will find it.
const IDLE_UNIT: &str = "printf '[Service]\\nExecStart=/bin/sleep infinity\\n[Install]\\nWantedBy=multi-user.target\\n' \
    >/etc/systemd/system/mesh-idle.service && systemctl daemon-reload \
    && systemctl disable --now mesh-idle.service 2>/dev/null; true";

fn fingerprint() -> String {
    on(
        "node1",
        "sha256sum /etc/issue | cut -d' ' -f1; stat -c '%u:%g %a' /etc/issue",
    )
}

#[test]
fn unassigning_gives_back_files_units_processes_and_directories_as_found() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module(
        "keeper",
        KEEPER,
        &[
            ("issue", "Managed by mesh.\n"),
            (
                "run.sh",
                "echo ${greeting} >/run/mesh-worker\nexec sleep infinity\n",
            ),
        ],
    );
    mesh.run(&["push", "--all"]).ok();
    on("node1", LOCAL_REPO);
    on("node1", IDLE_UNIT);
    on(
        "node1",
        "rm -rf /srv/mesh/keeper; chown 1:1 /etc/issue; chmod 0604 /etc/issue",
    );
    let original = fingerprint();
    mesh.run(&["assign", "keeper", "node1"]).ok();

    // the helper dies right after replacing /etc/issue (the test-only fault switch)
    on(
        "node1",
        "mkdir -p /var/lib/mesh && echo keeper:file:/etc/issue >/var/lib/mesh/fault",
    );
    let killed = mesh.run(&["push", "node1"]).code(2);
    assert!(killed.stdout.contains("node1: FAILED"), "{}", killed.stdout);
    assert_eq!(on("node1", "cat /etc/issue"), "Managed by mesh.\n");
    // the next push converges, and the machine then has nothing left to change
    mesh.run(&["push", "node1"]).ok();
    mesh.run(&["check", "node1"]).ok();

    assert_eq!(
        on("node1", "systemctl is-active mesh-idle.service").trim(),
        "active"
    );
    assert_eq!(
        on("node1", "systemctl is-enabled mesh-idle.service").trim(),
        "enabled"
    );
    assert_eq!(
        on("node1", "systemctl is-active keeper-worker.service").trim(),
        "active"
    );
    assert_eq!(on("node1", "cat /run/mesh-worker"), "hello\n");
    assert_eq!(on("node1", "mesh-test-tool").trim(), "mesh-test-tool");
    assert_eq!(
        on("node1", "stat -c %a /srv/mesh/keeper/data").trim(),
        "750"
    );

    // the process's bundle changed: it restarts and says the new greeting
    let worker = invocation("node1", "keeper-worker.service");
    mesh.run(&["settings", "set", "keeper", "greeting=bonjour"])
        .ok();
    let plan = mesh.run(&["plan", "node1"]).ok();
    assert!(
        plan.stdout
            .contains("~ keeper:process:keeper-worker.service (bundle; settings moved: greeting)"),
        "{}",
        plan.stdout
    );
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", "cat /run/mesh-worker"), "bonjour\n");
    assert_ne!(invocation("node1", "keeper-worker.service"), worker);

    // data arrives in one directory; then the module goes
    on("node1", "echo precious >/srv/mesh/keeper/data/precious");
    mesh.run(&["unassign", "keeper", "node1"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    for said in [
        "- keeper:process:keeper-worker.service — stops keeper-worker.service; deletes /etc/systemd/system/keeper-worker.service, /var/lib/mesh/bundles/keeper-worker",
        "- keeper:service:mesh-idle.service — stops mesh-idle.service",
        "- keeper:service:ssh.service — leaves the machine as it is",
        "- keeper:file:/etc/issue — restores /etc/issue as the host had it",
        "- keeper:directory:/srv/mesh/keeper/empty — deletes /srv/mesh/keeper/empty",
        "! mesh-idle.service will stop",
        "! keeper-worker.service will stop",
    ] {
        assert!(
            plan.contains(said),
            "the plan does not say {said:?}:\n{plan}"
        );
    }
    assert!(!plan.contains("ssh.service will stop"), "{plan}");

    let push = mesh.run(&["push", "node1", "--json"]).ok().json();
    let details: Vec<String> = node_result(&push, "node1")["report"]["resources"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|o| o["detail"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    let said = details.join("\n");
    for words in [
        "mesh-idle.service: disabled again, as the host found it; stopped again, as the host found it",
        "ssh.service: left running: it was running before the mesh",
        "stopped and disabled keeper-worker.service, removed its unit file and its bundle",
        "restored /etc/issue from the original",
        "kept /srv/mesh/keeper/data: it holds files",
        "removed /srv/mesh/keeper/empty: the mesh made it and it is empty",
        "left mesh-test-tool installed",
    ] {
        assert!(
            said.contains(words),
            "the report does not say {words:?}:\n{said}"
        );
    }

    // and the machine is as it was
    assert_eq!(
        fingerprint(),
        original,
        "/etc/issue byte for byte, owner and mode"
    );
    assert_eq!(
        on("node1", "systemctl is-active mesh-idle.service || true").trim(),
        "inactive"
    );
    assert_eq!(
        on("node1", "systemctl is-enabled mesh-idle.service || true").trim(),
        "disabled"
    );
    assert_eq!(
        on("node1", "systemctl is-active ssh.service").trim(),
        "active"
    );
    assert_eq!(
        on(
            "node1",
            "ls /etc/systemd/system/keeper-worker.service /var/lib/mesh/bundles/keeper-worker 2>&1 | grep -c 'No such file'"
        )
        .trim(),
        "2"
    );
    assert_eq!(
        on("node1", "systemctl is-active keeper-worker.service || true").trim(),
        "inactive"
    );
    assert_eq!(
        on(
            "node1",
            "test -e /srv/mesh/keeper/empty && echo there || echo gone"
        )
        .trim(),
        "gone"
    );
    assert_eq!(
        on("node1", "cat /srv/mesh/keeper/data/precious"),
        "precious\n"
    );
    assert!(on("node1", "dpkg -s mesh-test-tool").contains("Status: install ok installed"));

    on(
        "node1",
        "dpkg -r mesh-test-tool >/dev/null; rm -rf /srv/mesh/keeper /srv/mesh-repo /etc/apt/sources.list.d/mesh-test.list; \
         [ -e /etc/apt/sources.list.mesh-test ] && mv /etc/apt/sources.list.mesh-test /etc/apt/sources.list; \
         rm -f /etc/systemd/system/mesh-idle.service; systemctl daemon-reload; chown 0:0 /etc/issue; chmod 0644 /etc/issue",
    );
}
