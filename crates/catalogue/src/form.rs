//! How a value is written where a template reads it. `${name}` writes a string bare and anything
//! else as JSON (alone in a JSON document, with its type); the forms say otherwise:
//! `:text` (as text, even alone in a JSON document), `:words` (a list's items separated by
//! spaces), `:join("SEP")` (by SEP), `:each("FORMAT")` (each item in FORMAT at its `{}`, one per
//! line) and `:each("FORMAT", "SEP")` (separated by SEP). A list setting written into text
//! without one of the list forms is refused when the module is loaded: JSON in a configuration
//! file or on a command line is never what was meant.

use serde_json::Value;

use super::setting::as_text;

/// One form, parsed from what follows the name in `${name:...}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Form {
    Plain,
    Text,
    Words,
    Join(String),
    Each { format: String, separator: String },
}

/// The forms that say how a list is written, for messages.
pub(crate) const LIST_FORMS: &str =
    r#":words, :join("SEP"), :each("FORMAT {}"), :each("FORMAT {}", "SEP")"#;

impl Form {
    /// The name and form inside `${...}`.
    pub(crate) fn split(inner: &str) -> Result<(&str, Form), FormError> {
        let Some((name, form)) = inner.split_once(':') else {
            return Ok((inner, Form::Plain));
        };
        let args = |call: &str| {
            form.strip_prefix(call)
                .and_then(|r| r.strip_prefix('('))
                .and_then(|r| r.strip_suffix(')'))
                .map(strings)
        };
        let parsed = match form {
            "text" => Form::Text,
            "words" => Form::Words,
            _ => match (args("join"), args("each")) {
                (Some(Ok(a)), _) if a.len() == 1 => Form::Join(a[0].clone()),
                (_, Some(Ok(a))) if (1..=2).contains(&a.len()) => {
                    if !a[0].contains("{}") {
                        return Err(FormError::NoPlace(form.to_string()));
                    }
                    Form::Each {
                        format: a[0].clone(),
                        separator: a.get(1).cloned().unwrap_or_else(|| "\n".into()),
                    }
                }
                (Some(Err(why)), _) | (_, Some(Err(why))) => {
                    return Err(FormError::Arguments {
                        form: form.to_string(),
                        why,
                    });
                }
                _ => return Err(FormError::NoForm(form.to_string())),
            },
        };
        Ok((name, parsed))
    }

    /// Whether it says how a list is written.
    pub(crate) fn writes_lists(&self) -> bool {
        !matches!(self, Form::Plain | Form::Text)
    }

    /// `value` written in this form.
    pub(crate) fn write(&self, value: &Value) -> String {
        let Value::Array(items) = value else {
            return match self {
                Form::Each { format, .. } => format.replace("{}", &as_text(value)),
                _ => as_text(value),
            };
        };
        let each = |sep: &str, f: &dyn Fn(&Value) -> String| {
            items.iter().map(f).collect::<Vec<_>>().join(sep)
        };
        match self {
            Form::Plain | Form::Text => as_text(value),
            Form::Words => each(" ", &as_text),
            Form::Join(sep) => each(sep, &as_text),
            Form::Each { format, separator } => {
                each(separator, &|i| format.replace("{}", &as_text(i)))
            }
        }
    }

    /// The reference as written, for docs.
    pub(crate) fn source(&self, name: &str) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        match self {
            Form::Plain => format!("${{{name}}}"),
            Form::Text => format!("${{{name}:text}}"),
            Form::Words => format!("${{{name}:words}}"),
            Form::Join(sep) => format!("${{{name}:join({})}}", q(sep)),
            Form::Each { format, separator } if separator == "\n" => {
                format!("${{{name}:each({})}}", q(format))
            }
            Form::Each { format, separator } => {
                format!("${{{name}:each({}, {})}}", q(format), q(separator))
            }
        }
    }
}

/// Where the `}` that closes a reference is in `tail` (after `${`): the first one outside a
/// quoted argument, so `:each("AllowUsers {}")` is one reference.
pub(crate) fn closing(tail: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (at, c) in tail.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(at),
            _ => {}
        }
    }
    None
}

