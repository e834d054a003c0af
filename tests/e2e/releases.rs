//! The built-in modules are proven on Debian 12 and 13. A machine whose facts say another system
//! gets a refusal at plan naming what it runs, never a push that fails half-way; a copy of the
//! module in the operator's own catalogue folder goes there on the operator's word.

use crate::util::{Mesh, OsRelease, on};

const NODE: &str = "node1";

#[test]
fn a_built_in_module_on_a_machine_of_another_release_is_refused_at_plan_naming_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(1) else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    let motd = on(NODE, "cat /etc/motd 2>/dev/null; true");
    let back = OsRelease(NODE);
    on(
        NODE,
        "test -e /etc/os-release.mesh-kept || cp --remove-destination \
         \"$(readlink -f /etc/os-release)\" /etc/os-release.mesh-kept; \
         sed -e 's/^ID=.*/ID=ubuntu/' -e 's/^VERSION_ID=.*/VERSION_ID=\"24.04\"/' \
             -e 's/^VERSION_CODENAME=.*/VERSION_CODENAME=noble/' /etc/os-release.mesh-kept \
             >/etc/os-release.new; rm -f /etc/os-release; mv /etc/os-release.new /etc/os-release",
    );
    mesh.run(&["assign", "motd", NODE]).ok();
    // a check asks the machine what it is (and is refused for the same reason already)
    let _ = mesh.run(&["check", NODE]);
    let said = "node1 runs ubuntu 24.04 (its facts say so), and the built-in module motd is \
                proven on Debian 12 (bookworm) and Debian 13 (trixie) only";
    let plan = mesh.run(&["plan", NODE]);
    assert_ne!(plan.status, 0, "{}", plan.stdout);
    assert!(plan.stderr.contains(said), "{}", plan.stderr);
    let push = mesh.run(&["push", NODE]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    assert!(
        push.stderr.contains(said) || push.stdout.contains(said),
        "{}\n{}",
        push.stdout,
        push.stderr
    );
    assert_eq!(on(NODE, "cat /etc/motd 2>/dev/null; true"), motd);

    // the operator's own copy goes there on their word
    let here = env!("CARGO_MANIFEST_DIR");
    let json = std::fs::read_to_string(format!("{here}/catalogue/motd/module.json")).unwrap();
    let text = std::fs::read_to_string(format!("{here}/catalogue/motd/motd.txt")).unwrap();
    mesh.module("motd", &json, &[("motd.txt", &text)]);
    mesh.run(&["push", NODE]).ok();
    assert!(on(NODE, "cat /etc/motd").contains("managed by mesh"));

    drop(back);
    mesh.run(&["unassign", "motd", NODE]).ok();
    mesh.run(&["push", NODE]).ok();
    assert_eq!(on(NODE, "cat /etc/motd 2>/dev/null; true"), motd);
}
