//! Unified diffs of file content, coloured on a terminal.

use similar::{ChangeTag, TextDiff};

use super::visible;

/// The diff from `old` to `new` of the file at `path`; empty when they are equal. Content that is
/// not text is summarised, never dumped; control characters in text are shown, not sent to the
/// terminal.
pub fn render(path: &str, old: &str, new: &str, color: bool) -> String {
    if old == new {
        return String::new();
    }
    if old.contains('\0') || new.contains('\0') {
        return format!("binary file {} changes\n", visible(path));
    }
    let diff = TextDiff::from_lines(old, new);
    let mut out = String::new();
    let style = |text: String, tag: Option<ChangeTag>| -> String {
        let s = console::style(text).force_styling(color);
        match tag {
            Some(ChangeTag::Delete) => s.red().to_string(),
            Some(ChangeTag::Insert) => s.green().to_string(),
            Some(ChangeTag::Equal) => s.to_string(),
            None => s.cyan().to_string(),
        }
    };
    // a path is absolute; a unit is not, and still reads as a/<unit>
    let slash = if path.starts_with('/') { "" } else { "/" };
    let path = visible(path);
    out.push_str(&style(
        format!("--- a{slash}{path}"),
        Some(ChangeTag::Delete),
    ));
    out.push('\n');
    out.push_str(&style(
        format!("+++ b{slash}{path}"),
        Some(ChangeTag::Insert),
    ));
    out.push('\n');
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&style(hunk.header().to_string(), None));
        out.push('\n');
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            let line = change.to_string_lossy();
            let line = line.strip_suffix('\n').unwrap_or(&line);
            out.push_str(&style(
                format!("{sign}{}", visible(line)),
                Some(change.tag()),
            ));
            out.push('\n');
            if change.missing_newline() {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_content_has_no_diff() {
        assert_eq!(render("/etc/x", "a\n", "a\n", false), "");
    }

    #[test]
    fn a_changed_line_is_shown_with_headers() {
        let d = render("/etc/x", "a\nb\n", "a\nc\n", false);
        assert_eq!(d, "--- a/etc/x\n+++ b/etc/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
    }

    #[test]
    fn an_escape_sequence_in_content_is_shown_not_sent() {
        let d = render("/etc/x", "a\n", "a\n\u{1b}]0;owned\u{7}\u{1b}[2J\n", false);
        assert!(!d.contains('\u{1b}') && !d.contains('\u{7}'), "{d:?}");
        assert!(d.contains("+\\u{1b}]0;owned\\u{7}\\u{1b}[2J\n"), "{d:?}");
    }
}
