//! Whether the settings a file gives are the ones in force. A daemon that takes the first value
//! it reads for a keyword (sshd) lets an earlier drop-in, or a line of its main file above the
//! include, win over the mesh's file: a setting would be reported applied and not be in force.
//! The resource says how to ask the daemon ([`Effective`]); the helper compares, keyword by
//! keyword, what the whole configuration gives with what the file alone gives, and names the
//! file that shadows a setting. The daemon's printout applies no conditional block (sshd's
//! `Match`), so the helper also reads every other file the daemon reads and refuses a `Match`
//! block that sets a keyword the file gives: the mesh's value would not hold for the
//! connections it matches.

use super::Failure;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mesh_wire::Effective;

use crate::child::Bounded as _;
use crate::files;
use crate::record::Paths;

/// Checks that every setting the file at `path` gives is in force, for every connection; an
/// error names the first one that is not, the file and line that shadow or override it, and the
/// fix.
pub(super) fn check(
    path: &str,
    effective: &Effective,
    paths: &Paths,
    deadline: Duration,
) -> Result<(), Failure> {
    let text = match paths.machine.read(Path::new(path)) {
        Ok(Some(found)) => String::from_utf8_lossy(&found.bytes).into_owned(),
        Ok(None) => return Ok(()),
        Err(e) => return Err(format!("cannot read it back to check it is in force: {e}").into()),
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
    files::HOST
        .write_atomically(&alone_file, text.as_bytes(), Some(files::root_ids()), 0o600)
        .map_err(|e| format!("cannot write a copy to check it alone: {e}"))?;
    let mut argv = effective.show.clone();
    argv.extend(effective.alone.iter().cloned());
    argv.push(alone_file.display().to_string());
    let alone = show(&argv, deadline);
    let _ = files::HOST.remove(&alone_file);
    let alone = alone?;
    let others = read_too(&paths.machine, Path::new(path), &effective.read_first);
    for (shown, keyword) in &given {
        let wanted = values(&alone, keyword);
        // a keyword the daemon prints under another name cannot be compared
        if wanted.is_empty() || values(&whole, keyword) == wanted {
            continue;
        }
        let by = shadowed_by(shadowing(&others, keyword));
        return Err(format!(
            "{shown} is not in force: {by}, and `{}` shows the first value it reads; nothing \
             was reloaded: remove that line, or give the same value in the mesh's settings",
            effective.show.join(" ")
        )
        .into());
    }
    if let Some(found) = conditional(&others, &given) {
        return Err(format!(
            "a Match block at {}:{} sets {} for some connections (line {}: `{}`): the mesh's \
             value would not hold for them; nothing was reloaded: remove it or give the value \
             there",
            found.file.display(),
            found.block,
            found.shown,
            found.line,
            found.text
        )
        .into());
    }
    Ok(())
}

/// Each keyword the file gives, as written and lower-cased: the first word of every line that
/// is not blank or a comment.
fn keywords(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(word) = first_word(line) {
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
fn show(argv: &[String], deadline: Duration) -> Result<String, Failure> {
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
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Where a file stands among those the daemon reads, next to ours.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    /// A file of our directory that sorts before ours: read before it.
    Before,
    /// One of `read_first`: its lines may stand above or below the include.
    Main,
    /// A file of our directory that sorts after ours.
    After,
}

/// Another file the daemon reads, and its text.
struct Other {
    file: PathBuf,
    place: Place,
    text: String,
}

/// Every other file the daemon reads, each once: the files of `path`'s directory with its
/// extension that sort before it, then `read_first`, then the files of the directory that sort
/// after it. A file that cannot be read is left out: the daemon's own check already read it.
fn read_too(root: &files::Root, path: &Path, read_first: &[String]) -> Vec<Other> {
    let text = |file: &Path| {
        let found = root.read(file).ok()??;
        Some(String::from_utf8_lossy(&found.bytes).into_owned())
    };
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let mut dir_files: Vec<PathBuf> = std::fs::read_dir(root.real(dir))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| dir.join(e.file_name()))
                .filter(|p| p.extension() == path.extension())
                .filter(|p| p.file_name().is_some_and(|n| n != name))
                .collect()
        })
        .unwrap_or_default();
    dir_files.sort();
    let (earlier, later): (Vec<PathBuf>, Vec<PathBuf>) = dir_files
        .into_iter()
        .partition(|p| p.file_name().is_some_and(|n| n < name));
    let tagged = earlier
        .into_iter()
        .map(|f| (f, Place::Before))
        .chain(read_first.iter().map(|f| (PathBuf::from(f), Place::Main)))
        .chain(later.into_iter().map(|f| (f, Place::After)));
    tagged
        .filter_map(|(file, place)| {
            let text = text(&file)?;
            Some(Other { file, place, text })
        })
        .collect()
}

