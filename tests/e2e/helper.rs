//! The helper binary itself: static, small, and free of glibc's NSS lookups.

use std::path::PathBuf;
use std::process::Command;

pub(crate) fn helper() -> PathBuf {
    // build.rs builds it beside the profile's own build directory
    let mesh = PathBuf::from(env!("CARGO_BIN_EXE_mesh"));
    let profile = mesh.parent().expect("target/<profile>");
    profile.join("mesh-host-build/x86_64-unknown-linux-gnu/helper/mesh-host")
}

#[test]
fn the_helper_is_static_small_and_calls_no_nss() {
    let path = helper();
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // 1.7 MB before secrets were sealed; opening them with the host's ssh-ed25519 key (age, its
    // `ssh` feature) adds about 0.45 MB; 2.70 MB (1.24 MB gzipped, as it travels) with the user
    // and group kinds, the machine's own generations and its facts
    assert!(
        bytes.len() < 3 * 1024 * 1024,
        "the helper is {} bytes",
        bytes.len()
    );

    let ldd = Command::new("ldd").arg(&path).output().expect("ldd runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&ldd.stdout),
        String::from_utf8_lossy(&ldd.stderr)
    );
    assert!(
        said.contains("statically linked") || said.contains("not a dynamic executable"),
        "ldd: {said}"
    );

    // glibc marks every function that needs its own shared libraries at run time; only dlopen
    // and dlmopen (from std and gconv, never reached) may appear
    let marker = b"in statically linked applications requires at runtime";
    let text = String::from_utf8_lossy(&bytes);
    let mut found: Vec<&str> = text
        .match_indices(std::str::from_utf8(marker).expect("ascii"))
        .filter_map(|(at, _)| text[..at].rsplit("Using '").next())
        .filter_map(|name| name.split('\'').next())
        .collect();
    found.sort_unstable();
    found.dedup();
    assert!(
        found.iter().all(|f| *f == "dlopen" || *f == "dlmopen"),
        "NSS or other dynamic lookups: {found:?}"
    );

    let version = Command::new(&path)
        .arg("--version")
        .output()
        .expect("the helper runs");
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("mesh-host "));
}
