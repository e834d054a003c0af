//! Templates: text with `${name}` where a setting's effective value goes.
//!
//! A template is parsed when its module is loaded, so a reference to a setting the module does not
//! declare is refused there, naming the file and the line, not found at push time. `$${` writes a
//! literal `${`.
//!
//! In a JSON `keys` resource a string that is one lone `${name}` takes the value with its type (a
//! list stays a list); `${name:text}` asks for the value as text instead, for software that wants
//! a number as a string (Docker's `log-opts`). In a text file both read the same. A list is
//! written into text in one of the list forms of [`super::form`].

use super::form::{self, Form};

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// Why a template does not parse, naming its line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("line {line}: `${{` is never closed")]
    Unclosed { line: usize },
    #[error("line {line}: {why}")]
    Form { line: usize, why: form::FormError },
    #[error("line {line}: `${{{inner}}}` names no setting")]
    NoName { line: usize, inner: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    /// What it reads, how it is written, and the line it is on.
    Ref(String, Form, usize),
}

impl Template {
    /// Parses `text`; an error says the line and what is wrong.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
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
                let end = form::closing(tail).ok_or(TemplateError::Unclosed { line })?;
                let inner = tail[..end].trim();
                let (name, form) =
                    Form::split(inner).map_err(|why| TemplateError::Form { line, why })?;
                if name.is_empty() || name.contains(char::is_whitespace) {
                    return Err(TemplateError::NoName {
                        line,
                        inner: inner.to_string(),
                    });
                }
                if !literal.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut literal)));
                }
                parts.push(Part::Ref(name.to_string(), form, line));
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
            if let Part::Ref(name, ..) = part
                && !seen.contains(&name.as_str())
            {
                seen.push(name);
            }
        }
        seen
    }

    /// The references that write their value as it is (no list form), each with its line: a
    /// list or object setting there would be written as JSON.
    pub fn unformatted(&self) -> Vec<(&str, usize)> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Ref(name, form, line) if !form.writes_lists() => Some((name.as_str(), *line)),
                _ => None,
            })
            .collect()
    }

    /// Fills the template; `lookup` answers each name as text (every name was checked at load).
    pub fn render(&self, mut lookup: impl FnMut(&str) -> String) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Ref(name, ..) => out.push_str(&lookup(name)),
            }
        }
        out
    }

    /// Fills the template from resolved values, each written in the form its reference asks.
    pub fn fill(&self, values: &std::collections::BTreeMap<String, serde_json::Value>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Ref(name, form, _) => {
                    if let Some(value) = values.get(name) {
                        out.push_str(&form.write(value));
                    }
                }
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
                Part::Ref(name, form, _) => form.source(name),
            })
            .collect()
    }

    /// What it says when it reads nothing (no `${…}`): a literal field, checked at `module
    /// check` by the same rule the plan checks it by once filled in.
    pub fn literal(&self) -> Option<String> {
        self.references()
            .is_empty()
            .then(|| self.render(|_| String::new()))
    }

    /// The setting this template is, when it is nothing but one `${name}` (without `:text`): its
    /// value then keeps its type in a JSON document.
    pub fn lone_reference(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Ref(name, Form::Plain, _)] => Some(name),
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
    fn a_list_can_be_written_as_words() {
        let t = Template::parse("DNS=${dns:words}\nraw=${dns}\n").unwrap_or_else(|e| panic!("{e}"));
        let mut values = std::collections::BTreeMap::new();
        values.insert("dns".to_string(), serde_json::json!(["9.9.9.9", "1.1.1.1"]));
        assert_eq!(
            t.fill(&values),
            "DNS=9.9.9.9 1.1.1.1\nraw=[\"9.9.9.9\",\"1.1.1.1\"]\n"
        );
        assert_eq!(t.references(), vec!["dns"]);
    }

    #[test]
    fn an_unclosed_reference_names_its_line() {
        let err = Template::parse("ok\nno ${x\n").err();
        assert_eq!(err, Some(TemplateError::Unclosed { line: 2 }));
        let said = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(said.starts_with("line 2:"), "{said}");
    }
}
