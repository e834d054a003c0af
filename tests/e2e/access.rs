//! The operator's shared data, on a lab machine: a module requires read
//! access to a path the operator names (`mesh place`); the mesh never creates it (a missing one
//! fails the process, clearly), never chowns or chmods it, never removes it on unassign, and a
//! process given read access cannot write into it. A container is given the same access, at the
//! same path inside it, read-only when only reading was asked.

use crate::util::{Mesh, node_result, on, ssh, states, within};

/// A process that tries to write into the operator's data and notes how that went.
const READER: &str = r#"{
  "name": "reader", "version": "1", "description": "Reads the operator's media.",
  "requires": [{"name": "media", "kind": "operator", "access": "read"}],
  "resources": [{"kind": "process", "description": "tries to write the media",
                 "command": ["/bin/sh", "-c", "touch '${media.path}/from-process' 2>/run/reader.err; echo $? >/run/reader.rc; exec sleep infinity"]}]
}"#;

/// The operator's media as the test made it: owner and mode of the folder and its song.
const AS_FOUND: &str = "1234:1234 751\n1234:1234 644 song\n";
const LOOK: &str =
    "stat -c '%u:%g %a' /srv/media; stat -c '%u:%g %a %n' /srv/media/song | sed 's|/srv/media/||'";

/// `instance` on node1 is refused until the operator names its media (naming the command), then
/// pushed with a media path the machine lacks: that push fails; its JSON answer.
fn refused_then_failed(mesh: &Mesh, instance: &str) -> serde_json::Value {
    let refused = mesh.run(&["plan", "node1"]).code(1).stderr;
    assert!(
        refused.contains(&format!(
            "`mesh place {instance} node1 media=PATH` (the mesh never creates, owns or removes it)"
        )),
        "{refused}"
    );
    mesh.run(&["place", instance, "node1", "media=/srv/no-media"])
        .ok();
    let push = mesh.run(&["push", "node1", "--json"]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    push.json()
}

#[test]
fn the_operators_data_is_never_made_owned_or_removed_and_read_access_cannot_write() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        "rm -rf /srv/media /srv/no-media /run/reader.rc /run/reader.err; mkdir -p /srv/media; \
         echo song >/srv/media/song; chown -R 1234:1234 /srv/media; chmod 0751 /srv/media",
    );
    mesh.module("reader", READER, &[]);
    mesh.run(&["assign", "reader", "node1"]).ok();

    // a path that is not there fails the process on that node, and is not made
    let result = refused_then_failed(&mesh, "reader");
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
    let rc = within(std::time::Duration::from_secs(10), || {
        Some(on("node1", "cat /run/reader.rc 2>/dev/null; true")).filter(|rc| !rc.is_empty())
    })
    .unwrap_or_default();
    assert_ne!(rc.trim(), "0", "the process wrote into read-only data");
    assert!(!rc.trim().is_empty(), "the process never ran");
    let err = on("node1", "cat /run/reader.err");
    assert!(err.contains("Read-only file system"), "{err}");
    assert_eq!(
        on("node1", "test -e /srv/media/from-process; echo $?").trim(),
        "1"
    );
    assert_eq!(on("node1", LOOK), AS_FOUND);

    // unassigned: the data stays exactly as it was
    mesh.run(&["unassign", "reader", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", LOOK), AS_FOUND);
    assert_eq!(on("node1", "cat /srv/media/song"), "song\n");
}

/// A container that reads the operator's media (and writes its uploads): it sees each at the
/// same path as the machine.
const BOXED: &str = r#"{
  "name": "boxed", "version": "1", "description": "Reads the operator's media in a container.",
  "requires": [{"name": "media", "kind": "operator", "access": "read"},
               {"name": "uploads", "kind": "operator", "access": "read-write"}],
  "resources": [{"kind": "container", "image": "mesh-reader", "command": ["/usr/bin/sleep", "infinity"]}]
}"#;

/// An image of the machine's own sleep, cat and touch: the lab has no registry to pull from.
const READER_IMAGE: &str = "tar -ch -C / usr/bin/sleep usr/bin/cat usr/bin/touch \
    lib/x86_64-linux-gnu/libc.so.6 lib64/ld-linux-x86-64.so.2 2>/dev/null \
    | docker import - mesh-reader >/dev/null";

