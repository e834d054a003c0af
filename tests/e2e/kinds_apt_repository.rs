//! The `apt-repository` kind through the built-in `apt-repo` module on a lab machine. Lab
//! machines have no route out, so the test builds a signed flat repository on the host (a key
//! made with gpg in a folder of its own, one tiny package, `Packages`, `Release` and a
//! clear-signed `InRelease`), copies it onto the machine and names it `file:/srv/meshrepo`.
//!
//! apt refuses an unsigned or badly signed repository, so the package installing from it in the
//! push that added it proves the key its `Signed-By:` names is the one apt checked with; a push
//! with another key fails naming the repository, and leaves apt's sources as they were.

use std::path::Path;
use std::process::Command;

use crate::util::{Mesh, on, ssh_command};

const NODE: &str = "node1";
const SOURCES: &str = "/etc/apt/sources.list.d/mesh-meshlocal.sources";
const KEY: &str = "/etc/apt/keyrings/mesh-meshlocal.asc";

pub(crate) fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .args(["-ec", script])
        .current_dir(dir)
        .env("GNUPGHOME", dir.join("gnupg"))
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A key of its own in `dir/NAME`, armored.
pub(crate) fn key(dir: &Path, name: &str) -> String {
    sh(
        dir,
        &format!(
            "mkdir -m 700 {name}; export GNUPGHOME=$PWD/{name}; \
             gpg --batch --quiet --passphrase '' --quick-gen-key '{name} <{name}@mesh.test>' \
             ed25519 sign never; gpg --armor --export"
        ),
    )
}

