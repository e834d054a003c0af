//! The machine keeps its last generations: root on the machine lists them
//! with `mesh-host generations` and takes the machine back to one with `mesh-host rollback GEN`,
//! no operator and no network involved; the operator's next push, planned against what it last
//! saw, is refused as stale until `mesh check` has seen the rollback, and the check says it.

use crate::util::{Mesh, invocation, node_result, on, ssh};

/// A file and a process, both made from the setting `word`.
const GENROLL: &str = r#"{
  "name": "genroll", "version": "1", "description": "A file and a process that name a word.",
  "settings": [{"name": "word", "type": "string", "meaning": "The word.", "default": "none",
                "cost": "restart"}],
  "resources": [
    {"kind": "file", "path": "/etc/genroll.conf", "template": "genroll.conf"},
    {"kind": "process", "description": "says its word",
     "command": ["/bin/sh", "-c", "echo ${word} >/run/genroll.word; exec sleep infinity"]}
  ]
}"#;

/// The helper this mesh uploaded, as it lies on the machine.
fn helper_there() -> String {
    let sum = std::process::Command::new("sha256sum")
        .arg(crate::helper::helper())
        .output()
        .expect("sha256sum runs");
    let sum = String::from_utf8_lossy(&sum.stdout);
    let sha = sum.split_whitespace().next().expect("a digest");
    format!("/var/lib/mesh/bin/mesh-host-{sha}")
}

/// Pushes `word` and says the generation it made.
fn pushed(mesh: &Mesh, word: &str) -> u64 {
    mesh.run(&["settings", "set", "genroll", &format!("word={word}")])
        .ok();
    let pushed = mesh.run(&["--json", "push", "node1"]).ok().json();
    let node1 = node_result(&pushed, "node1");
    node1["report"]["generation"]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("no generation: {node1}"))
}

/// The line of `mesh-host generations` for generation `number`.
fn listed(listing: &str, number: u64) -> Option<String> {
    listing
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&number.to_string()))
        .map(str::to_string)
}

