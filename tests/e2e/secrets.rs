//! Secrets stay root's and units are written safely (item 6), on a lab machine:
//! with the declared `secret-environment` exception, a process and a container get a generated
//! password in their environment, and the user `nobody` on the machine finds it nowhere that
//! `systemctl`, `ps`, `/proc`, the unit files, the helper's state or `docker` offer. A process for
//! a user the machine does not have fails before its unit is written; a setting that would inject
//! unit-file lines is refused before anything is sent.
//!
//! Each test first pushes an empty declaration to every machine, which undoes what an earlier
//! run left.

use crate::container::IMAGE;
use crate::requirements::inventory_secret;
use crate::util::{Mesh, node_result, on, path_str};

/// Provides a generated password and nothing else.
const KEEPER: &str = r#"{
  "name": "keeper", "version": "1", "description": "Provides a password.",
  "provides": [{"name": "db", "fields": {"password": {"type": "string", "secret": true, "generate": true}}}],
  "resources": []
}"#;

/// Software that reads its password only from its environment: a process (as `daemon`, so
/// systemd must read the root-only file before it drops privileges) and a container. `TRICKY`
/// holds every character systemd's and Docker's env-file formats treat specially.
const EXCUSED: &str = r#"{
  "name": "excused", "version": "1", "description": "Reads its password from its environment.",
  "requires": [
    {"name": "db", "kind": "module", "provision": "db", "fields": {"password": {"type": "string", "secret": true}}},
    {"name": "work", "kind": "host", "directory": {"owner": "daemon", "mode": "0750"}}
  ],
  "resources": [
    {"kind": "process", "description": "needs it in env", "command": ["/usr/bin/sleep", "infinity"],
     "user": "daemon", "working-directory": "${work.path}",
     "environment": {"DB_PASSWORD": "${db.password}",
                     "TRICKY": " a \"quoted\" \\back `tick` $HOME $${X} 100% 'single' #hash\nsecond line\tend "},
     "secret-environment": "the vendor's binary reads no file"},
    {"kind": "container", "name": "box", "image": "mesh-sleeper", "command": ["/usr/bin/sleep", "infinity"],
     "environment": {"DB_PASSWORD": "${db.password}", "TRICKY": " a \"quoted\" \\back $HOME $${X} 'single' #hash\tend "},
     "secret-environment": "the vendor's image reads no file"}
  ]
}"#;

/// What `TRICKY` must be in the process, and in the container, exactly.
const TRICKY: &str =
    " a \"quoted\" \\back `tick` $HOME ${X} 100% 'single' #hash\nsecond line\tend ";
const TRICKY_BOX: &str = " a \"quoted\" \\back $HOME ${X} 'single' #hash\tend ";

/// A process for a user the machine does not have.
const TYPO: &str = r#"{
  "name": "typo", "version": "1", "description": "Runs as a misspelled user.",
  "resources": [{"kind": "process", "description": "runs as nobdy", "command": ["/usr/bin/sleep", "infinity"],
                 "user": "nobdy"}]
}"#;

/// A process whose command reads a setting.
const SAYER: &str = r#"{
  "name": "sayer", "version": "1", "description": "Says a word.",
  "settings": [{"name": "word", "type": "string", "meaning": "What it says.", "default": "hi", "cost": "restart"}],
  "resources": [{"kind": "process", "description": "says it", "command": ["/usr/bin/echo", "${word}"]}]
}"#;

/// A description that would add a line to its unit file, run as root at every start.
const INJECTOR: &str = r#"{
  "name": "injector", "version": "1", "description": "Adds a line to its unit.",
  "resources": [{"kind": "process", "description": "x\nExecStartPre=/usr/bin/touch /evil",
                 "command": ["/usr/bin/sleep", "infinity"]}]
}"#;

const ENV_FILE: &str = "/var/lib/mesh/env/excused.service.process.env";

/// Every way `nobody` has to look, with errors kept in the output (they must not leak either).
const PROBE: &str = "setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '
  echo \"whoami: $(id -u)\"
  systemctl show excused.service; systemctl cat excused.service
  find /etc/systemd /var/lib/mesh /run/systemd -type f -exec cat {} + 
  ps -eo args
  cat /proc/*/environ; cat /proc/*/cmdline
  docker inspect excused-box; echo \"docker inspect exit $?\"
  docker container inspect --format \"{{.Config.Env}}\" excused-box
' 2>&1; true";

/// The environment of a running process, as root reads it, by variable.
fn environment(node: &str, pid: &str) -> Vec<String> {
    on(node, &format!("cat /proc/{pid}/environ"))
        .split('\0')
        .map(str::to_string)
        .collect()
}

