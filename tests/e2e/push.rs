//! Pushing to lab machines: files written on every machine, a second push that changes
//! and uploads nothing, settings reaching every machine, a changed host key and a stopped machine
//! each failing alone.

use std::time::Instant;

use crate::util::{Mesh, NODES, node_result, on, states};

const MOTD: &str = "This machine is managed by mesh: changes made by hand may be undone.\nContact: the operators\n";

#[test]
fn a_push_writes_every_machine_and_a_second_push_changes_and_uploads_nothing() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // a machine that has never seen this helper gets it uploaded once
    on("node1", "rm -rf /var/lib/mesh/bin");
    mesh.run(&["assign", "motd", "node1", "node2", "node3"])
        .ok();

    let first = mesh.run(&["push", "--all", "--json"]).ok().json();
    assert_eq!(node_result(&first, "node1")["uploaded"], true, "{first}");
    for node in NODES {
        let r = node_result(&first, node);
        assert_eq!(r["outcome"], "applied", "{r}");
        assert_eq!(on(node, "cat /etc/motd"), MOTD, "{node}'s /etc/motd");
        assert_eq!(
            on(node, "stat -c '%U:%G %a' /etc/motd").trim(),
            "root:root 644"
        );
    }
    let mtime = on("node2", "stat -c %Y.%y /etc/motd");

    let second = mesh.run(&["push", "--all", "--json"]).ok().json();
    for node in NODES {
        let r = node_result(&second, node);
        assert_eq!(r["outcome"], "applied", "{r}");
        assert_eq!(
            r["uploaded"], false,
            "{node}: the helper was uploaded again"
        );
        let st = states(r);
        assert!(
            !st.is_empty() && st.iter().all(|(_, s)| s == "unchanged"),
            "{node}: {st:?}"
        );
    }
    assert_eq!(
        on("node2", "stat -c %Y.%y /etc/motd"),
        mtime,
        "an unchanged file was rewritten"
    );

    // the plan now says nothing would change, and the history holds both pushes
    let plan = mesh.run(&["plan", "--all"]).ok();
    assert_eq!(
        plan.stdout.matches("no changes").count(),
        3,
        "{}",
        plan.stdout
    );
    let history = mesh.run(&["history", "node1"]).ok();
    assert_eq!(
        history.stdout.matches("applied").count(),
        2,
        "{}",
        history.stdout
    );
}

#[test]
fn a_changed_setting_changes_the_file_on_every_machine() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1", "node2", "node3"])
        .ok();
    mesh.run(&["push", "--all"]).ok();

    let set = mesh
        .run(&["settings", "set", "motd", "contact=ops@example.org"])
        .ok();
    for node in NODES {
        assert!(
            set.stdout.contains(&format!("motd on {node}: contact")),
            "reach misses {node}:\n{}",
            set.stdout
        );
    }
    let plan = mesh.run(&["plan", "--all", "--diff"]).ok();
    assert!(
        plan.stdout.contains("+Contact: ops@example.org"),
        "{}",
        plan.stdout
    );
    let pushed = mesh.run(&["push", "--all", "--json"]).ok().json();
    for node in NODES {
        assert_eq!(
            states(node_result(&pushed, node)),
            vec![("motd:file:/etc/motd".to_string(), "changed".to_string())]
        );
        assert!(
            on(node, "cat /etc/motd").contains("Contact: ops@example.org\n"),
            "{node}"
        );
    }
}

#[test]
fn a_machine_whose_host_key_changed_is_refused_while_the_others_are_pushed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1", "node2", "node3"])
        .ok();
    let pinned = mesh.run(&["node", "show", "node2"]).ok().stdout;
    let pinned = pinned
        .lines()
        .find(|l| l.starts_with("host key:"))
        .unwrap_or_default()
        .replace("host key:", "");
    let pinned = pinned.trim().to_string();

    // node2 is "rebuilt": it gets a new ed25519 host key
    on(
        "node2",
        "cp -a /etc/ssh/ssh_host_ed25519_key /root/hk && cp -a /etc/ssh/ssh_host_ed25519_key.pub /root/hk.pub \
        && rm /etc/ssh/ssh_host_ed25519_key* && ssh-keygen -q -t ed25519 -N '' -f /etc/ssh/ssh_host_ed25519_key \
        && systemctl restart ssh",
    );
    let offered = crate::util::host_fingerprint("node2");

    let run = mesh.run(&["push", "--all", "--json"]).code(2);
    let results = run.json();
    // put node2's own key back before asserting, so a failure here leaves the lab usable
    on(
        "node2",
        "mv /root/hk /etc/ssh/ssh_host_ed25519_key && mv /root/hk.pub /etc/ssh/ssh_host_ed25519_key.pub && systemctl restart ssh",
    );

    let refused = node_result(&results, "node2");
    assert_eq!(refused["kind"], "host-key", "{refused}");
    let reason = refused["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(&pinned) && reason.contains(&offered),
        "both fingerprints ({pinned}, {offered}) in: {reason}"
    );
    assert_eq!(node_result(&results, "node1")["outcome"], "applied");
    assert_eq!(node_result(&results, "node3")["outcome"], "applied");
    // and nothing reached node2
    let again = mesh.run(&["history", "node2"]).ok().stdout;
    assert!(again.contains("HOST KEY CHANGED"), "{again}");
}

