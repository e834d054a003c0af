//! A machine's facts are untrusted input: root on one machine may write anything into
//! `/etc/os-release`, and a fact reaches files through templates. A fact that breaks its shape
//! (a command substitution, an escape sequence, a second line) is refused as it arrives, by name
//! and with the node that sent it; the facts known before are kept, and nothing is rendered from
//! the refused ones.

use crate::util::{Mesh, OsRelease, node_result, on};

const NODE: &str = "node2";
const FILE: &str = "/etc/mesh-cons.sh";

const CONS: &str = r#"{
  "name": "cons", "version": "1", "description": "A script that names the release.",
  "requires": [{"name": "host", "kind": "host", "fact": {}}],
  "resources": [{"kind": "file", "path": "/etc/mesh-cons.sh", "template": "cons.sh"}]
}"#;

#[test]
fn a_fact_that_breaks_its_shape_is_refused_by_name_and_never_reaches_a_file() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module(
        "cons",
        CONS,
        &[("cons.sh", "RELEASE=${host.os.codename}\n")],
    );
    mesh.run(&["assign", "cons", NODE]).ok();
    let checked = mesh.run(&["check", NODE]);
    assert!(matches!(checked.status, 0 | 4), "{}", checked.stderr);
    mesh.run(&["push", NODE]).ok();
    assert_eq!(on(NODE, &format!("cat {FILE}")), "RELEASE=bookworm\n");

    // root of the machine says its codename is a command, then an OSC escape sequence (a
    // second line cannot come from os-release, which is read line by line: a replaced helper
    // could send one, and `cargo test -p mesh-wire a_fact_of_the_wrong_shape` refuses it)
    let restore = OsRelease(NODE);
    for (codename, shown) in [
        ("$(id>/run/pwned)", "\"$(id>/run/pwned)\""),
        ("\\033]0;owned\\007", "\"\\u{1b}]0;owned\\u{7}\""),
    ] {
        on(
            NODE,
            &format!(
                "test -e /etc/os-release.mesh-kept || cp --remove-destination \
                 \"$(readlink -f /etc/os-release)\" /etc/os-release.mesh-kept; \
                 grep -v '^VERSION_CODENAME=' /etc/os-release.mesh-kept >/etc/os-release.new; \
                 printf 'VERSION_CODENAME=%b\\n' '{codename}' >>/etc/os-release.new; \
                 rm -f /etc/os-release; mv /etc/os-release.new /etc/os-release"
            ),
        );
        let check = mesh.run(&["--json", "check", NODE]).json();
        let refused = node_result(&check, NODE)["facts_refused"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            refused.contains("the fact os.codename = ") && refused.contains(shown),
            "refused by name, its value escaped: {check}"
        );
        let text = mesh.run(&["check", NODE]).stdout;
        assert!(
            text.contains(NODE) && text.contains("facts refused: the fact os.codename"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}'),
            "an escape is shown, never obeyed: {text:?}"
        );
        // the facts known before are kept, and the plan renders nothing new from them
        let facts = mesh.run(&["facts", NODE, "--json"]).ok().json();
        assert_eq!(facts[0]["facts"]["os"]["codename"], "bookworm", "{facts}");
        let plan = mesh.run(&["plan", NODE]).ok().stdout;
        assert!(plan.contains("no changes"), "{plan}");
        mesh.run(&["push", NODE]).ok();
        assert_eq!(on(NODE, &format!("cat {FILE}")), "RELEASE=bookworm\n");
        assert_eq!(
            on(NODE, "test -e /run/pwned && echo pwned || echo clean"),
            "clean\n"
        );
    }
    drop(restore);
    mesh.run(&["unassign", "cons", NODE]).ok();
    mesh.run(&["push", NODE]).ok();
}