/// A flat repository in `dir/repo` holding `meshtiny` 1.0, signed by the key in `dir/gnupg`.
fn repository(dir: &Path) {
    sh(
        dir,
        "mkdir -p pkg/DEBIAN pkg/usr/share/meshtiny repo
         printf 'Package: meshtiny\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: mesh \
         <repo@mesh.test>\\nDescription: a tiny package for the apt-repository test\\n' \
         >pkg/DEBIAN/control
         echo hello >pkg/usr/share/meshtiny/hello
         dpkg-deb --root-owner-group --build pkg repo/meshtiny_1.0_all.deb >/dev/null
         cd repo
         dpkg-scanpackages . /dev/null >Packages 2>/dev/null
         { printf 'Origin: mesh\\nLabel: mesh\\nDate: %s\\nSHA256:\\n' \"$(date -Ru)\"
           printf ' %s %s Packages\\n' \"$(sha256sum Packages | cut -d' ' -f1)\" \
           \"$(stat -c %s Packages)\"; } >Release
         gpg --batch --yes --clearsign -o InRelease Release
         chmod -R a+rX .",
    );
}

/// Copies `dir/repo` to `/srv/meshrepo` and `/srv/meshrepo2` on the machine.
fn copy_onto(node: &str, dir: &Path) {
    let tar = dir.join("repo.tar");
    sh(dir, "tar -C repo -cf repo.tar .");
    let out = ssh_command(
        node,
        "rm -rf /srv/meshrepo /srv/meshrepo2; mkdir -p /srv/meshrepo && \
         tar -C /srv/meshrepo -xf - && cp -a /srv/meshrepo /srv/meshrepo2",
    )
    .stdin(std::fs::File::open(&tar).expect("the tarball"))
    .output()
    .expect("ssh runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn policy(node: &str) -> String {
    on(node, "apt-cache policy meshtiny")
}

fn sources(uri: &str) -> String {
    format!(
        "# meshlocal (written by mesh)\nTypes: deb\nURIs: {uri}\nSuites: ./\n\
         Signed-By: {KEY}\n"
    )
}

/// The module's mesh-wide layer, whole (a `settings set` replaces it).
fn set(mesh: &Mesh, uri: &str, key: &str) {
    let (uri, key) = (format!("uri={uri}"), format!("key={key}"));
    mesh.run(&[
        "settings",
        "set",
        "apt-repo",
        "name=meshlocal",
        &uri,
        "suite=./",
        "components=[]",
        &key,
    ])
    .ok();
}

#[test]
fn an_apt_repository_is_added_with_its_key_changed_refused_when_wrongly_signed_and_given_back() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    let good = key(dir.path(), "gnupg");
    let wrong = key(dir.path(), "other");
    repository(dir.path());
    on(
        NODE,
        "rm -f /etc/apt/sources.list.d/mesh-* /etc/apt/keyrings/mesh-* \
         /var/lib/apt/lists/_srv_meshrepo*; dpkg --purge meshtiny >/dev/null 2>&1; true",
    );
    copy_onto(NODE, dir.path());
    // a file found at the key's path: the mesh's while declared, its bytes given back after
    on(
        NODE,
        &format!("printf 'found by the test\\n' >{KEY}; chmod 600 {KEY}"),
    );
    // the package is the test's own module's: it installs in the push that adds the repository
    mesh.module(
        "tiny",
        r#"{"name": "tiny", "version": "1", "description": "The tiny package.",
  "resources": [{"kind": "package", "name": "meshtiny"}]}"#,
        &[],
    );
    mesh.run(&["assign", "apt-repo", NODE]).ok();
    mesh.run(&["assign", "tiny", NODE]).ok();
    set(&mesh, "file:/srv/meshrepo", &good);
    let push = mesh.run(&["push", NODE]).ok();
    assert_eq!(
        on(NODE, &format!("cat {SOURCES}")),
        sources("file:/srv/meshrepo")
    );
    assert_eq!(
        on(NODE, &format!("cat {KEY}")),
        format!("{}\n", good.trim())
    );
    assert_eq!(
        on(NODE, &format!("stat -c '%U %a' {SOURCES} {KEY}")),
        "root 644\nroot 644\n"
    );
    assert!(
        policy(NODE).contains("500 file:/srv/meshrepo ./ Packages"),
        "{}\n{}",
        policy(NODE),
        push.stdout
    );
    assert_eq!(
        on(NODE, "dpkg-query -W -f='${Version}' meshtiny"),
        "1.0",
        "{}",
        push.stdout
    );
    assert!(
        push.stdout.contains("apt-get update took it"),
        "{}",
        push.stdout
    );

    // a setting changed: the plan shows the sources file's diff, and it costs no unit anything
    set(&mesh, "file:/srv/meshrepo2", &good);
    let plan = mesh.run(&["plan", NODE, "--diff"]).ok().stdout;
    println!("{plan}");
    assert!(
        plan.contains("~ apt-repo:apt-repository:meshlocal (uri)"),
        "{plan}"
    );
    assert!(plan.contains("-URIs: file:/srv/meshrepo\n"), "{plan}");
    assert!(plan.contains("+URIs: file:/srv/meshrepo2\n"), "{plan}");
    assert!(
        !plan.contains("restart") && !plan.contains("reload"),
        "{plan}"
    );
    mesh.run(&["push", NODE]).ok();
    assert_eq!(
        on(NODE, &format!("cat {SOURCES}")),
        sources("file:/srv/meshrepo2")
    );
    let moved = policy(NODE);
    assert!(
        moved.contains("500 file:/srv/meshrepo2 ./ Packages"),
        "{moved}"
    );
    assert!(!moved.contains("file:/srv/meshrepo ./"), "{moved}");

    // another key: apt refuses the signature, the push fails naming the repository, and both
    // files are as they were
    let before = on(NODE, &format!("sha256sum {SOURCES} {KEY}"));
    set(&mesh, "file:/srv/meshrepo2", &wrong);
    let refused = mesh.run(&["push", NODE]);
    assert_ne!(refused.status, 0, "{}", refused.stdout);
    let said = format!("{}{}", refused.stdout, refused.stderr);
    assert!(
        said.contains("apt-get update refused repository meshlocal (file:/srv/meshrepo2)"),
        "{said}"
    );
    assert!(said.contains("NO_PUBKEY"), "{said}");
    assert_eq!(on(NODE, &format!("sha256sum {SOURCES} {KEY}")), before);
    assert_eq!(
        on(NODE, &format!("cat {KEY}")),
        format!("{}\n", good.trim())
    );

    // undeclared: both files gone, apt's lists updated, the repository no longer apt's
    set(&mesh, "file:/srv/meshrepo2", &good);
    mesh.run(&["unassign", "apt-repo", NODE]).ok();
    mesh.run(&["unassign", "tiny", NODE]).ok();
    let off = mesh.run(&["push", NODE]).ok();
    assert_eq!(
        on(NODE, &format!("ls {SOURCES} 2>/dev/null; true")),
        "",
        "{}",
        off.stdout
    );
    assert_eq!(
        on(NODE, &format!("cat {KEY}; stat -c %a {KEY}")),
        "found by the test\n600\n"
    );
    let gone = policy(NODE);
    assert!(!gone.contains("meshrepo"), "{gone}\n{}", off.stdout);
    on(
        NODE,
        &format!("dpkg --purge meshtiny >/dev/null; rm -rf /srv/meshrepo /srv/meshrepo2 {KEY}"),
    );
}