#[test]
fn nobody_on_the_machine_finds_an_excused_secret_anywhere() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("keeper", KEEPER, &[]);
    mesh.module("excused", EXCUSED, &[]);
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        &format!("docker rm -f excused-box >/dev/null 2>&1; {IMAGE}"),
    );
    mesh.run(&["assign", "keeper", "node1"]).ok();
    mesh.run(&["assign", "excused", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();

    // the generated password, as the inventory keeps it
    let secret = inventory_secret(&mesh);
    assert_eq!(secret.len(), 32, "{secret}");
    // sealed in the inventory, environment values included
    crate::sealed::assert_nowhere_in_clear(&mesh, std::slice::from_ref(&secret));
    assert_eq!(
        on("node1", "systemctl is-active excused.service").trim(),
        "active"
    );

    // nobody looks everywhere: the probe works (it sees the unit and the processes), the secret
    // is in none of it, and Docker's socket is not nobody's
    let seen = on("node1", PROBE);
    assert!(seen.contains("whoami: 65534"), "{seen}");
    assert!(seen.contains("Description=needs it in env"), "{seen}");
    assert!(seen.contains("sleep infinity"), "{seen}");
    assert!(seen.contains("permission denied"), "{seen}");
    assert!(!seen.contains("docker inspect exit 0"), "{seen}");
    assert!(!seen.contains(&secret), "nobody found the secret:\n{seen}");
    assert!(
        seen.contains(&format!("EnvironmentFile={ENV_FILE}")),
        "{seen}"
    );

    // root reads it in the root-only environment file
    assert_eq!(
        on("node1", &format!("stat -c '%a %U %G' {ENV_FILE}")).trim(),
        "600 root root"
    );
    let file = on("node1", &format!("cat {ENV_FILE}"));
    assert!(
        file.lines()
            .any(|l| l == format!("DB_PASSWORD=\"{secret}\"")),
        "{file}"
    );

    // the process has it, and TRICKY arrived exactly through systemd's quoting
    let pid = on("node1", "systemctl show -p MainPID --value excused.service");
    let env = environment("node1", pid.trim());
    assert!(env.contains(&format!("DB_PASSWORD={secret}")), "{env:?}");
    assert!(env.contains(&format!("TRICKY={TRICKY}")), "{env:?}");
    assert_eq!(
        on("node1", &format!("stat -c %U /proc/{}", pid.trim())).trim(),
        "daemon"
    );
    // so has the container, and its env-file is gone once Docker has it
    let boxed = on(
        "node1",
        "docker inspect --format '{{range .Config.Env}}{{println .}}{{end}}' excused-box",
    );
    assert!(
        boxed.lines().any(|l| l == format!("DB_PASSWORD={secret}")),
        "{boxed}"
    );
    assert!(
        boxed.lines().any(|l| l == format!("TRICKY={TRICKY_BOX}")),
        "{boxed}"
    );
    assert_eq!(
        on("node1", "ls /var/lib/mesh/env").trim(),
        "excused.service.process.env"
    );

    // undeclared: the environment file goes with the unit
    mesh.run(&["unassign", "excused", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        &format!("test ! -e {ENV_FILE} && test ! -e /etc/systemd/system/excused.service"),
    );
    assert_eq!(
        on("node1", "docker ps -aq --filter name=^excused-box$").trim(),
        ""
    );
}

#[test]
fn a_process_for_a_user_the_machine_does_not_have_fails_before_its_unit_is_written() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("typo", TYPO, &[]);
    mesh.run(&["push", "--all"]).ok();
    // a user the machine does not have: that resource fails with the reason, no unit is left
    mesh.run(&["assign", "typo", "node1"]).ok();
    let pushed = mesh.run(&["push", "node1", "--json"]).code(2).json();
    let node = node_result(&pushed, "node1");
    let failed = node["report"]["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|o| o["id"] == "typo:process:typo.service"))
        .unwrap_or_else(|| panic!("no outcome for typo: {pushed}"));
    assert_eq!(failed["state"], "failed", "{failed}");
    let said = failed["detail"].as_str().unwrap_or_default();
    assert!(said.contains("no user \"nobdy\" on this machine"), "{said}");
    on("node1", "test ! -e /etc/systemd/system/typo.service");
    let text = mesh.run(&["push", "node1"]).code(2).stdout;
    assert!(text.contains("no user \"nobdy\" on this machine"), "{text}");
    mesh.run(&["unassign", "typo", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

#[test]
fn a_setting_that_would_add_a_line_to_a_unit_file_is_refused_before_anything_is_sent() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("sayer", SAYER, &[]);
    mesh.run(&["push", "--all"]).ok();
    // a setting that would add a line to a unit file: refused by the plan, nothing sent
    mesh.run(&["assign", "sayer", "node1"]).ok();
    mesh.run(&[
        "settings",
        "set",
        "sayer",
        "word=hi\nExecStartPre=/usr/bin/touch /evil",
    ])
    .ok();
    let refused = mesh.run(&["push", "node1"]).code(1).stderr;
    assert!(
        refused.contains("process sayer.service, as its settings fill it in: command[1] holds a control character (\\u{a})"),
        "{refused}"
    );
    on(
        "node1",
        "test ! -e /etc/systemd/system/sayer.service && test ! -e /evil",
    );
    // a description that would add a line: refused when the module is checked, naming the field
    let dir = mesh.module("injector", INJECTOR, &[]);
    let refused = mesh
        .run(&["module", "check", path_str(&dir.join("injector"))])
        .code(1)
        .stderr;
    assert!(
        refused
            .contains("resources[0].description: description holds a control character (\\u{a})"),
        "{refused}"
    );
}
