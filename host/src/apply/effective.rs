//! Whether the settings a file gives are the ones in force. A daemon that takes the first value
//! it reads for a keyword (sshd) lets an earlier drop-in, or a line of its main file above the
//! include, win over the mesh's file: a setting would be reported applied and not be in force.
//! The resource says how to ask the daemon ([`Effective`]); the helper compares, keyword by
//! keyword, what the whole configuration gives with what the file alone gives, and names the
//! file that shadows a setting.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mesh_wire::Effective;

use crate::child::Bounded as _;
use crate::files;
use crate::record::Paths;

/// Checks that every setting the file at `path` gives is in force; an error names the first
/// one that is not, the file that shadows it, and the fix.
pub(super) fn check(
    path: &str,
    effective: &Effective,
    paths: &Paths,
    deadline: Duration,
) -> Result<(), String> {
    let text = match files::read(Path::new(path)) {
        Ok(Some(found)) => String::from_utf8_lossy(&found.bytes).into_owned(),
        Ok(None) => return Ok(()),
        Err(e) => return Err(format!("cannot read it back to check it is in force: {e}")),
    };
    let given = keywords(&text);
    if given.is_empty() {
        return Ok(());
    }
    let whole = show(&effective.show, deadline)?;
    // the file alone, as the daemon reads it: a copy in the helper's own (root's) directory
    let alone_file = paths.root.join(format!(
        "effective-{}",
        files::random_hex().map_err(|e| e.to_string())?
    ));
    files::write_atomically(&alone_file, text.as_bytes(), Some((0, 0)), 0o600)
        .map_err(|e| format!("cannot write a copy to check it alone: {e}"))?;
    let mut argv = effective.show.clone();
    argv.extend(effective.alone.iter().cloned());
    argv.push(alone_file.display().to_string());
    let alone = show(&argv, deadline);
    let _ = files::remove(&alone_file);
    let alone = alone?;
    for (shown, keyword) in given {
        let wanted = values(&alone, &keyword);
        // a keyword the daemon prints under another name cannot be compared
        if wanted.is_empty() || values(&whole, &keyword) == wanted {
            continue;
        }
        let by = match shadowing(path, &keyword, &effective.read_first) {
            Some((file, line)) => format!("{} sets it first (`{line}`)", file.display()),
            None => "a file read before it sets it".to_string(),
        };
        return Err(format!(
            "{shown} is not in force: {by}, and `{}` shows the first value it reads; nothing \
             was reloaded: remove that line, or give the same value in the mesh's settings",
            effective.show.join(" ")
        ));
    }
    Ok(())
}

/// Each keyword the file gives, as written and lower-cased: the first word of every line that
/// is not blank or a comment.
fn keywords(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        if let Some(word) = line.split_whitespace().next() {
            let lower = word.to_ascii_lowercase();
            if !out.iter().any(|(_, k)| *k == lower) {
                out.push((word.to_string(), lower));
            }
        }
    }
    out
}

/// The values `shown` (the daemon's `keyword value` lines) gives `keyword`, lower-cased.
fn values(shown: &str, keyword: &str) -> Vec<String> {
    let mut out: Vec<String> = shown
        .lines()
        .filter_map(|line| {
            let (word, rest) = line.trim().split_once(char::is_whitespace)?;
            word.eq_ignore_ascii_case(keyword)
                .then(|| rest.trim().to_ascii_lowercase())
        })
        .collect();
    out.sort();
    out
}

/// Runs the daemon's command that prints its effective settings.
fn show(argv: &[String], deadline: Duration) -> Result<String, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("the resource's `effective.show` names no command".into());
    };
    let out = Command::new(program)
        .args(args)
        .output_within(deadline)
        .map_err(|e| {
            format!(
                "cannot run `{}` to check it is in force: {e}",
                argv.join(" ")
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "`{}` failed, so whether it is in force is not known: {}",
            argv.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The first file read before `path` that gives `keyword`, and that line: the files of its
/// directory with its extension that sort before it, then `read_first`.
fn shadowing(path: &str, keyword: &str, read_first: &[String]) -> Option<(PathBuf, String)> {
    let path = Path::new(path);
    let (dir, name) = (path.parent()?, path.file_name()?);
    let mut earlier: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension() == path.extension())
        .filter(|p| p.file_name().is_some_and(|n| n < name))
        .collect();
    earlier.sort();
    earlier.extend(read_first.iter().map(PathBuf::from));
    earlier.into_iter().find_map(|file| {
        let found = files::read(&file).ok()??;
        let text = String::from_utf8_lossy(&found.bytes).into_owned();
        let line = text.lines().map(str::trim).find(|line| {
            !line.starts_with('#')
                && line
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.eq_ignore_ascii_case(keyword))
        })?;
        Some((file, line.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_the_first_words_of_lines_that_are_not_comments() {
        let text = "# sshd\nPasswordAuthentication no\n\n  AllowUsers a b\nallowusers c\n";
        let words: Vec<String> = keywords(text).into_iter().map(|(w, _)| w).collect();
        assert_eq!(words, ["PasswordAuthentication", "AllowUsers"]);
    }

    #[test]
    fn values_compare_whatever_the_case_and_order() {
        let shown = "allowusers B\nmaxauthtries 6\nallowusers a\n";
        assert_eq!(values(shown, "AllowUsers"), ["a", "b"]);
        assert!(values(shown, "port").is_empty());
    }

    #[test]
    fn the_shadowing_line_is_found_in_an_earlier_file_of_the_directory_first() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(
            d.join("10-early.conf"),
            "# MaxAuthTries 1\nmaxauthtries 3\n",
        )
        .unwrap();
        std::fs::write(d.join("90-late.conf"), "MaxAuthTries 9\n").unwrap();
        std::fs::write(d.join("main"), "MaxAuthTries 2\nPort 22\n").unwrap();
        let ours = d.join("50-mesh.conf").display().to_string();
        let main = [d.join("main").display().to_string()];
        let found = shadowing(&ours, "maxauthtries", &main).unwrap();
        assert_eq!(found, (d.join("10-early.conf"), "maxauthtries 3".into()));
        let found = shadowing(&ours, "port", &main).unwrap();
        assert_eq!(found.0, d.join("main"));
        assert!(shadowing(&ours, "allowusers", &main).is_none());
    }
}
