//! The `package` kind's `version` and `"state": "absent"` on a lab machine: a package moved to
//! the declared version and another removed in one push, the version moved again by a new
//! module version (the plan shows the move and that no unit pays for it), and undeclared with
//! both given back as found: the found version reinstalled, the removed package reinstalled.
//!
//! Lab machines have no route out, so the test builds a flat repository on the host (three
//! versions of one tiny package, one of another), copies it onto the machine and names it in a
//! sources file of the test's own, as an operator's machine would already have it.

use std::path::Path;

use crate::kinds_apt_repository::sh;
use crate::util::{Mesh, on, ssh_command};

const NODE: &str = "node2";
const LIST: &str = "/etc/apt/sources.list.d/meshpkg-test.list";

/// A flat repository in `dir/repo`: meshver 1.0, 2.0 and 3.0, meshgone 1.0, and meshneeds 1.0,
/// which depends on meshgone.
fn repository(dir: &Path) {
    sh(
        dir,
        "mkdir -p repo
         for p in meshver:1.0 meshver:2.0 meshver:3.0 meshgone:1.0 meshneeds:1.0; do
           name=${p%:*}; version=${p#*:}; rm -rf pkg; mkdir -p pkg/DEBIAN pkg/usr/share/$name
           printf 'Package: %s\\nVersion: %s\\nArchitecture: all\\nMaintainer: mesh \
         <repo@mesh.test>\\nDescription: a tiny package for the package test\\n' \
           $name $version >pkg/DEBIAN/control
           [ $name = meshneeds ] && echo 'Depends: meshgone' >>pkg/DEBIAN/control
           echo $version >pkg/usr/share/$name/version
           dpkg-deb --root-owner-group --build pkg repo/${name}_${version}_all.deb >/dev/null
         done
         cd repo
         dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null
         { printf 'Origin: mesh\\nLabel: mesh\\nDate: %s\\nSHA256:\\n' \"$(date -Ru)\"
           printf ' %s %s Packages\\n' \"$(sha256sum Packages | cut -d' ' -f1)\" \
           \"$(stat -c %s Packages)\"; } >Release
         chmod -R a+rX .",
    );
}

/// The repository on the machine at `/srv/meshpkg`, in apt's sources, with meshver 1.0 and
/// meshgone installed: what the machine has before the mesh.
fn found_on(node: &str, dir: &Path) {
    sh(dir, "tar -C repo -cf repo.tar .");
    let out = ssh_command(
        node,
        &format!(
            "rm -rf /srv/meshpkg && mkdir -p /srv/meshpkg && tar -C /srv/meshpkg -xf - && \
             echo 'deb [trusted=yes] file:/srv/meshpkg ./' >{LIST} && \
             apt-get update -qq >/dev/null && \
             DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --allow-downgrades \
               meshver=1.0 meshgone=1.0 >/dev/null"
        ),
    )
    .stdin(std::fs::File::open(dir.join("repo.tar")).expect("the tarball"))
    .output()
    .expect("ssh runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What dpkg says of both packages: `NAME VERSION` where installed, `NAME none` where not.
fn installed() -> String {
    on(
        NODE,
        "for p in meshver meshgone; do \
           if dpkg-query -W -f='${db:Status-Abbrev}' $p 2>/dev/null | grep -q '^ii'; then \
             echo \"$p $(dpkg-query -W -f='${Version}' $p)\"; else echo \"$p none\"; fi; \
         done",
    )
}

fn pinned(mesh: &Mesh, module_version: &str, meshver: &str) {
    mesh.module(
        "pinned",
        &format!(
            r#"{{"name": "pinned", "version": "{module_version}", "description": "Packages pinned.",
  "resources": [{{"kind": "package", "name": "meshver", "version": "{meshver}"}},
                {{"kind": "package", "name": "meshgone", "state": "absent"}}]}}"#
        ),
        &[],
    );
}

#[test]
fn a_package_moved_to_a_version_and_one_removed_are_given_back_as_found() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    repository(dir.path());
    found_on(NODE, dir.path());
    assert_eq!(installed(), "meshver 1.0\nmeshgone 1.0\n");

    pinned(&mesh, "1", "2.0");
    mesh.run(&["assign", "pinned", NODE]).ok();
    let plan = mesh.run(&["plan", NODE]).ok().stdout;
    assert!(
        plan.contains("+ pinned:package:meshver (2.0)")
            && plan.contains("+ pinned:package:meshgone (absent)"),
        "{plan}"
    );
    let push = mesh.run(&["push", NODE]).ok();
    assert_eq!(
        installed(),
        "meshver 2.0\nmeshgone none\n",
        "{}",
        push.stdout
    );
    let again = mesh.run(&["push", NODE]).ok();
    assert!(
        again.stdout.contains("0 created, 0 changed"),
        "{}",
        again.stdout
    );

    // a new version of the module moves the package: the plan shows the move and its diff,
    // and no unit pays for it
    pinned(&mesh, "2", "3.0");
    let plan = mesh.run(&["plan", NODE, "--diff"]).ok().stdout;
    println!("{plan}");
    assert!(
        plan.contains("~ pinned:package:meshver (2.0 -> 3.0)"),
        "{plan}"
    );
    assert!(
        plan.contains("-installed meshver at 2.0") && plan.contains("+installed meshver at 3.0"),
        "{plan}"
    );
    assert!(!plan.contains("  ! "), "{plan}");
    let push = mesh.run(&["push", NODE]).ok();
    assert_eq!(
        installed(),
        "meshver 3.0\nmeshgone none\n",
        "{}",
        push.stdout
    );

    // undeclared: the plan says each goes back as found, and the push does it
    mesh.run(&["unassign", "pinned", NODE]).ok();
    let plan = mesh.run(&["plan", NODE]).ok().stdout;
    assert!(
        plan.contains("- pinned:package:meshver — restores package meshver=1.0 as the host had it")
            && plan.contains(
                "- pinned:package:meshgone — restores package meshgone=1.0 as the host had it"
            ),
        "{plan}"
    );
    let off = mesh.run(&["push", NODE]).ok();
    assert_eq!(installed(), "meshver 1.0\nmeshgone 1.0\n", "{}", off.stdout);
    on(
        NODE,
        &format!(
            "dpkg --purge meshver meshgone >/dev/null; rm -rf /srv/meshpkg {LIST}; \
             apt-get update -qq >/dev/null"
        ),
    );
}

/// Removing a package removes what depends on it: the helper asks apt for the simulation, and a
/// removal that would take a package not declared absent is refused, in `check` as in the push,
/// naming it, before anything is removed (found by an attacker: `redis-tools` absent took
/// `redis-server` and stopped its service, the plan said one package).
#[test]
fn a_removal_that_would_take_an_undeclared_dependent_is_refused_naming_it() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    repository(dir.path());
    found_on(NODE, dir.path());
    on(
        NODE,
        "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq meshneeds=1.0 >/dev/null",
    );
    let both = || {
        on(
            NODE,
            "dpkg-query -W -f='${Package} ${db:Status-Abbrev}\\n' meshgone meshneeds",
        )
    };
    let there = "meshgone ii \nmeshneeds ii \n";
    assert_eq!(both(), there);

    let absent = |names: &[&str]| {
        let resources: Vec<String> = names
            .iter()
            .map(|n| format!(r#"{{"kind": "package", "name": "{n}", "state": "absent"}}"#))
            .collect();
        mesh.module(
            "lean",
            &format!(
                r#"{{"name": "lean", "version": "{}", "description": "Packages removed.",
  "resources": [{}]}}"#,
                names.len(),
                resources.join(", ")
            ),
            &[],
        );
    };
    absent(&["meshgone"]);
    mesh.run(&["assign", "lean", NODE]).ok();
    let check = mesh.run(&["check", NODE]);
    assert!(
        check
            .stdout
            .contains("removing meshgone would also remove meshneeds"),
        "{}",
        check.stdout
    );
    let push = mesh.run(&["push", NODE]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    assert!(
        push.stdout.contains("would also remove meshneeds")
            && push.stdout.contains("nothing was removed"),
        "{}",
        push.stdout
    );
    assert_eq!(both(), there, "nothing was removed");

    // both declared absent: both go, and the push says the second went with the first
    absent(&["meshgone", "meshneeds"]);
    let push = mesh.run(&["push", NODE]).ok();
    assert!(
        push.stdout.contains("and with it meshneeds"),
        "{}",
        push.stdout
    );
    assert_eq!(
        on(NODE, "dpkg-query -W -f='${db:Status-Abbrev}' meshgone meshneeds 2>/dev/null | grep -c ii || true").trim(),
        "0"
    );
    mesh.run(&["unassign", "lean", NODE]).ok();
    mesh.run(&["push", NODE]).ok();
    on(
        NODE,
        &format!(
            "dpkg --purge meshver meshgone meshneeds >/dev/null; rm -rf /srv/meshpkg {LIST}; \
             apt-get update -qq >/dev/null"
        ),
    );
}
