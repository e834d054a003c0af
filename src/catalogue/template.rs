//! Templates: text with `${name}` where a setting's effective value goes.
//!
//! A template is parsed when its module is loaded, so a reference to a setting the module does not
//! declare is refused there, naming the file and the line, not found at push time. `$${` writes a
//! literal `${`.
//!
//! In a JSON `keys` resource a string that is one lone `${name}` takes the value with its type (a
//! list stays a list); `${name:text}` asks for the value as text instead, for software that wants
//! a number as a string (Docker's `log-opts`). In a text file both read the same.

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    /// A setting's name, and whether `:text` asked for its value as text.
    Ref(String, bool),
}

/// The modifier that asks for a value as text.
const AS_TEXT: &str = ":text";

impl Template {
    /// Parses `text`; an error says the line and what is wrong.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            literal.push_str(&rest[..at]);
            let after = &rest[at..];
            if let Some(tail) = after.strip_prefix("$${") {
                literal.push_str("${");
                rest = tail;
            } else if let Some(tail) = after.strip_prefix("${") {
                let line = text[..text.len() - after.len()].matches('\n').count() + 1;
                let end = tail
                    .find('}')
                    .ok_or_else(|| format!("line {line}: `${{` is never closed"))?;
                let inner = tail[..end].trim();
                let (name, as_text) = match inner.strip_suffix(AS_TEXT) {
                    Some(n) => (n, true),
                    None => (inner, false),
                };
                if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == ':') {
                    return Err(format!("line {line}: `${{{inner}}}` names no setting"));
                }
                if !literal.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut literal)));
                }
                parts.push(Part::Ref(name.to_string(), as_text));
                rest = &tail[end + 1..];
            } else {
                literal.push('$');
                rest = &after[1..];
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Ok(Template { parts })
    }

    /// The names the template reads, in order of first use.
    pub fn references(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        for part in &self.parts {
            if let Part::Ref(name, _) = part
                && !seen.contains(&name.as_str())
            {
                seen.push(name);
            }
        }
        seen
    }

    /// Fills the template; `lookup` answers each name (every name was checked at load).
    pub fn render(&self, mut lookup: impl FnMut(&str) -> String) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Ref(name, _) => out.push_str(&lookup(name)),
            }
        }
        out
    }

    /// The template as written, for docs.
    pub fn source_text(&self) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.replace("${", "$${"),
                Part::Ref(name, true) => format!("${{{name}:text}}"),
                Part::Ref(name, false) => format!("${{{name}}}"),
            })
            .collect()
    }

    /// The setting this template is, when it is nothing but one `${name}` (without `:text`): its
    /// value then keeps its type in a JSON document.
    pub fn lone_reference(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Ref(name, false)] => Some(name),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_found_and_filled() {
        let t = Template::parse("a ${x} b ${y} ${x} $$5 $${lit}").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.references(), vec!["x", "y"]);
        assert_eq!(t.render(|n| n.to_uppercase()), "a X b Y X $$5 ${lit}");
    }

    #[test]
    fn a_lone_reference_keeps_its_type_unless_asked_for_text() {
        let lone = Template::parse("${dns}").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lone.lone_reference(), Some("dns"));
        let text = Template::parse("${max:text}").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text.lone_reference(), None);
        assert_eq!(text.references(), vec!["max"]);
        assert_eq!(text.render(|_| "3".into()), "3");
        assert!(Template::parse("${a:b}").is_err());
    }

    #[test]
    fn an_unclosed_reference_names_its_line() {
        let err = Template::parse("ok\nno ${x\n").err().unwrap_or_default();
        assert!(err.starts_with("line 2:"), "{err}");
    }
}
