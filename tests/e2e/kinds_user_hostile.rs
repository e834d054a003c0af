//! What an attacker found the `user` kind doing, refused on a lab machine: a user named like a
//! group the mesh did not make (useradd would take the group, userdel remove it); a user whose
//! home is root's (its keys would replace root's); and an account made by hand after the mesh's
//! `useradd` failed, which the undeclare must leave as found.

use crate::util::{Mesh, on};

const NODE: &str = "node3";

fn clean() {
    on(
        NODE,
        "userdel -r meshghost 2>/dev/null; userdel meshroot 2>/dev/null; true",
    );
}

#[test]
fn a_user_over_a_found_group_in_roots_home_or_made_by_hand_after_a_failure_is_never_the_meshs() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    clean();
    let keys = "sha256sum /root/.ssh/authorized_keys";
    let root_keys = on(NODE, keys);
    let staff = on(NODE, "getent group staff");
    assert!(staff.starts_with("staff:"), "{staff}");
    mesh.module(
        "hostile",
        r#"{"name": "hostile", "version": "1", "description": "Accounts an attacker tried.",
  "resources": [
    {"kind": "user", "name": "staff"},
    {"kind": "user", "name": "meshroot", "home": "/root", "authorized-keys": "ssh-ed25519 AAAAattacker x"},
    {"kind": "user", "name": "meshghost", "groups": ["nosuchgroup"], "remove-home": true}]}"#,
        &[],
    );
    mesh.run(&["assign", "hostile", NODE]).ok();
    let push = mesh.run(&["push", NODE]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    assert!(
        push.stdout
            .contains("a group staff is on the machine that the mesh did not make"),
        "{}",
        push.stdout
    );
    assert!(
        push.stdout
            .contains("is already there and belongs to uid 0"),
        "{}",
        push.stdout
    );
    assert_eq!(
        on(NODE, "getent passwd staff meshroot meshghost || true"),
        ""
    );
    assert_eq!(on(NODE, "getent group staff"), staff);
    assert_eq!(on(NODE, keys), root_keys);

    // an account of that name made by hand after the failure is its maker's, not the mesh's
    on(
        NODE,
        "useradd -m -s /bin/sh meshghost && echo thesis >/home/meshghost/thesis",
    );
    mesh.run(&["unassign", "hostile", NODE]).ok();
    mesh.run(&["push", NODE]).ok();
    assert!(
        on(NODE, "getent passwd meshghost").starts_with("meshghost:"),
        "the undeclare removed an account the mesh did not make"
    );
    assert_eq!(on(NODE, "cat /home/meshghost/thesis"), "thesis\n");
    assert_eq!(on(NODE, "getent group staff"), staff);
    clean();
}

/// A made user may not take another account's home: undeclaring it (with `remove-home`) would
/// then delete that account's home (found by an attacker: `home: /home/alice`).
#[test]
fn a_new_user_never_takes_another_accounts_home() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    on(
        NODE,
        "userdel -r meshtaker 2>/dev/null; id meshalice >/dev/null 2>&1 || useradd -m meshalice; \
         echo mine >/home/meshalice/note",
    );
    mesh.module(
        "taker",
        r#"{"name": "taker", "version": "1", "description": "A user in another's home.",
  "resources": [{"kind": "user", "name": "meshtaker", "home": "/home/meshalice", "remove-home": true}]}"#,
        &[],
    );
    mesh.run(&["assign", "taker", NODE]).ok();
    let push = mesh.run(&["push", NODE]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    assert!(
        push.stdout
            .contains("home /home/meshalice is already there and belongs to user meshalice (uid "),
        "{}",
        push.stdout
    );
    assert_eq!(on(NODE, "getent passwd meshtaker || echo none"), "none\n");
    mesh.run(&["unassign", "taker", NODE]).ok();
    mesh.run(&["push", NODE]).ok();
    assert_eq!(on(NODE, "cat /home/meshalice/note"), "mine\n");
    on(NODE, "userdel -r meshalice");
}