/// One line of a file that sets a keyword.
struct Setting<'a> {
    /// Its line number, from 1.
    line: usize,
    keyword: &'a str,
    text: &'a str,
    /// The line number of the `Match` that opens the block it is in; `None`: it applies to
    /// every connection (outside any block, or under `Match all`, which the printout applies).
    block: Option<usize>,
}

/// The lines of `text` that set a keyword. A `Match` block ends at the next `Match` line or at
/// the end of its file.
fn settings(text: &str) -> Vec<Setting<'_>> {
    let mut block = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        let mut words = words(line);
        let Some(keyword) = words.next() else {
            continue;
        };
        if keyword.eq_ignore_ascii_case("match") {
            let all = words.next().is_some_and(|w| w.eq_ignore_ascii_case("all"))
                && words.next().is_none_or(|w| w.starts_with('#'));
            block = (!all).then_some(i + 1);
            continue;
        }
        out.push(Setting {
            line: i + 1,
            keyword,
            text: line,
            block,
        });
    }
    out
}

/// The keyword of a line, `None` for a blank line or a comment.
fn first_word(line: &str) -> Option<&str> {
    words(line).next()
}

/// The words of a line, none for a comment; sshd also reads `Keyword=value`.
fn words(line: &str) -> impl Iterator<Item = &str> {
    let line = if line.starts_with('#') { "" } else { line };
    line.split(|c: char| c.is_whitespace() || c == '=')
        .filter(|w| !w.is_empty())
}

/// The first line outside a `Match` block that gives `keyword` in a file read before ours or in
/// `read_first`, with the file and its line number.
fn shadowing<'a>(others: &'a [Other], keyword: &str) -> Option<(&'a Other, usize, &'a str)> {
    others
        .iter()
        .filter(|o| o.place != Place::After)
        .find_map(|other| {
            settings(&other.text)
                .into_iter()
                .find(|s| s.block.is_none() && s.keyword.eq_ignore_ascii_case(keyword))
                .map(|s| (other, s.line, s.text))
        })
}

/// Which line shadows a setting, as the refusal says it: a line of `read_first` may stand below
/// the include, so it "also" sets the keyword rather than first.
fn shadowed_by(found: Option<(&Other, usize, &str)>) -> String {
    match found {
        Some((other, n, line)) if other.place == Place::Before => {
            format!("{}:{n} sets it first (`{line}`)", other.file.display())
        }
        Some((other, n, line)) => format!("{}:{n} also sets it (`{line}`)", other.file.display()),
        None => "a file read before it sets it".to_string(),
    }
}

/// A `Match` block that sets a keyword the mesh's file gives.
struct Conditional {
    file: PathBuf,
    /// The line number of its `Match` line.
    block: usize,
    /// The keyword as the mesh's file writes it.
    shown: String,
    line: usize,
    text: String,
}

