//! One home per resource kind in each layer: a kind's variant (`Spec::Sysctl`,
//! `ResourceDef::Sysctl`, `Entry::Sysctl`) is named only in its enum's one list and in that
//! kind's own files, so that a new kind is one line in each list and one file per layer
//! (docs/layout.md, "A resource kind in every layer"). What every kind does is asked through
//! its layer's trait and the list's dispatch (`each_spec!`, `each_def!`, `each_entry!`), never by
//! matching the variants elsewhere.
//!
//! A kind's own files are those named after it (`sysctl.rs`, `apt_repository.rs`, or a folder
//! `process/`). Test code is left out (`tests.rs`, `*_tests.rs`, `testkit.rs`, `fixtures.rs`,
//! `tests/`, and a file's `#[cfg(test)]` module at its end): a test builds a resource of the kind
//! it is about, and adding a kind touches none of them.

use std::path::{Path, PathBuf};

/// Each enum of kinds: its name, the file holding its one list, and the line that opens the
/// list (its variants, one a line, follow until the closing brace).
const LISTS: &[(&str, &str, &str)] = &[
    ("Spec", "wire/src/kind.rs", "kinds! { $"),
    (
        "ResourceDef",
        "crates/catalogue/src/resources/mod.rs",
        "definitions! { $",
    ),
    ("Entry", "host/src/record.rs", "entries! { $"),
];

/// The folders whose sources are read: every layer and the helper.
const SOURCES: &[&str] = &["src", "wire/src", "crates", "host/src"];

/// The variants a list names, in its order: each `Name(Type),` line after `open`.
fn variants(list: &str, open: &str) -> Vec<String> {
    let Some(at) = list.find(open) else {
        return Vec::new();
    };
    list[at + open.len()..]
        .lines()
        .map(str::trim)
        .take_while(|l| *l != "}")
        .filter(|l| !l.starts_with("//") && !l.starts_with('#'))
        .filter_map(|l| l.split_once('(').map(|(name, _)| name))
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(str::to_string)
        .collect()
}

/// A variant's name as its files are named: `AptRepository` → `apt_repository`.
fn snake(variant: &str) -> String {
    let mut out = String::new();
    for (i, c) in variant.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Whether `path` is one of `kind`'s own files: named after it, or in a folder named after it.
fn own(path: &Path, kind: &str) -> bool {
    path.file_stem().is_some_and(|s| s == kind) || path.components().any(|c| c.as_os_str() == kind)
}

/// Whether `path` holds only test code.
fn test_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name == "testkit.rs"
        || name == "fixtures.rs"
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// Every line of `text` where `Enum::Variant` is named in code (not in a comment, not in the
/// file's test module at its end), with its number from 1.
fn naming(text: &str, name: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        let code = line.split("//").next().unwrap_or_default();
        let named = code.match_indices(name).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let after = code[at + name.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if named {
            out.push(n + 1);
        }
    }
    out
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
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
fn no_kind_is_named_outside_its_own_files_and_its_list() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    for dir in SOURCES {
        files(&root.join(dir), &mut sources);
    }
    let mut stray = Vec::new();
    for (enumeration, list_file, open) in LISTS {
        let list = std::fs::read_to_string(root.join(list_file)).unwrap();
        let kinds = variants(&list, open);
        assert!(
            kinds.len() >= 12,
            "{list_file}: {enumeration}'s list after {open:?} not found: is the layout moved?"
        );
        for file in &sources {
            let relative = file.strip_prefix(root).unwrap();
            if relative == Path::new(list_file) || test_file(relative) {
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            for kind in &kinds {
                if own(relative, &snake(kind)) {
                    continue;
                }
                for n in naming(&text, &format!("{enumeration}::{kind}")) {
                    stray.push(format!(
                        "{}:{n}: names {enumeration}::{kind} outside {list_file}'s list and \
                         the kind's own files",
                        relative.display()
                    ));
                }
            }
        }
    }
    assert!(
        stray.is_empty(),
        "a kind matched outside its home (ask its layer's trait through the list's dispatch):\n{}",
        stray.join("\n")
    );
}

#[test]
fn the_rule_reads_each_list_and_sees_a_variant_only_in_code() {
    let list = "kinds! { $\n    /// A file.\n    File(FileSpec),\n    #[serde(rename = \"x\")]\n    \
                AptRepository(AptRepositorySpec),\n}\nfn f() { Other(x) }";
    assert_eq!(variants(list, "kinds! { $"), vec!["File", "AptRepository"]);
    assert_eq!(snake("AptRepository"), "apt_repository");
    assert!(own(Path::new("host/src/apply/process/make.rs"), "process"));
    assert!(!own(Path::new("src/plan/content.rs"), "file"));
    let text =
        "let a = Spec::File(f); // Spec::Keys\nlet b = Spec::FileX;\n#[cfg(test)]\nSpec::File";
    assert_eq!(naming(text, "Spec::File"), vec![1]);
    assert!(naming(text, "Spec::Keys").is_empty());
}
