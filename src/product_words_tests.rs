//! The docs, the benches and the code's comments speak of the product, not of how it was made: a
//! reader of `docs/performance.md` or of a test's `//!` meets the behaviour by name, never a
//! numbered development step (`issue 25`, `stop 38`) they cannot look up.

use std::path::{Path, PathBuf};

/// The folders and files whose text is read: every doc, bench and source comment.
const ROOTS: &[&str] = &[
    "README.md",
    "docs",
    "catalogue",
    "bench",
    "src",
    "crates",
    "host/src",
    "wire/src",
    "tests",
];

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let p = entry.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "target" || name.starts_with('.') || name.ends_with(".snap") {
            continue;
        }
        files(&p, out);
    }
}

/// A numbered step of the project's own history in `line`: `issue N` or `stop N`, any case.
fn numbered_step(line: &str) -> Option<String> {
    let lower = line.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).find_map(|w| {
        (matches!(w[0], "issue" | "stop") && w[1].chars().all(|c| c.is_ascii_digit()))
            .then(|| format!("{} {}", w[0], w[1]))
    })
}

/// Whether `line` of `file` is prose: a Markdown or bench line, or a comment in Rust.
fn prose(file: &Path, line: &str) -> bool {
    file.extension().is_none_or(|e| e != "rs") || line.trim_start().starts_with("//")
}

#[test]
fn no_doc_bench_or_comment_names_a_numbered_development_step() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    for r in ROOTS {
        files(&root.join(r), &mut all);
    }
    let this = root.join(file!());
    let mut found = Vec::new();
    for file in all.iter().filter(|f| **f != this) {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if prose(file, line)
                && let Some(step) = numbered_step(line)
            {
                found.push(format!("{}:{}: {step}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "name the behaviour, not the step that made it:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_step_is_found_in_any_case_and_a_stop_of_a_unit_is_not() {
    assert_eq!(
        numbered_step("(Issue 25, item 4)").as_deref(),
        Some("issue 25")
    );
    assert_eq!(
        numbered_step("### Paying (stop 39)").as_deref(),
        Some("stop 39")
    );
    assert_eq!(numbered_step("a stop of web.service"), None);
}