/// Why a form's arguments are not a list of quoted strings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuoteError {
    #[error("{0:?} is not a quoted string")]
    NotQuoted(String),
    #[error("a quoted string is never closed")]
    Unclosed,
    #[error("only \\\", \\\\, \\n and \\t are escapes")]
    Escape,
    #[error("a comma with no string after it")]
    TrailingComma,
    #[error("{0:?} after a string: separate them with commas")]
    NoComma(String),
}

/// Why the form after a template's `${name:` is refused, quoting it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    #[error("`:{0}`: an each format says where the item goes with {{}}")]
    NoPlace(String),
    #[error("`:{form}`: {why}")]
    Arguments { form: String, why: QuoteError },
    #[error("`:{0}` is no form (forms: :text, {LIST_FORMS})")]
    NoForm(String),
}

/// Comma-separated quoted strings, with `\"`, `\\`, `\n` and `\t` escapes.
fn strings(text: &str) -> Result<Vec<String>, QuoteError> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let Some(body) = rest.strip_prefix('"') else {
            return Err(QuoteError::NotQuoted(rest.to_string()));
        };
        let mut s = String::new();
        let mut chars = body.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err(QuoteError::Unclosed),
                Some((at, '"')) => break at,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => s.push('\n'),
                    Some((_, 't')) => s.push('\t'),
                    Some((_, c @ ('"' | '\\'))) => s.push(c),
                    _ => return Err(QuoteError::Escape),
                },
                Some((_, c)) => s.push(c),
            }
        };
        out.push(s);
        rest = body[end + 1..].trim_start();
        if let Some(next) = rest.strip_prefix(',') {
            rest = next.trim_start();
            if rest.is_empty() {
                return Err(QuoteError::TrailingComma);
            }
        } else if !rest.is_empty() {
            return Err(QuoteError::NoComma(rest.to_string()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{Form, closing};
    use serde_json::json;

    fn form(inner: &str) -> Form {
        Form::split(inner)
            .map(|(_, f)| f)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn lists_are_joined_and_formatted_as_the_form_says() {
        let users = json!(["ana", "bo"]);
        assert_eq!(form("u:join(\", \")").write(&users), "ana, bo");
        assert_eq!(
            form("u:each(\"AllowUsers {}\")").write(&users),
            "AllowUsers ana\nAllowUsers bo"
        );
        assert_eq!(
            form("u:each(\"--collector.{}\", \" \")").write(&users),
            "--collector.ana --collector.bo"
        );
        assert_eq!(form("u:words").write(&users), "ana bo");
        assert_eq!(form("u").write(&users), "[\"ana\",\"bo\"]");
        assert_eq!(form("u:join(\"\\n\")").write(&json!([1, 2])), "1\n2");
        assert_eq!(form("u:each(\"x{}\")").write(&json!("one")), "xone");
        for f in [
            "u:join(\", \")",
            "u:each(\"a {}\", \";\")",
            "u:words",
            "u:text",
            "u",
        ] {
            let inner = &form(f).source("u");
            assert_eq!(form(&inner[2..inner.len() - 1]), form(f), "{inner}");
        }
    }

    #[test]
    fn a_form_that_cannot_be_is_refused_saying_why() {
        for (bad, why) in [
            ("u:joined(\",\")", "is no form"),
            ("u:join(,)", "not a quoted string"),
            ("u:join(\"a\" \"b\")", "separate them with commas"),
            ("u:each(\"no place\")", "{}"),
            ("u:join(\"open)", "never closed"),
            ("u:join(\"a\", \"b\")", "is no form"),
        ] {
            let e = Form::split(bad)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn a_brace_inside_quotes_does_not_close_the_reference() {
        assert_eq!(closing("u:each(\"A {}\")} rest"), Some(14));
        assert_eq!(closing("u:join(\"\\\"}\")}"), Some(13));
        assert_eq!(closing("u:join(\"}"), None);
    }

    #[test]
    fn a_refused_form_says_what_the_strings_said() {
        use super::{FormError, QuoteError};
        assert_eq!(
            Form::split(r#"u:join("\q")"#).err(),
            Some(FormError::Arguments {
                form: r#"join("\q")"#.into(),
                why: QuoteError::Escape
            })
        );
        assert_eq!(
            QuoteError::Escape.to_string(),
            r#"only \", \\, \n and \t are escapes"#
        );
        assert_eq!(
            FormError::NoPlace("each(\"x\")".into()).to_string(),
            "`:each(\"x\")`: an each format says where the item goes with {}"
        );
    }
}
