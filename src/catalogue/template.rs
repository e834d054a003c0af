//! File templates: text with `${name}` where a setting's effective value goes.
//!
//! A template is parsed when its module is loaded, so a reference to a setting the module does not
//! declare is refused there, naming the file and the line, not found at push time. `$${` writes a
//! literal `${`.

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Ref(String),
}

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
                let name = tail[..end].trim();
                if name.is_empty() || name.contains(char::is_whitespace) {
                    return Err(format!("line {line}: `${{{name}}}` names no setting"));
                }
                if !literal.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut literal)));
                }
                parts.push(Part::Ref(name.to_string()));
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
            if let Part::Ref(name) = part
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
                Part::Ref(name) => out.push_str(&lookup(name)),
            }
        }
        out
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
    fn an_unclosed_reference_names_its_line() {
        let err = Template::parse("ok\nno ${x\n").err().unwrap_or_default();
        assert!(err.starts_with("line 2:"), "{err}");
    }
}