/// The first `Match` block, in any file the daemon reads, that sets one of `given`.
fn conditional(others: &[Other], given: &[(String, String)]) -> Option<Conditional> {
    others.iter().find_map(|other| {
        settings(&other.text).into_iter().find_map(|s| {
            let block = s.block?;
            let (shown, _) = given
                .iter()
                .find(|(_, lower)| s.keyword.eq_ignore_ascii_case(lower))?;
            Some(Conditional {
                file: other.file.clone(),
                block,
                shown: shown.clone(),
                line: s.line,
                text: s.text.to_string(),
            })
        })
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
            "# MaxAuthTries 1\nmaxauthtries 3\nMatch User x\nPort 2\n",
        )
        .unwrap();
        std::fs::write(d.join("90-late.conf"), "MaxAuthTries 9\nAllowUsers z\n").unwrap();
        std::fs::write(d.join("main"), "MaxAuthTries 2\nPort 22\n").unwrap();
        let ours = d.join("50-mesh.conf");
        let main = [d.join("main").display().to_string()];
        let others = read_too(&files::HOST, &ours, &main);
        let (other, n, line) = shadowing(&others, "maxauthtries").unwrap();
        assert_eq!(
            (&other.file, other.place),
            (&d.join("10-early.conf"), Place::Before)
        );
        assert_eq!((n, line), (2, "maxauthtries 3"));
        // a line in a Match block sets nothing for every connection
        let (other, n, _) = shadowing(&others, "port").unwrap();
        assert_eq!(
            (&other.file, other.place, n),
            (&d.join("main"), Place::Main, 2)
        );
        // a file read after ours does not shadow it
        assert!(shadowing(&others, "allowusers").is_none());
        let said = shadowed_by(shadowing(&others, "maxauthtries"));
        assert!(
            said.ends_with("10-early.conf:2 sets it first (`maxauthtries 3`)"),
            "{said}"
        );
        // a line of the main file may stand below the include: not "first"
        let said = shadowed_by(shadowing(&others, "port"));
        assert!(said.ends_with("main:2 also sets it (`Port 22`)"), "{said}");
    }

    fn given(keywords: &[&str]) -> Vec<(String, String)> {
        keywords
            .iter()
            .map(|k| (k.to_string(), k.to_ascii_lowercase()))
            .collect()
    }

    #[test]
    fn a_match_block_in_an_earlier_or_a_later_file_is_found_with_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ours = d.join("50-mesh.conf");
        std::fs::write(&ours, "MaxAuthTries 4\n").unwrap();
        std::fs::write(
            d.join("10-x.conf"),
            "Match User *\nAllowUsers *\nPasswordAuthentication yes\n",
        )
        .unwrap();
        let wanted = given(&["PasswordAuthentication", "MaxAuthTries"]);
        let found = conditional(&read_too(&files::HOST, &ours, &[]), &wanted).unwrap();
        assert_eq!(found.file, d.join("10-x.conf"));
        assert_eq!((found.block, found.line), (1, 3));
        assert_eq!(found.shown, "PasswordAuthentication");
        assert_eq!(found.text, "PasswordAuthentication yes");

        std::fs::remove_file(d.join("10-x.conf")).unwrap();
        std::fs::write(
            d.join("90-late.conf"),
            "MaxAuthTries 9\n# Match Address *\n  match Address 10.0.0.0/8\n\tmaxauthtries=8\n",
        )
        .unwrap();
        let found = conditional(&read_too(&files::HOST, &ours, &[]), &wanted).unwrap();
        assert_eq!(found.file, d.join("90-late.conf"));
        assert_eq!((found.block, found.line), (3, 4));
        assert_eq!(found.shown, "MaxAuthTries");
    }

    #[test]
    fn match_all_and_the_end_of_a_block_or_of_its_file_leave_settings_global() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ours = d.join("50-mesh.conf");
        // a block ends at the end of its file: the next file's line is global
        std::fs::write(d.join("10-a.conf"), "Match User eve\nBanner none\n").unwrap();
        std::fs::write(d.join("20-b.conf"), "MaxAuthTries 3\n").unwrap();
        // a block ends at the next Match: `Match all` sets for every connection
        std::fs::write(
            d.join("main"),
            "Match Group g\nX11Forwarding no\nMatch=All # every one\nPasswordAuthentication no\n",
        )
        .unwrap();
        let main = [d.join("main").display().to_string()];
        let others = read_too(&files::HOST, &ours, &main);
        let wanted = given(&["PasswordAuthentication", "MaxAuthTries"]);
        assert!(conditional(&others, &wanted).is_none());
        let found = conditional(&others, &given(&["X11Forwarding", "Banner"])).unwrap();
        assert_eq!(
            (found.file, found.block, found.line),
            (d.join("10-a.conf"), 1, 2)
        );
    }
}
