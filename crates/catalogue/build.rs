//! Build step for `mesh-catalogue`: embeds the built-in catalogue, the repo's `catalogue/`
//! folder (modules, not code, kept at the top level where the operator looks for it).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    let crate_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = crate_dir.join("../../catalogue");
    if let Err(e) = embed_catalogue(&dir, &out) {
        println!(
            "cargo::error=cannot embed the catalogue ({}): {e}",
            dir.display()
        );
    }
}

fn embed_catalogue(dir: &Path, out: &Path) -> Result<(), String> {
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    walk(dir, dir, &mut files).map_err(|e| e.to_string())?;
    files.sort();
    let mut code =
        String::from("/// Every file of the built-in catalogue: (path under catalogue/, bytes).\n");
    code.push_str("pub(crate) static FILES: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        let _ = writeln!(code, "    ({rel:?}, include_bytes!({abs:?})),");
    }
    code.push_str("];\n");
    fs::write(out.join("catalogue.rs"), code).map_err(|e| e.to_string())
}

fn walk(base: &Path, dir: &Path, files: &mut Vec<(String, String)>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(base, &path, files)?;
        } else if let Ok(rel) = path.strip_prefix(base) {
            files.push((
                rel.to_string_lossy().into_owned(),
                path.to_string_lossy().into_owned(),
            ));
        }
    }
    Ok(())
}
