//! The layers only point down: a file of one layer names (`crate::LAYER`) only its own layer
//! and the layers below it, so the core reads from the bottom up. The rule, over the sources:
//! wire, then ssh (reaching a machine), catalogue (what modules say), inventory (what the
//! operator stored), resolve, plan, push (the transport of one node's run), deploy (a rollout
//! of many), and the CLI and the lab on top.

use std::path::Path;

/// Each layer (a folder of `src/`) with its height: a file may name a layer no higher.
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

fn height(layer: &str) -> Option<u8> {
    LAYERS.iter().find(|(l, _)| *l == layer).map(|(_, h)| *h)
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
    let mut checked = 0;
    for (layer, own) in LAYERS.iter().filter(|(l, _)| *l != "wire") {
        let mut list = Vec::new();
        files(&src.join(layer), &mut list);
        for file in list {
            checked += 1;
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
        checked > 100,
        "only {checked} files read: is the layout moved?"
    );
    assert!(
        upward.is_empty(),
        "imports of a higher layer:\n{}",
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
