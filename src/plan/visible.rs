//! Text from a module or a machine made safe for a terminal: a template, a file's content, a
//! helper's report can hold escape sequences that would move the cursor, rewrite what the
//! operator reads, or set the window title. Everything printed from there goes through
//! [`visible`]; JSON output needs nothing (serde escapes control characters itself).

use std::borrow::Cow;

/// `text` with every control character but tab shown as an escape (`\u{1b}`, `\r`, `\n`), so a
/// terminal shows it instead of obeying it; so are the invisible format characters that reorder or
/// hide text (bidi overrides such as U+202E, zero-width spaces).
pub fn visible(text: &str) -> Cow<'_, str> {
    if !any_hidden(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.extend(c.escape_debug());
        } else if hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `text` has a [`hidden`] character, passing over printable ASCII and tab (most of what
/// a plan prints, and never hidden) a byte at a time: only the characters between are decoded.
/// Each byte found begins a character, as every byte before it in `rest` is one.
fn any_hidden(text: &str) -> bool {
    let mut rest = text;
    while let Some(i) = rest
        .bytes()
        .position(|b| b != b'\t' && !(b' '..b'\x7f').contains(&b))
    {
        let Some(c) = rest[i..].chars().next() else {
            return false;
        };
        if hidden(c) {
            return true;
        }
        rest = &rest[i + c.len_utf8()..];
    }
    false
}

fn hidden(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}' | '\u{feff}')
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
        // text that reads one way and is another
        assert_eq!(visible("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(visible("a\u{200b}b"), "a\\u{200b}b");
        assert_eq!(visible("plain — text\u{7f}"), "plain — text\\u{7f}");
        assert!(matches!(
            visible("plain — text"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(visible("\u{feff}x\u{2069}"), "\\u{feff}x\\u{2069}");
    }

    /// The byte-at-a-time look finds exactly the characters [`super::hidden`] names.
    #[test]
    fn every_hidden_character_is_found_and_no_other() {
        for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
            let text = format!("a{c}b");
            assert_eq!(super::any_hidden(&text), super::hidden(c), "{c:?}");
        }
    }
}
