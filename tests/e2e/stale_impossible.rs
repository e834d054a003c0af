//! A machine whose record was edited past the highest generation a push makes, or to the
//! highest (no push can follow it), refuses every push before it changes anything, even one
//! with `--overwrite`, and the operator names the record and the fix (found by an
//! attacker: the helper applied, and only the operator refused its answer).

use crate::util::{Mesh, node_result, on};

#[test]
fn a_record_at_a_generation_no_push_can_follow_refuses_every_push_before_changing_anything() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["assign", "motd", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let before = on("node1", "sha256sum /etc/motd");
    for number in ["9223372036854775807", "9223372036854775808"] {
        on(
            "node1",
            &format!(
                r#"sed -i 's/"number": *[0-9]*/"number": {number}/' /var/lib/mesh/record.json"#
            ),
        );
        mesh.run(&["settings", "set", "motd", &format!("banner=not-{number}")])
            .ok();
        for push in [
            &["--json", "push", "node1"][..],
            &["--json", "push", "node1", "--overwrite"],
        ] {
            let out = mesh.run(push).code(2).json();
            let r = node_result(&out, "node1");
            assert_eq!(r["kind"], "record", "{r}");
            let said = r["message"].as_str().unwrap_or_default().to_string() + &r.to_string();
            assert!(
                said.contains(number) && said.contains("/var/lib/mesh/record.json"),
                "{r}"
            );
            assert_eq!(
                on("node1", "sha256sum /etc/motd"),
                before,
                "{push:?} changed it"
            );
        }
    }
    // put back as the message says: the machine takes pushes again
    on(
        "node1",
        r#"sed -i 's/"number": *[0-9]*/"number": 1/' /var/lib/mesh/record.json"#,
    );
    mesh.run(&["check", "node1"]);
    mesh.run(&["push", "node1", "--overwrite"]).ok();
}