#[test]
fn root_on_the_machine_rolls_back_to_a_kept_generation_and_the_operators_next_contact_sees_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("genroll", GENROLL, &[("genroll.conf", "word ${word}\n")]);
    mesh.run(&["assign", "genroll", "node1"]).ok();
    let first = pushed(&mesh, "one");
    let as_first = on("node1", "cat /etc/genroll.conf");
    assert_eq!(as_first, "word one\n");
    let numbers = [first, pushed(&mesh, "two"), pushed(&mesh, "three")];
    assert_eq!(numbers, [first, first + 1, first + 2]);
    let helper = helper_there();
    let listing = on("node1", &format!("{helper} generations"));
    for number in numbers {
        let line = listed(&listing, number).unwrap_or_else(|| panic!("{number}: {listing}"));
        assert_eq!(
            line.ends_with("(current)"),
            number == first + 2,
            "{listing}"
        );
    }

    // not root, or a generation the machine does not keep: refused, nothing changed
    let nobody = ssh(
        "node1",
        &format!("setpriv --reuid=65534 --regid=65534 --clear-groups {helper} rollback {first}"),
    );
    assert_eq!(nobody.status, 2, "{}{}", nobody.stdout, nobody.stderr);
    assert!(nobody.stderr.contains("only root"), "{}", nobody.stderr);
    let unknown = ssh("node1", &format!("{helper} rollback 999999"));
    assert_eq!(unknown.status, 2, "{}", unknown.stderr);
    assert!(
        unknown
            .stderr
            .contains("keeps no generation 999999: it keeps ")
            && unknown
                .stderr
                .contains(&numbers.map(|n| n.to_string()).join(", ")),
        "{}",
        unknown.stderr
    );
    assert_eq!(on("node1", "cat /etc/genroll.conf"), "word three\n");

    // root at the console takes the machine back to the first
    let before = invocation("node1", "genroll.service");
    let rolled = on("node1", &format!("{helper} rollback {first}"));
    let rolled_to = first + 3;
    assert!(
        rolled.contains(&format!(
            "rolled back to generation {first}: the machine is at generation {rolled_to} now"
        )),
        "{rolled}"
    );
    assert_eq!(on("node1", "cat /etc/genroll.conf"), as_first);
    assert_eq!(on("node1", "cat /run/genroll.word"), "one\n");
    assert_ne!(
        invocation("node1", "genroll.service"),
        before,
        "the process runs generation {first}'s command only once restarted"
    );
    let listing = on("node1", &format!("{helper} generations"));
    let line = listed(&listing, rolled_to).unwrap_or_else(|| panic!("{listing}"));
    assert!(
        line.ends_with(&format!("rolled back to {first} on the machine  (current)")),
        "{listing}"
    );
    assert!(!listed(&listing, first + 2).unwrap().ends_with("(current)"));

    // the operator planned against the third: stale, until a check has seen the rollback
    let refused = mesh.run(&["push", "node1"]).code(2);
    for words in [
        "node1: FAILED (stale)".to_string(),
        format!("generation {rolled_to}, rolled back on the machine to generation {first}"),
    ] {
        assert!(
            refused.stdout.contains(&words),
            "{words}: {}",
            refused.stdout
        );
    }
    assert_eq!(on("node1", "cat /etc/genroll.conf"), as_first);

    let checked = mesh.run(&["check", "node1"]).code(4).stdout;
    assert!(
        checked.contains(&format!(
            "node1: at generation {rolled_to}, rolled back to {first} on the machine"
        )),
        "{checked}"
    );
    let json = mesh.run(&["--json", "check", "node1"]).code(4).json();
    let generation = &node_result(&json, "node1")["report"]["generation"];
    assert_eq!(generation["number"], rolled_to, "{generation}");
    assert_eq!(generation["rolled_back_to"], first, "{generation}");
    let plan = mesh.run(&["plan", "node1"]).stdout;
    assert!(
        plan.contains("/etc/genroll.conf") && plan.contains("genroll.service"),
        "the plan is made against generation {first}: {plan}"
    );

    let after = mesh.run(&["--json", "push", "node1"]).ok().json();
    let made = &node_result(&after, "node1")["report"]["generation"];
    assert_eq!(made["number"], rolled_to + 1, "{made}");
    assert_eq!(on("node1", "cat /etc/genroll.conf"), "word three\n");
    assert_eq!(on("node1", "cat /run/genroll.word"), "three\n");
    mesh.run(&["unassign", "genroll", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}

#[test]
fn the_generations_a_machine_keeps_hold_its_secrets_sealed_only_root_reads_them_and_they_apply_again()
 {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let push = crate::sealed::kv_and_its_client(&mesh);
    let secrets = crate::sealed::secrets(&mesh);
    assert!(!secrets.is_empty());
    let dir = "/var/lib/mesh/generations";
    for node in ["node1", "node2"] {
        let modes = on(
            node,
            &format!("stat -c '%U %a' {dir}; stat -c '%U %a' {dir}/*.json"),
        );
        let mut lines = modes.lines();
        assert_eq!(lines.next(), Some("root 700"), "{node}: {modes}");
        assert!(lines.all(|l| l == "root 600"), "{node}: {modes}");
        let kept = on(node, &format!("cat {dir}/*.json"));
        assert!(
            kept.contains("AGE ENCRYPTED FILE"),
            "{node}: nothing sealed kept"
        );
        for secret in &secrets {
            assert!(
                !kept.contains(secret.as_str()),
                "{node}: a secret is kept in clear"
            );
        }
    }

    // what was sealed opens again with the host key: a rollback to the machine's own generation
    // finds the same bytes, and changes nothing
    let node1: serde_json::Value = serde_json::from_str(&push).expect("the push's --json");
    let current = node_result(&node1, "node1")["report"]["generation"]["number"]
        .as_u64()
        .expect("a generation");
    let auth = "sha256sum /srv/mesh/kv/data/auth.conf";
    let before = on("node1", auth);
    let rolled = on("node1", &format!("{} rollback {current}", helper_there()));
    assert!(
        rolled.starts_with(&format!(
            "nothing changed: the machine has what generation {current} declares already"
        )) && !rolled.contains("FAILED"),
        "{rolled}"
    );
    assert_eq!(on("node1", auth), before);

    mesh.run(&["unassign", "kv-client", "node2"]).ok();
    mesh.run(&["unassign", "kv", "node1"]).ok();
    mesh.run(&["push", "--all"]).ok();
}

/// The number of the generation `mesh-host generations` marks current on `node`, and the
/// highest it lists (0: none).
fn current_and_highest(node: &str) -> (u64, u64) {
    let listing = on(node, &format!("{} generations", helper_there()));
    let number = |l: &str| {
        l.split_whitespace()
            .next()
            .and_then(|w| w.parse::<u64>().ok())
    };
    let current = listing
        .lines()
        .filter(|l| l.ends_with("(current)"))
        .find_map(number);
    let highest = listing.lines().filter_map(number).max();
    assert_eq!(current.is_some(), highest.is_some(), "{listing}");
    (current.unwrap_or(0), highest.unwrap_or(0))
}

#[test]
fn a_change_reverted_at_its_deadline_is_never_kept_and_a_confirmed_one_is() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    crate::confirm::unconfirmed_on_node3(&mesh, "8");
    crate::confirm::reverted_on_node3_within(
        std::time::Duration::from_secs(8 + 15),
        "node3 did not revert by itself",
    );
    let (current, highest) = current_and_highest("node3");
    assert_eq!(
        highest,
        current,
        "the reverted generation {} was kept",
        current + 1
    );

    mesh.run(&["check", "node3"]).code(4);
    let pushed = mesh.run(&["--json", "push", "node3"]).ok().json();
    let made = node_result(&pushed, "node3")["report"]["generation"]["number"].as_u64();
    assert_eq!(made, Some(current + 1), "{pushed}");
    assert_eq!(current_and_highest("node3"), (current + 1, current + 1));
    crate::confirm::take_sshd_off(&mesh, &["node3"]);
}

/// A generation the machine cannot keep is said in the push's result and in `mesh history`,
/// not only on the helper's stderr; the change itself is applied.
#[test]
fn a_generation_the_machine_cannot_keep_is_said_in_the_result_and_the_history() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("genroll", GENROLL, &[("genroll.conf", "word ${word}\n")]);
    mesh.run(&["assign", "genroll", "node1"]).ok();
    pushed(&mesh, "room");
    // where the generations go is no directory: as a full disk, nothing can be written there
    on(
        "node1",
        "mv /var/lib/mesh/generations /var/lib/mesh/generations.kept && \
         touch /var/lib/mesh/generations",
    );
    mesh.run(&["settings", "set", "genroll", "word=full"]).ok();
    let push = mesh.run(&["--json", "push", "node1"]);
    let text_history = mesh.run(&["history", "node1"]).ok().stdout;
    on(
        "node1",
        "rm /var/lib/mesh/generations && mv /var/lib/mesh/generations.kept /var/lib/mesh/generations",
    );
    let json = push.ok().json();
    let not_kept = node_result(&json, "node1")["report"]["generation_not_kept"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        not_kept.contains("is not kept on the machine"),
        "the push's result says it: {json}"
    );
    assert!(
        text_history.contains("NOT KEPT on the machine"),
        "{text_history}"
    );
    assert_eq!(on("node1", "cat /etc/genroll.conf"), "word full\n");
    mesh.run(&["unassign", "genroll", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}
