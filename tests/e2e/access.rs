//! The operator's shared data (issue 14, item 5), on a lab machine: a module requires read
//! access to a path the operator names (`mesh place`); the mesh never creates it (a missing one
//! fails the process, clearly), never chowns or chmods it, never removes it on unassign, and a
//! process given read access cannot write into it.

use crate::util::{Mesh, node_result, on, states};

/// A process that tries to write into the operator's data and notes how that went.
const READER: &str = r#"{
  "name": "reader", "version": "1", "description": "Reads the operator's media.",
  "requires": [{"name": "media", "kind": "operator", "access": "read"}],
  "resources": [{"kind": "process", "description": "tries to write the media",
                 "command": ["/bin/sh", "-c", "touch '${media.path}/from-process' 2>/run/reader.err; echo $? >/run/reader.rc; exec sleep infinity"]}]
}"#;

#[test]
fn the_operators_data_is_never_made_owned_or_removed_and_read_access_cannot_write() {
    let mesh = Mesh::new();
    let _machines = mesh.with_lab();
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        "rm -rf /srv/media /srv/no-media /run/reader.rc /run/reader.err; mkdir -p /srv/media; \
         echo song >/srv/media/song; chown -R 1234:1234 /srv/media; chmod 0751 /srv/media",
    );
    mesh.module("reader", READER, &[]);
    mesh.run(&["assign", "reader", "node1"]).ok();

    // the path is the operator's to name
    let refused = mesh.run(&["plan", "node1"]).code(1).stderr;
    assert!(
        refused.contains(
            "`mesh place reader node1 media=PATH` (the mesh never creates, owns or removes it)"
        ),
        "{refused}"
    );

    // a path that is not there fails the process on that node, and is not made
    mesh.run(&["place", "reader", "node1", "media=/srv/no-media"])
        .ok();
    let push = mesh.run(&["push", "node1", "--json"]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    let result = push.json();
    let report = &node_result(&result, "node1")["report"];
    let process = report["resources"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|r| r["id"] == "reader:process:reader.service")
        })
        .unwrap_or_else(|| panic!("no process in {report}"));
    assert_eq!(process["state"], "failed", "{process}");
    let detail = process["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("/srv/no-media is not on this machine")
            && detail.contains("never creates it"),
        "{detail}"
    );
    assert_eq!(on("node1", "test -e /srv/no-media; echo $?").trim(), "1");

    // the path that is there: read, never written, never chowned or chmodded
    mesh.run(&["place", "reader", "node1", "media=/srv/media"])
        .ok();
    let pushed = mesh.run(&["push", "node1", "--json"]).ok().json();
    assert!(
        states(node_result(&pushed, "node1"))
            .iter()
            .all(|(_, s)| s != "failed"),
        "{pushed}"
    );
    let mut rc = String::new();
    for _ in 0..20 {
        rc = on("node1", "cat /run/reader.rc 2>/dev/null; true");
        if !rc.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert_ne!(rc.trim(), "0", "the process wrote into read-only data");
    assert!(!rc.trim().is_empty(), "the process never ran");
    let err = on("node1", "cat /run/reader.err");
    assert!(err.contains("Read-only file system"), "{err}");
    assert_eq!(
        on("node1", "test -e /srv/media/from-process; echo $?").trim(),
        "1"
    );
    let as_found = "1234:1234 751\n1234:1234 644 song\n";
    let look = "stat -c '%u:%g %a' /srv/media; stat -c '%u:%g %a %n' /srv/media/song | sed 's|/srv/media/||'";
    assert_eq!(on("node1", look), as_found);

    // unassigned: the data stays exactly as it was
    mesh.run(&["unassign", "reader", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", look), as_found);
    assert_eq!(on("node1", "cat /srv/media/song"), "song\n");
}
