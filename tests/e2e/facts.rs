//! Facts on a lab machine: an assignment whose template reads one is held until the machine has
//! said them (`mesh check` asks), `mesh facts` shows what it said, the plan's diff renders them and
//! the push writes them; a fact that moves on the machine shows in the next plan with what
//! reads it, and the push after writes the new value.

use crate::util::{Mesh, address, on};

const NODE: &str = "node2";
const FILE: &str = "/etc/mesh-facts-test.conf";

const SIZED: &str = r#"{
  "name": "sized", "version": "1", "description": "A file sized from the machine's facts.",
  "requires": [{"name": "host", "kind": "host", "fact": {}}],
  "resources": [
    {"kind": "file", "path": "/etc/mesh-facts-test.conf", "template": "sized.conf"}
  ]
}"#;

const TEMPLATE: &str = "os ${host.os.id} ${host.os.version} ${host.os.codename} ${host.arch}\n\
cache ${host.memory.mib} cpus ${host.cpus}\nname ${host.hostname}\nlisten ${host.ipv4:join(\",\")}\n";

/// Puts the machine's hostname back however the test ends: other tests share the machine.
struct Hostname(String);

impl Drop for Hostname {
    fn drop(&mut self) {
        on(NODE, &format!("hostname {}", self.0));
    }
}

fn expected(f: &serde_json::Value) -> String {
    let ipv4: Vec<&str> = f["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| {
            i["ipv4"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
        })
        .collect();
    format!(
        "os {} {} {} {}\ncache {} cpus {}\nname {}\nlisten {}\n",
        f["os"]["id"].as_str().unwrap(),
        f["os"]["version"].as_str().unwrap(),
        f["os"]["codename"].as_str().unwrap(),
        f["arch"].as_str().unwrap(),
        f["memory"]["mib"],
        f["cpus"],
        f["hostname"].as_str().unwrap(),
        ipv4.join(",")
    )
}

/// Each interface's name, IPv4 and IPv6 addresses, as the facts say them.
fn interfaces_of(f: &serde_json::Value) -> Vec<(String, Vec<String>, Vec<String>)> {
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    f["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let name = i["name"].as_str().unwrap_or_default().to_string();
            (name, strings(&i["ipv4"]), strings(&i["ipv6"]))
        })
        .collect()
}

/// The same, as `ip -j addr` on the machine says them: loopback and addresses of link or host
/// scope left out.
fn interfaces_by_ip() -> Vec<(String, Vec<String>, Vec<String>)> {
    let ip: serde_json::Value = serde_json::from_str(&on(NODE, "ip -j addr show")).unwrap();
    ip.as_array()
        .unwrap()
        .iter()
        .filter(|l| {
            !l["flags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "LOOPBACK")
        })
        .map(|l| {
            let of = |family: &str| -> Vec<String> {
                l["addr_info"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|a| {
                        a["family"] == family && a["scope"] != "link" && a["scope"] != "host"
                    })
                    .map(|a| a["local"].as_str().unwrap().to_string())
                    .collect()
            };
            let name = l["ifname"].as_str().unwrap().to_string();
            (name, of("inet"), of("inet6"))
        })
        .collect()
}

#[test]
fn a_template_reads_the_machines_facts_once_said_and_a_moved_fact_shows_in_the_plan() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let _restore = Hostname(on(NODE, "hostname").trim().to_string());
    on(NODE, &format!("rm -f {FILE}"));
    mesh.module("sized", SIZED, &[("sized.conf", TEMPLATE)]);
    mesh.run(&["assign", "sized", NODE]).ok();

    // never asked: held back with the way to ask it, nothing rendered empty
    let held = mesh.run(&["plan", NODE]);
    assert_ne!(held.status, 0, "{}", held.stdout);
    assert!(held.stdout.contains("sized is HELD"), "{}", held.stdout);
    assert!(
        held.stdout.contains("has not said its facts yet"),
        "{}",
        held.stdout
    );
    assert!(
        held.stdout.contains(&format!("`mesh check {NODE}`")),
        "{}",
        held.stdout
    );
    let none = mesh.run(&["facts", NODE, "--json"]).ok().json();
    assert!(none[0]["facts"].is_null(), "{none}");

    // what an earlier test's inventory left on the shared machine shows as a change this
    // inventory would make (exit 4): the facts are recorded all the same
    let checked = mesh.run(&["check", NODE]);
    assert!(
        matches!(checked.status, 0 | 4),
        "{}\n{}",
        checked.stdout,
        checked.stderr
    );
    let facts = mesh.run(&["facts", NODE, "--json"]).ok().json();
    let f = &facts[0]["facts"];
    assert_eq!(f["os"]["id"], "debian", "{facts}");
    assert_eq!(f["os"]["codename"], "bookworm", "{facts}");
    assert_eq!(f["arch"], "x86_64", "{facts}");
    assert!(f["memory"]["mib"].as_u64().unwrap() > 64, "{facts}");
    assert!(f["cpus"].as_u64().unwrap() >= 1, "{facts}");
    let on_machine = on(
        NODE,
        "ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1",
    );
    let addresses: Vec<&str> = on_machine.lines().collect();
    assert!(addresses.contains(&address(NODE).as_str()), "{on_machine}");
    // the helper asks the kernel itself (rtnetlink): what it says is what `ip` says
    assert_eq!(interfaces_of(f), interfaces_by_ip(), "{facts}");
    let text = mesh.run(&["facts", NODE]).ok().stdout;
    assert!(
        text.contains("os.codename") && text.contains("\"bookworm\""),
        "{text}"
    );

    let want = expected(f);
    let plan = mesh.run(&["plan", NODE, "--diff"]).ok().stdout;
    assert!(plan.contains("+cache "), "{plan}");
    assert!(plan.contains("bookworm"), "{plan}");
    mesh.run(&["push", NODE]).ok();
    assert_eq!(on(NODE, &format!("cat {FILE}")), want);

    // a fact that moves on the machine: the check sees it, the plan says what reads it
    on(NODE, "hostname mesh-renamed");
    let plan = mesh.run(&["plan", NODE]).ok().stdout;
    assert!(!plan.contains("moved since"), "{plan}");
    mesh.run(&["check", NODE]).ok();
    let plan = mesh.run(&["plan", NODE, "--diff"]).ok().stdout;
    assert!(
        plan.contains("fact hostname moved since the last push:")
            && plan.contains("-> \"mesh-renamed\" (read by sized)"),
        "{plan}"
    );
    assert!(plan.contains("+name mesh-renamed"), "{plan}");
    mesh.run(&["push", NODE]).ok();
    assert!(on(NODE, &format!("cat {FILE}")).contains("name mesh-renamed\n"));
    let plan = mesh.run(&["plan", NODE]).ok().stdout;
    assert!(!plan.contains("moved since"), "{plan}");
    assert!(plan.contains("no changes"), "{plan}");

    mesh.run(&["unassign", "sized", NODE]).ok();
    mesh.run(&["push", NODE]).ok();
    assert_eq!(
        on(NODE, &format!("test -e {FILE} && echo there || echo gone")),
        "gone\n"
    );
}
