//! The built-in `firewall` and `node-exporter` modules on lab machines: pushed, a setting changed
//! with the plan's diff and cost shown, and undeclared with the machine given back as found. The
//! firewall is confirmed over a new SSH connection, and one that shuts SSH out is reverted.

use crate::confirm::once_reachable;
use crate::util::{Mesh, node_result, on};

fn table(node: &str) -> String {
    on(node, "nft list table inet mesh 2>&1; true")
}

#[test]
fn the_firewall_is_confirmed_a_rule_set_that_shuts_ssh_out_is_reverted_and_others_are_kept() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    // a table of someone else's: the module never flushes the ruleset
    on(
        "node1",
        "nft delete table inet mesh 2>/dev/null; nft add table inet theirs",
    );
    let tables = on("node1", "nft list tables");
    assert!(tables.contains("table inet theirs"), "{tables}");
    mesh.run(&["assign", "firewall", "node1"]).ok();
    let push = mesh.run(&["--json", "push", "node1"]).ok().json();
    let node1 = node_result(&push, "node1");
    assert_eq!(node1["confirmation"], "confirmed", "{node1}");
    assert!(
        table("node1").contains("tcp dport 22 accept"),
        "{}",
        table("node1")
    );
    assert!(table("node1").contains("policy drop"));
    assert_eq!(
        on("node1", "echo in"),
        "in\n",
        "a new SSH connection gets in"
    );

    // a setting changed: the plan shows the rule's diff and the reload it costs
    mesh.run(&["settings", "set", "firewall", "tcp-ports=[22, 8080]"])
        .ok();
    let plan = mesh.run(&["plan", "node1", "--diff"]).ok().stdout;
    assert!(
        plan.contains("+\t\ttcp dport { 22, 8080 } accept"),
        "{plan}"
    );
    assert!(plan.contains("mesh-firewall.service"), "{plan}");
    assert!(plan.contains("reload"), "{plan}");
    println!("{plan}");
    let push = mesh.run(&["--json", "push", "node1"]).ok().json();
    assert_eq!(node_result(&push, "node1")["confirmation"], "confirmed");
    assert!(table("node1").contains("tcp dport { 22, 8080 } accept"));

    // SSH left out: mesh cannot get in again, the machine takes the rules back by itself
    mesh.run(&["settings", "set", "firewall", "tcp-ports=[8080]"])
        .ok();
    let push = mesh
        .run(&["--json", "push", "node1", "--confirm-timeout", "10"])
        .code(2)
        .json();
    let node1 = node_result(&push, "node1");
    assert_eq!(node1["outcome"], "reverted", "{node1}");
    let rules = once_reachable("node1", "nft list table inet mesh", 30);
    assert!(rules.contains("tcp dport { 22, 8080 } accept"), "{rules}");

    mesh.run(&["settings", "clear", "firewall"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert!(table("node1").contains("tcp dport 22 accept"));
    // undeclared: its table, unit and file gone; every other table (Docker's too) still there
    mesh.run(&["unassign", "firewall", "node1"]).ok();
    let off = mesh.run(&["push", "node1"]).ok();
    assert!(
        table("node1").contains("No such file or directory"),
        "{}",
        off.stdout
    );
    assert_eq!(on("node1", "nft list tables"), tables);
    assert_eq!(
        on(
            "node1",
            "ls /etc/systemd/system/mesh-firewall.service /etc/mesh-firewall.nft 2>/dev/null; \
             systemctl is-active mesh-firewall.service; true"
        ),
        "inactive\n"
    );
    on("node1", "nft delete table inet theirs");
}

fn metrics(node: &str, port: u16) -> String {
    on(
        node,
        &format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port} || exit 0; \
             printf 'GET /metrics HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3"
        ),
    )
}

const DEFAULTS: &str = "/etc/default/prometheus-node-exporter";

#[test]
fn the_node_exporter_answers_on_its_port_and_a_new_port_shows_in_the_plan_with_its_restart() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let found = on("node2", &format!("cat {DEFAULTS}"));
    mesh.run(&["assign", "node-exporter", "node2"]).ok();
    let push = mesh.run(&["push", "node2"]).ok();
    let answer = metrics("node2", 9100);
    assert!(
        answer.starts_with("HTTP/1.0 200"),
        "{answer}\n{}",
        push.stdout
    );
    assert!(
        answer.contains("node_processes_threads"),
        "the processes collector"
    );

    mesh.run(&["settings", "set", "node-exporter", "port=9101"])
        .ok();
    let plan = mesh.run(&["plan", "node2", "--diff"]).ok().stdout;
    assert!(
        plan.contains("~ node-exporter:file:/etc/default/prometheus-node-exporter"),
        "{plan}"
    );
    assert!(plan.contains("--web.listen-address=:9101"), "{plan}");
    assert!(plan.contains("restart"), "{plan}");
    println!("{plan}");
    let push = mesh.run(&["push", "node2"]).ok();
    assert!(
        metrics("node2", 9101).starts_with("HTTP/1.0 200"),
        "{}",
        push.stdout
    );
    assert_eq!(metrics("node2", 9100), "");

    // undeclared: the package's own file back, the exporter on its own port again
    mesh.run(&["unassign", "node-exporter", "node2"]).ok();
    let off = mesh.run(&["push", "node2"]).ok();
    assert_eq!(
        on("node2", &format!("cat {DEFAULTS}")),
        found,
        "{}",
        off.stdout
    );
    assert!(
        metrics("node2", 9100).starts_with("HTTP/1.0 200"),
        "{}",
        off.stdout
    );
}
