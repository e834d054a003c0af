//! What the Debian package installs from `pkg/` (its man pages and completion scripts) is what
//! this mesh makes now: generated files kept in the tree, so `cargo deb` needs no step before it,
//! and a test that fails when a definition moves and they were not made again
//! (`MESH_BLESS=1 cargo test --lib package_tests` makes them again).

use std::collections::BTreeMap;
use std::path::Path;

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, std::fs::read(e.path()).unwrap_or_default())
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_packaged_man_pages_and_completions_are_what_mesh_makes_now() {
    let pkg = Path::new(env!("CARGO_MANIFEST_DIR")).join("pkg");
    let made = tempfile::tempdir().unwrap();
    let man = made.path().join("man");
    super::man::pages(super::definition(), &man).unwrap();
    let completions = made.path().join("completions");
    std::fs::create_dir(&completions).unwrap();
    for (shell, name) in [
        (clap_complete::Shell::Bash, "mesh.bash"),
        (clap_complete::Shell::Zsh, "_mesh"),
        (clap_complete::Shell::Fish, "mesh.fish"),
    ] {
        let script = super::complete::script(shell, super::definition());
        std::fs::write(completions.join(name), script).unwrap();
    }
    let bless = std::env::var_os("MESH_BLESS").is_some();
    for dir in ["man", "completions"] {
        let (now, kept) = (files(&made.path().join(dir)), files(&pkg.join(dir)));
        if bless && now != kept {
            let _ = std::fs::remove_dir_all(pkg.join(dir));
            std::fs::create_dir_all(pkg.join(dir)).unwrap();
            for (name, bytes) in &now {
                std::fs::write(pkg.join(dir).join(name), bytes).unwrap();
            }
            continue;
        }
        let differ: Vec<&String> = now
            .keys()
            .chain(kept.keys())
            .filter(|k| now.get(*k) != kept.get(*k))
            .collect();
        assert!(
            differ.is_empty(),
            "pkg/{dir} differs from what mesh makes now ({differ:?}): make it again with \
             MESH_BLESS=1 cargo test --lib package_tests"
        );
    }
}
