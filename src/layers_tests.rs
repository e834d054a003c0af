//! The layers only point down: a layer names only itself and the layers below it, so the core
//! reads from the bottom up. The order: wire, then ssh (reaching a machine), catalogue (what
//! modules say), inventory (what the operator stored), resolve, plan, push (the transport of one
//! node's run), deploy (a rollout of many), and the CLI and the lab on top.
//!
//! The lower layers are crates of the workspace, so a back arrow among them does not compile;
//! what is left to check is their manifests (a dev-dependency may point up, and cargo allows
//! it). The layers still in `src/` are folders of the `mesh` crate, so the rule is checked over
//! their sources: a file names (`crate::LAYER`) no layer higher than its own.

use std::path::Path;

/// Each layer with its height: a layer may name a layer no higher.
const LAYERS: &[(&str, u8)] = &[
    ("wire", 0),
    ("ssh", 1),
    ("catalogue", 2),
    ("inventory", 3),
    ("resolve", 4),
    ("plan", 5),
    ("push", 6),
    ("deploy", 7),
    ("lab", 8),
    ("cli", 9),
];

/// The layers that are crates of the workspace: (layer, package, folder). The others are
/// folders of `src/`; `mesh` itself (the upper layers) stands at the top.
const CRATES: &[(&str, &str, &str)] = &[
    ("wire", "mesh-wire", "wire"),
    ("ssh", "mesh-ssh", "crates/ssh"),
    ("catalogue", "mesh-catalogue", "crates/catalogue"),
    ("inventory", "mesh-inventory", "crates/inventory"),
];

fn height(layer: &str) -> Option<u8> {
    LAYERS.iter().find(|(l, _)| *l == layer).map(|(_, h)| *h)
}

/// A package's height: a layer's crate, or `mesh`, above them all.
fn package_height(package: &str) -> Option<u8> {
    if package == "mesh" {
        return Some(u8::MAX);
    }
    let (layer, _, _) = CRATES.iter().find(|(_, p, _)| *p == package)?;
    height(layer)
}

/// Every `crate::NAME` a line of code names (comments are not code).
fn named(line: &str) -> Vec<&str> {
    let code = line.split("//").next().unwrap_or_default();
    code.match_indices("crate::")
        .map(|(at, _)| {
            let rest = &code[at + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// Every package a manifest depends on (dependencies of every kind and target), as it names it:
/// the key, or `package = "…"` where the key renames it.
fn depends_on(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line.trim_matches(['[', ']']).ends_with("dependencies");
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !in_dependencies || line.starts_with('#') {
            continue;
        }
        let renamed = value
            .split_once("package")
            .and_then(|(_, rest)| rest.split('"').nth(1));
        let key = key.trim().split('.').next().unwrap_or_default();
        out.push(renamed.unwrap_or(key).to_string());
    }
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_file_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut upward = Vec::new();
    let in_src = LAYERS
        .iter()
        .filter(|(l, _)| !CRATES.iter().any(|(c, _, _)| c == l));
    for (layer, own) in in_src {
        let mut list = Vec::new();
        files(&src.join(layer), &mut list);
        assert!(
            !list.is_empty(),
            "src/{layer} has no sources: is the layout moved?"
        );
        for file in list {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                for name in named(line) {
                    if height(name).is_some_and(|h| h > *own) {
                        upward.push(format!(
                            "{}:{}: {layer} names crate::{name}",
                            file.strip_prefix(&src).unwrap().display(),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports of a higher layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_layer_crate_depends_on_a_layer_above_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut upward = Vec::new();
    for (layer, package, folder) in CRATES {
        let manifest = std::fs::read_to_string(root.join(folder).join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains(&format!("name = \"{package}\"")),
            "{folder}/Cargo.toml is not {package}: is the layout moved?"
        );
        let own = height(layer).unwrap();
        for dependency in depends_on(&manifest) {
            if package_height(&dependency).is_some_and(|h| h >= own) {
                upward.push(format!(
                    "{folder}/Cargo.toml: {package} depends on {dependency}"
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "crates that depend on their own layer or a higher one:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_rule_sees_a_name_in_code_and_not_in_a_comment() {
    assert_eq!(
        named("use crate::plan::Plan; let x = crate::deploy::y;"),
        vec!["plan", "deploy"]
    );
    assert!(named("// see crate::cli for why").is_empty());
    assert!(named("//! crate::push answers it").is_empty());
}

#[test]
fn the_manifest_rule_sees_every_kind_of_dependency_and_a_renamed_one() {
    let manifest = r#"
[package]
name = "mesh-ssh"
version = "0.1.0"

[dependencies]
mesh-wire.workspace = true
libc = "0.2"
# mesh = { path = "../.." }

[dev-dependencies]
up = { package = "mesh-inventory", path = "../inventory" }

[target.'cfg(unix)'.build-dependencies]
mesh = { path = "../.." }
"#;
    assert_eq!(
        depends_on(manifest),
        vec!["mesh-wire", "libc", "mesh-inventory", "mesh"]
    );
}
