//! Text from a module or a machine made safe for a terminal: a template, a file's content, a
//! helper's report can hold escape sequences that would move the cursor, rewrite what the
//! operator reads, or set the window title. Everything printed from there goes through
//! [`visible`]; JSON output needs nothing (serde escapes control characters itself).

use std::borrow::Cow;

/// `text` with every control character but tab shown as an escape (`\u{1b}`, `\r`, `\n`), so a
/// terminal shows it instead of obeying it.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn hidden(c: char) -> bool {
    c.is_control() && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(visible("plain\ttext"), "plain\ttext");
        assert_eq!(visible("\u{1b}[2Jgone"), "\\u{1b}[2Jgone");
        assert_eq!(visible("a\rb\nc\u{7}"), "a\\rb\\nc\\u{7}");
        assert_eq!(visible("\u{9b}31m"), "\\u{9b}31m");
    }
}
