//! Sizes a reader can hold at once: no function over 80 lines and no source file over 500, in
//! the operator, its crates, the wire format and the helper (`tests/` is the end-to-end suite,
//! where a test reads as the story it checks and may run longer). A test function (`#[test]`,
//! `#[tokio::test]`) is not held to the function length either.
//!
//! Functions are found as rustfmt lays code out: a `fn` line at some indent, its body closed by
//! a `}` alone at that indent (or on its own line when the body fits on one).

use std::path::{Path, PathBuf};

const MAX_FUNCTION_LINES: usize = 80;
const MAX_FILE_LINES: usize = 500;
/// The folders under the workspace's root whose `.rs` files are held to the sizes.
const ROOTS: &[&str] = &["src", "crates", "host/src", "wire/src"];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.ends_with("target") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The name of the function a line of code begins, if it begins one.
fn function_name(line: &str) -> Option<&str> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return None;
    }
    let mut words = code.split_whitespace();
    loop {
        let word = words.next()?;
        match word {
            "fn" => {
                let name = words.next()?;
                let end = name.find(['(', '<']).unwrap_or(name.len());
                return Some(&name[..end]);
            }
            "pub" | "const" | "async" | "unsafe" | "extern" | "\"C\"" => {}
            w if w.starts_with("pub(") => {}
            _ => return None,
        }
    }
}

/// Whether the attributes just above line `at` mark a test.
fn is_test(lines: &[&str], at: usize) -> bool {
    lines[..at]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
        .any(|l| l == "#[test]" || l.starts_with("#[tokio::test"))
}

/// The number of lines of the function whose `fn` is line `at`; `None` for one without a body.
fn length(lines: &[&str], at: usize) -> Option<usize> {
    let line = lines[at];
    let indent = &line[..line.len() - line.trim_start().len()];
    let open = (at..lines.len()).find(|&i| lines[i].contains('{') || lines[i].ends_with(';'))?;
    if !lines[open].contains('{') {
        return None;
    }
    let braces = |l: &str, c: char| l.matches(c).count();
    if braces(lines[open], '{') == braces(lines[open], '}') {
        return Some(open - at + 1);
    }
    let close = format!("{indent}}}");
    let end = (open..lines.len()).find(|&i| lines[i].trim_end() == close)?;
    Some(end - at + 1)
}

/// Every function of `text` longer than the limit, as `(line, name, length)`.
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    (0..lines.len())
        .filter_map(|at| {
            let name = function_name(lines[at])?;
            if is_test(&lines, at) {
                return None;
            }
            let n = length(&lines, at)?;
            (n > MAX_FUNCTION_LINES).then(|| (at + 1, name.to_string(), n))
        })
        .collect()
}

#[test]
fn no_function_outside_the_tests_runs_over_80_lines_and_no_source_file_over_500() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ROOTS {
        sources(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 100,
        "the sources were not found under {root:?}"
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let shown = file.strip_prefix(root).unwrap_or(file).display();
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            found.push(format!("{shown}: {lines} lines (at most {MAX_FILE_LINES})"));
        }
        for (line, name, n) in long_functions(&text) {
            found.push(format!(
                "{shown}:{line}: fn {name} is {n} lines (at most {MAX_FUNCTION_LINES})"
            ));
        }
    }
    assert!(found.is_empty(), "too long:\n{}", found.join("\n"));
}

#[test]
fn a_long_function_is_found_and_a_test_one_line_one_or_a_bodiless_one_is_not() {
    let body = "    let x = 1;\n".repeat(81);
    let long = format!("pub(crate) fn long(a: u8) -> u8 {{\n{body}    x\n}}\n");
    assert_eq!(long_functions(&long), vec![(1, "long".to_string(), 84)]);
    let test = format!("#[test]\n{long}");
    assert!(long_functions(&test).is_empty());
    let short = "impl A {\n    fn one(&self) -> u8 { 1 }\n    fn decl(&self);\n}\n";
    assert!(long_functions(short).is_empty());
    let spaced = format!("fn a() {{\n{body}}}\n\n// fn b() {{\n");
    assert_eq!(long_functions(&spaced), vec![(1, "a".to_string(), 83)]);
}
