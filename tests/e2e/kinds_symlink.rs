//! The `symlink` kind on a lab machine: a link made, moved by a setting, and undeclared with
//! what was at its path given back (a link found there, pointing where it did; a file found
//! there, as it was).

use crate::util::{Mesh, on};

fn module(mesh: &Mesh) {
    mesh.module(
        "links",
        r#"{"name": "links", "version": "1", "description": "Two links.",
  "settings": [{"name": "release", "type": "string", "meaning": "Which release.",
                "default": "v1"}],
  "resources": [
    {"kind": "symlink", "path": "/etc/mesh-link/current", "target": "/srv/app/${release}"},
    {"kind": "symlink", "path": "/etc/mesh-link-found", "target": "/srv/app/${release}"},
    {"kind": "symlink", "path": "/etc/mesh-link-file", "target": "/etc/hostname"}]}"#,
        &[],
    );
}

/// Where each link points, or what is there instead.
fn there() -> String {
    on(
        "node3",
        "for p in /etc/mesh-link/current /etc/mesh-link-found /etc/mesh-link-file; do \
         if [ -L $p ]; then echo \"$p -> $(readlink $p)\"; elif [ -f $p ]; then echo \"$p: $(cat $p)\"; \
         else echo \"$p: none\"; fi; done; test -d /etc/mesh-link && echo dir || echo no dir",
    )
}

#[test]
fn a_symlink_is_made_moved_by_a_setting_and_gives_back_what_it_found() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on(
        "node3",
        "rm -rf /etc/mesh-link /etc/mesh-link-found /etc/mesh-link-file; \
         ln -s /srv/theirs /etc/mesh-link-found; echo operator >/etc/mesh-link-file",
    );
    module(&mesh);
    mesh.run(&["assign", "links", "node3"]).ok();
    let push = mesh.run(&["push", "node3"]).ok();
    assert_eq!(
        there(),
        "/etc/mesh-link/current -> /srv/app/v1\n/etc/mesh-link-found -> /srv/app/v1\n\
         /etc/mesh-link-file -> /etc/hostname\ndir\n",
        "{}",
        push.stdout
    );
    assert!(
        push.stdout.contains("it pointed at /srv/theirs"),
        "{}",
        push.stdout
    );
    // a setting moves two links; the plan says which field and costs nothing
    mesh.run(&["settings", "set", "links", "release=v2"]).ok();
    let plan = mesh.run(&["plan", "node3", "--diff"]).ok();
    assert!(plan.stdout.contains("2 to change"), "{}", plan.stdout);
    assert!(
        plan.stdout.contains("-link -> /srv/app/v1")
            && plan.stdout.contains("+link -> /srv/app/v2"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("  ! "), "{}", plan.stdout);
    assert!(
        plan.stdout
            .contains("~ links:symlink:/etc/mesh-link/current (target)"),
        "{}",
        plan.stdout
    );
    let again = mesh.run(&["push", "node3"]).ok();
    assert!(
        again.stdout.contains("0 created, 2 changed"),
        "{}",
        again.stdout
    );
    assert!(there().starts_with("/etc/mesh-link/current -> /srv/app/v2\n"));
    // undeclared: the link made goes with the folder made for it; what was found comes back
    mesh.run(&["unassign", "links", "node3"]).ok();
    let off = mesh.run(&["push", "node3"]).ok();
    assert_eq!(
        there(),
        "/etc/mesh-link/current: none\n/etc/mesh-link-found -> /srv/theirs\n\
         /etc/mesh-link-file: operator\nno dir\n",
        "{}",
        off.stdout
    );
    on("node3", "rm -f /etc/mesh-link-found /etc/mesh-link-file");
}