#[test]
fn a_stopped_machine_fails_as_unreachable_in_bounded_time_while_the_others_succeed() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1", "node2", "node3"])
        .ok();
    mesh.run(&["lab", "stop", "node3"]).ok();
    let started = Instant::now();
    let run = mesh.run(&["push", "--all", "--connect-timeout", "3", "--json"]);
    let took = started.elapsed();
    mesh.run(&["lab", "start", "node3"]).ok();

    let results = run.code(2).json();
    let down = node_result(&results, "node3");
    assert_eq!(down["kind"], "unreachable", "{down}");
    assert!(
        down["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("node3: unreachable"),
        "{down}"
    );
    assert_eq!(node_result(&results, "node1")["outcome"], "applied");
    assert_eq!(node_result(&results, "node2")["outcome"], "applied");
    // bounded: a 3 s connect limit, not the kernel's minutes-long TCP retry
    assert!(took.as_secs() < 60, "the push took {took:?}");
}

#[test]
fn unassigning_the_last_module_sends_an_empty_declaration_and_restores_the_original() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // start from a machine the mesh has given everything back on
    mesh.run(&["push", "node1"]).ok();
    let before = on("node1", "sha256sum /etc/motd; stat -c '%u:%g %a' /etc/motd");

    mesh.run(&["assign", "motd", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", "cat /etc/motd"), MOTD);

    mesh.run(&["unassign", "motd", "node1"]).ok();
    let plan = mesh.run(&["plan", "node1"]).ok();
    assert!(
        plan.stdout.contains("- motd:file:/etc/motd"),
        "{}",
        plan.stdout
    );
    let pushed = mesh.run(&["push", "node1", "--json"]).ok().json();
    assert_eq!(
        states(node_result(&pushed, "node1")),
        vec![("motd:file:/etc/motd".to_string(), "removed".to_string())]
    );
    assert_eq!(
        on("node1", "sha256sum /etc/motd; stat -c '%u:%g %a' /etc/motd"),
        before,
        "the original came back"
    );
}

#[test]
fn trust_pins_only_the_key_the_machine_offers() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let real = crate::util::host_fingerprint("node1");
    // the lab's own record of the address: the machine has docker0 too
    let address = crate::util::address("node1");
    // one machine is one node: node1's entry makes way for the unpinned one
    mesh.run(&["node", "remove", "node1"]).ok();
    mesh.run(&["node", "add", "fresh", "--address", &address])
        .ok();
    // not pinned: refused, naming the key and the command that pins it
    mesh.run(&["assign", "motd", "fresh"]).ok();
    let refused = mesh.run(&["push", "fresh"]).code(2);
    assert!(
        refused
            .stdout
            .contains(&format!("mesh node trust fresh --fingerprint {real}")),
        "{}",
        refused.stdout
    );
    // a wrong fingerprint pins nothing; no terminal and no fingerprint pins nothing
    let wrong = mesh
        .run(&[
            "node",
            "trust",
            "fresh",
            "--fingerprint",
            "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        ])
        .code(1);
    assert!(wrong.stderr.contains(&real), "{}", wrong.stderr);
    mesh.run(&["node", "trust", "fresh"]).code(1);
    assert!(
        mesh.run(&["node", "show", "fresh"])
            .ok()
            .stdout
            .contains("host key:  not pinned")
    );
    mesh.run(&["node", "trust", "fresh", "--fingerprint", &real])
        .ok();
    assert!(
        mesh.run(&["node", "show", "fresh"])
            .ok()
            .stdout
            .contains(&real)
    );
}