#[test]
fn a_container_reads_the_operators_data_it_may_only_read_and_never_owns_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    on(
        "node1",
        &format!(
            "docker rm -f boxed >/dev/null 2>&1; rm -rf /srv/media /srv/uploads /srv/no-media; \
             mkdir -p /srv/media /srv/uploads; echo song >/srv/media/song; \
             chown -R 1234:1234 /srv/media; chmod 0751 /srv/media; {READER_IMAGE}"
        ),
    );
    mesh.module("boxed", BOXED, &[]);
    mesh.run(&["assign", "boxed", "node1"]).ok();
    mesh.run(&["place", "boxed", "node1", "uploads=/srv/uploads"])
        .ok();

    // a path that is not there fails the container, and is not made
    let result = refused_then_failed(&mesh, "boxed");
    let failed: Vec<(String, String)> = states(node_result(&result, "node1"))
        .into_iter()
        .filter(|(_, s)| s == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{result}");
    assert!(failed[0].0.starts_with("boxed:container:"), "{failed:?}");
    let said = result.to_string();
    assert!(
        said.contains("/srv/no-media is not on this machine") && said.contains("never creates it"),
        "{said}"
    );
    assert_eq!(on("node1", "test -e /srv/no-media; echo $?").trim(), "1");
    assert_eq!(
        on("node1", "docker ps -aq --filter label=mesh.instance=boxed").trim(),
        "",
        "a container was run without its data"
    );

    // the path that is there: read inside the container, never written, never chowned
    mesh.run(&["place", "boxed", "node1", "media=/srv/media"])
        .ok();
    mesh.run(&["push", "node1"]).ok();
    let running = || {
        on(
            "node1",
            "docker ps -q --no-trunc --filter label=mesh.instance=boxed",
        )
        .trim()
        .to_string()
    };
    let id = running();
    assert!(!id.is_empty(), "the container does not run");
    let exec = |command: &str| ssh("node1", &format!("docker exec {id} {command} 2>&1"));
    let read = exec("/usr/bin/cat /srv/media/song");
    assert_eq!((read.status, read.stdout.as_str()), (0, "song\n"));
    let write = exec("/usr/bin/touch /srv/media/from-container");
    assert_ne!(write.status, 0, "the container wrote into read-only data");
    assert!(
        write.stdout.contains("Read-only file system"),
        "{}",
        write.stdout
    );
    assert_eq!(
        on("node1", "test -e /srv/media/from-container; echo $?").trim(),
        "1"
    );
    // read-write access is written through
    let upload = exec("/usr/bin/touch /srv/uploads/from-container");
    assert_eq!(upload.status, 0, "{}", upload.stdout);
    assert_eq!(on("node1", LOOK), AS_FOUND);
    // unchanged: the next push leaves the container alone
    let plan = mesh.run(&["plan", "node1"]).ok().stdout;
    assert_eq!(plan, "node1: no changes\n");
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(running(), id, "an unchanged container was made again");

    // unassigned: the container goes, the data stays exactly as it was
    mesh.run(&["unassign", "boxed", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(
        on("node1", "docker ps -aq --filter label=mesh.instance=boxed").trim(),
        ""
    );
    assert_eq!(on("node1", LOOK), AS_FOUND);
    assert_eq!(on("node1", "cat /srv/media/song"), "song\n");
    assert_eq!(on("node1", "ls /srv/uploads"), "from-container\n");
}

/// A module that keeps a directory of its own (the mesh makes it, and removes it when empty).
const KEEPER: &str = r#"{
  "name": "keeper", "version": "1", "description": "Keeps a directory.",
  "requires": [{"name": "data", "kind": "host", "directory": {}}],
  "resources": [{"kind": "file", "path": "${data.path}/note", "template": "note"}]
}"#;

#[test]
fn the_operators_data_may_not_be_a_directory_the_mesh_makes_and_would_remove() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("reader", READER, &[]);
    mesh.module("keeper", KEEPER, &[("note", "kept\n")]);
    mesh.run(&["assign", "keeper", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let home = "/srv/mesh/keeper/data";
    assert_eq!(on("node1", &format!("cat {home}/note")), "kept\n");

    // the operator names keeper's directory as its own data: refused before anything is sent
    mesh.run(&["assign", "reader", "node1"]).ok();
    mesh.run(&["place", "reader", "node1", &format!("media={home}")])
        .ok();
    let refused = mesh.run(&["plan", "node1"]).code(1).stderr;
    assert!(
        refused.contains(&format!(
            "the operator's data media at {home} is the directory the mesh makes for keeper"
        )),
        "{refused}"
    );
    // and still when keeper goes: the push would remove the directory the reader reads
    mesh.run(&["unassign", "keeper", "node1"]).ok();
    let refused = mesh.run(&["push", "node1"]).code(1).stderr;
    assert!(
        refused.contains("is the directory the mesh makes for keeper"),
        "{refused}"
    );
    assert_eq!(on("node1", &format!("cat {home}/note")), "kept\n");

    mesh.run(&["unassign", "reader", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
}
