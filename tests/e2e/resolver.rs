//! The built-in resolver module on a lab machine: the resolver upstreams are a tunable list,
//! written as systemd-resolved reads them and read back from the running daemon.

use crate::util::{Mesh, invocation, on};

#[test]
fn the_resolver_upstreams_are_a_tunable_list_the_daemon_runs_with() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    mesh.run(&["assign", "resolver", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    // the defaults, as the running daemon has them
    assert!(
        on("node3", "resolvectl dns").contains("Global: 9.9.9.9 149.112.112.112"),
        "{}",
        on("node3", "resolvectl dns")
    );
    let before = invocation("node3", "systemd-resolved.service");
    let set = mesh
        .run(&[
            "settings",
            "set",
            "resolver",
            "upstreams=[\"10.0.0.53\",\"10.0.0.54\"]",
        ])
        .ok()
        .stdout;
    assert!(set.contains("resolver on node3: upstreams"), "{set}");
    let plan = mesh.run(&["plan", "node3", "--diff"]).ok().stdout;
    assert!(plan.contains("+DNS=10.0.0.53 10.0.0.54"), "{plan}");
    assert!(
        plan.contains("systemd-resolved.service will restart"),
        "{plan}"
    );
    mesh.run(&["push", "node3"]).ok();
    assert!(on("node3", "resolvectl dns").contains("Global: 10.0.0.53 10.0.0.54"));
    assert_ne!(invocation("node3", "systemd-resolved.service"), before);

    // taken off: the drop-in and the folder the mesh made for it are gone
    mesh.run(&["unassign", "resolver", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    assert_eq!(
        on(
            "node3",
            "test -e /etc/systemd/resolved.conf.d && echo there || echo gone"
        )
        .trim(),
        "gone"
    );
}
