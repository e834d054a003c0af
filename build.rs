//! Build step for `mesh`: embeds the helper (the built-in catalogue is `mesh-catalogue`'s).
//!
//! The helper (`host/`) is built here in a cargo invocation of its own, statically linked
//! (`+crt-static` with an explicit `--target`, so the flag reaches neither build scripts nor the
//! operator binary), into a target directory of its own so the two builds never wait on each
//! other's lock. Its bytes are then embedded with `include_bytes!`: one operator binary carries
//! everything a push needs. The helper's test switches (feature `test-switches`) are built in
//! only when the operator itself has debug assertions.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use blake2::Blake2b512;
use sha2::{Digest, Sha256};

const HELPER_TARGET: &str = "x86_64-unknown-linux-gnu";

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    let root = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    if let Err(e) = build_helper(&root, &out) {
        println!("cargo::error=cannot build the helper (mesh-host): {e}");
    }
}

fn build_helper(root: &Path, out: &Path) -> Result<(), String> {
    for dir in ["host", "wire"] {
        println!("cargo::rerun-if-changed={}", root.join(dir).display());
    }
    println!(
        "cargo::rerun-if-changed={}",
        root.join("Cargo.lock").display()
    );
    // OUT_DIR is <target>/<profile>/build/<pkg>/out: the helper gets a sibling of <profile>/build.
    let target_dir = out
        .ancestors()
        .nth(3)
        .map(|p| p.join("mesh-host-build"))
        .ok_or("OUT_DIR is not where cargo puts it")?;
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args([
            "build",
            "--offline",
            "--quiet",
            "-p",
            "mesh-host",
            "--profile",
            "helper",
        ])
        .args(["--target", HELPER_TARGET])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+crt-static");
    for var in [
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        cmd.env_remove(var);
    }
    // the tests' switches live only where the operator has debug assertions (`cargo test`): a
    // release operator embeds a helper without them
    if env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some() {
        cmd.args(["--features", "test-switches"]);
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build -p mesh-host exited with {status}"));
    }
    let helper = target_dir
        .join(HELPER_TARGET)
        .join("helper")
        .join("mesh-host");
    let bytes = fs::read(&helper).map_err(|e| format!("{}: {e}", helper.display()))?;
    let gz = out.join("mesh-host.gz");
    fs::write(&gz, gzip(&bytes).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let sha256 = hex(&Sha256::digest(&bytes));
    let b2 = hex(&Blake2b512::digest(&bytes));
    let code = format!(
        "/// The static helper binary, built for {HELPER_TARGET}, gzipped as it travels.\n\
         pub(crate) static HELPER_GZ: &[u8] = include_bytes!({:?});\n\
         /// The sha256 of the helper itself (unpacked), its name on every machine.\n\
         pub(crate) const HELPER_SHA256: &str = {sha256:?};\n\
         /// Its BLAKE2b-512, which the machine checks as it stores it.\n\
         pub(crate) const HELPER_B2: &str = {b2:?};\n\
         /// The helper's size unpacked.\n\
         pub(crate) const HELPER_LEN: usize = {};\n",
        gz.to_string_lossy(),
        bytes.len()
    );
    fs::write(out.join("helper.rs"), code).map_err(|e| e.to_string())
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The helper as it crosses the wire: gzip, since every Debian machine has `gzip` (it is
/// Essential), and it halves what a cold push sends.
fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write as _;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes)?;
    enc.finish()
}
