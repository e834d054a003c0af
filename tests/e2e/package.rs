//! The Debian package (`cargo deb`) on a fresh lab machine with no Rust: `apt install ./mesh_*.deb`
//! gives a working `mesh` that finds its built-in modules, its manual pages, its completions and
//! its scheduled-push units, and pushes to another machine with the helper it carries.
//!
//! `.ci/run` builds the package first and names it in `MESH_DEB`; without it the test is skipped,
//! saying so (a failure under `MESH_LAB=require`).

use crate::util::{Mesh, address, host_fingerprint, lab_state, on, ssh, ssh_command};

#[test]
fn the_package_installs_a_mesh_that_finds_its_modules_manual_and_completions_and_pushes() {
    let Some(deb) = std::env::var_os("MESH_DEB") else {
        assert!(
            std::env::var("MESH_LAB").as_deref() != Ok("require"),
            "MESH_LAB=require, but MESH_DEB names no package: `cargo deb` makes one"
        );
        eprintln!("skipped: MESH_DEB names no package (`cargo deb` makes one)");
        return;
    };
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab_of(2) else {
        return;
    };
    mesh.run(&["push", "--all"]).ok();
    // node1 is the operator's machine: the package, and a key node2 lets in
    let copied = ssh_command("node1", "cat > /tmp/mesh.deb")
        .stdin(std::fs::File::open(&deb).unwrap())
        .status()
        .unwrap();
    assert!(copied.success());
    let copied = ssh_command("node1", "install -m 600 /dev/stdin /root/lab-key")
        .stdin(std::fs::File::open(lab_state().join("id_ed25519")).unwrap())
        .status()
        .unwrap();
    assert!(copied.success());
    assert_eq!(on("node1", "command -v cargo rustc || echo none"), "none\n");
    let apt = ssh("node1", "apt-get install -y -q /tmp/mesh.deb 2>&1");
    assert_eq!(apt.status, 0, "apt-get install:\n{}", apt.stdout);

    let installed = on(
        "node1",
        "mesh --version; mesh module list | cut -d' ' -f1; \
         ls /usr/share/man/man1/mesh.1.gz /usr/share/man/man1/mesh-node-add.1.gz \
            /usr/share/bash-completion/completions/mesh /usr/share/zsh/vendor-completions/_mesh \
            /usr/share/fish/vendor_completions.d/mesh.fish \
            /usr/share/mesh/catalogue/motd/module.json /usr/share/doc/mesh/copyright; \
         systemctl cat mesh-push@root.timer | grep OnCalendar",
    );
    for said in [
        "mesh 0.1.0",
        "motd\n",
        "container-runtime\n",
        "/usr/share/man/man1/mesh-node-add.1.gz",
        "/usr/share/mesh/catalogue/motd/module.json",
        "OnCalendar=*:0/30",
    ] {
        assert!(installed.contains(said), "{said:?} not in:\n{installed}");
    }

    // the installed mesh pushes to node2 with the helper it carries
    let fingerprint = host_fingerprint("node2");
    let pushed = on(
        "node1",
        &format!(
            "set -e; export MESH_INVENTORY=/root/fleet.db; rm -f $MESH_INVENTORY; mesh init >/dev/null; \
             mesh node add node2 --address {} --identity /root/lab-key >/dev/null; \
             mesh node trust node2 --fingerprint {fingerprint} >/dev/null; \
             mesh assign motd node2 >/dev/null; mesh push node2; \
             mesh unassign motd node2 >/dev/null; mesh push node2 >/dev/null",
            address("node2")
        ),
    );
    assert!(pushed.contains("node2: applied"), "{pushed}");
    on(
        "node1",
        "apt-get purge -y -q mesh >/dev/null; rm -f /tmp/mesh.deb /root/lab-key /root/fleet.db*",
    );
    assert_eq!(on("node1", "command -v mesh || echo gone"), "gone\n");
}
