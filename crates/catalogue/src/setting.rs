//! A declared setting: the one definition its type check, its CLI parsing, its docs (`mesh module
//! show`) and its cost all come from.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::resources::parse_cost;
use mesh_wire::Cost;

/// One setting a module takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// The key, as operators set it: lower case, digits and `-`.
    pub name: String,
    /// What values it takes.
    #[serde(rename = "type")]
    pub kind: SettingType,
    /// One sentence of what it means.
    pub meaning: String,
    /// Its default: a setting with one is a tunable; one without is the operator's to set.
    pub default: Option<Value>,
    /// A fact of the machine its default is instead (`"default-fact": "os.codename"`): a
    /// default that follows the machine's release. A setting with one is a tunable too.
    #[serde(rename = "default-fact", skip_serializing_if = "Option::is_none")]
    pub default_fact: Option<String>,
    /// What a change of its value costs the units that read it.
    pub cost: Cost,
    /// A `choice` setting's allowed values; empty for every other type.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

impl Setting {
    /// Whether a layer may hold `value` for it: [`SettingType::check`], and for a `choice` one of
    /// its choices. Refused: what a value looks like.
    pub fn check(&self, value: &Value) -> Result<(), ValueError> {
        self.kind.check(value)?;
        if self.admits(value) {
            Ok(())
        } else {
            Err(self.refusal())
        }
    }

    /// Whether `value` is of its type (and among its choices).
    pub fn admits(&self, value: &Value) -> bool {
        self.kind.admits(value)
            && (self.kind != SettingType::Choice
                || value
                    .as_str()
                    .is_some_and(|v| self.choices.iter().any(|c| c == v)))
    }

    /// What a value looks like, for refusals.
    pub fn expected(&self) -> String {
        self.refusal().to_string()
    }

    /// A value refused for not being what it takes: of its type, or one of its choices.
    fn refusal(&self) -> ValueError {
        match self.kind {
            SettingType::Choice => ValueError::NotAChoice {
                choices: self.choices.clone(),
            },
            kind => ValueError::NotOfType(kind),
        }
    }

    /// A value typed on a command line, checked.
    pub fn parse_value(&self, text: &str) -> Result<Value, ValueError> {
        let value = self.kind.parse_value(text)?;
        self.check(&value)?;
        Ok(value)
    }

    /// Its type as `module show` says it: `choice (a, b)` for a choice.
    pub fn type_text(&self) -> String {
        match self.kind {
            SettingType::Choice => format!("choice ({})", self.choices.join(", ")),
            kind => kind.as_str().to_string(),
        }
    }
}

/// The types a setting can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SettingType {
    /// Any text.
    String,
    /// A whole number.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A JSON list; a later layer replaces it whole.
    List,
    /// A JSON object; layers merge it key by key.
    Object,
    /// `yes` or `no`, as sshd and many daemons spell a switch in their files.
    #[serde(rename = "yes-no")]
    YesNo,
    /// One line of text: a value a configuration file reads up to the end of its line, where a
    /// newline would start a directive of its own.
    Line,
    /// One of the values the setting lists in `choices` (a module's setting only).
    Choice,
}

impl SettingType {
    /// Every type, for messages that list them.
    pub const ALL: [SettingType; 7] = [
        SettingType::String,
        SettingType::Integer,
        SettingType::Boolean,
        SettingType::List,
        SettingType::Object,
        SettingType::YesNo,
        SettingType::Line,
    ];

    /// The type's name as module.json spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SettingType::String => "string",
            SettingType::Integer => "integer",
            SettingType::Boolean => "boolean",
            SettingType::List => "list",
            SettingType::Object => "object",
            SettingType::YesNo => "yes-no",
            SettingType::Line => "line",
            SettingType::Choice => "choice",
        }
    }

    /// The type module.json names, if it is one.
    pub fn parse(name: &str) -> Option<SettingType> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// Whether `value` is of this type.
    pub fn admits(self, value: &Value) -> bool {
        match self {
            SettingType::String => value.is_string(),
            SettingType::Integer => value.is_i64() || value.is_u64(),
            SettingType::Boolean => value.is_boolean(),
            SettingType::List => value.is_array(),
            SettingType::Object => value.is_object(),
            SettingType::YesNo => matches!(value.as_str(), Some("yes" | "no")),
            SettingType::Line => value.as_str().is_some_and(|s| !s.contains('\n')),
            SettingType::Choice => value.is_string(),
        }
    }

    /// Reads a value typed on a command line: a string as it is, anything else as JSON, then
    /// [`SettingType::check`]s it.
    pub fn parse_value(self, text: &str) -> Result<Value, ValueError> {
        let value = match self {
            SettingType::String | SettingType::YesNo | SettingType::Line | SettingType::Choice => {
                Value::String(text.to_string())
            }
            // what JSON said is beside the point: the operator is told what the type looks like
            _ => serde_json::from_str(text).map_err(|_| ValueError::NotOfType(self))?,
        };
        self.check(&value)?;
        Ok(value)
    }

    /// Whether a layer may hold `value` for a setting of this type, however it came (typed on a
    /// command line, or read from an imported document): of this type, and with no control
    /// character (other than tab and newline) wherever it is in the value, since a value ends up
    /// in files, unit files and terminals, where a NUL truncates and an escape sequence speaks to
    /// whoever reads it. Refused: what a value of this type looks like.
    pub fn check(self, value: &Value) -> Result<(), ValueError> {
        if let Some(c) = control_character(value) {
            return Err(ValueError::ControlCharacter(c));
        }
        if self.admits(value) {
            Ok(())
        } else {
            Err(ValueError::NotOfType(self))
        }
    }

    /// What a value of this type looks like, for refusals.
    pub fn expected(self) -> String {
        match self {
            SettingType::String => "a string".into(),
            SettingType::Integer => "an integer, e.g. 3".into(),
            SettingType::Boolean => "true or false".into(),
            SettingType::List => "a JSON list, e.g. [\"a\",\"b\"]".into(),
            SettingType::Object => "a JSON object, e.g. {\"k\":\"v\"}".into(),
            SettingType::YesNo => "yes or no".into(),
            SettingType::Line => "one line of text (no newline)".into(),
            SettingType::Choice => "one of the setting's choices".into(),
        }
    }
}

/// Why a value is refused for a setting, said as what it should be (a caller adds the setting and
/// the value: `kv: port takes an integer, e.g. 3, not "x"`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// A string in it holds a control character other than tab and newline.
    #[error(
        "text without control characters (it holds {0:?}; tab and newline are the only ones allowed)"
    )]
    ControlCharacter(char),
    /// It is not of the type.
    #[error("{}", .0.expected())]
    NotOfType(SettingType),
    /// It is not one of a `choice` setting's choices.
    #[error("one of {}", .choices.join(", "))]
    NotAChoice { choices: Vec<String> },
}

/// Why module.json's declaration of a setting's `type`, `choices` or `cost` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclarationError {
    #[error("missing: every setting declares its type ({})", type_names())]
    NoType,
    #[error("{:?} is not a type; use one of {}", .0, type_names())]
    NotAType(String),
    #[error("missing: a choice setting lists its choices")]
    NoChoices,
    #[error("a choice needs at least two choices")]
    OneChoice,
    #[error("{0:?} cannot be a choice (empty, or a control character)")]
    BadChoice(String),
    #[error("{choice:?} is listed twice (at {at})")]
    ChoiceTwice { choice: String, at: usize },
    #[error("only a choice setting lists choices (this one is a {})", .0.as_str())]
    ChoicesOfAnother(SettingType),
    #[error("{0:?} is not a cost; use none, reload or restart")]
    NotACost(String),
}

/// The types module.json may name, for its refusals.
fn type_names() -> String {
    SettingType::ALL.map(SettingType::as_str).join(", ") + ", choice"
}

/// The first control character other than tab and newline in any string of `value` (keys of
/// objects too).
pub fn control_character(value: &Value) -> Option<char> {
    let bad = |s: &str| {
        s.chars()
            .find(|c| c.is_control() && *c != '\t' && *c != '\n')
    };
    match value {
        Value::String(s) => bad(s),
        Value::Array(items) => items.iter().find_map(control_character),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| bad(k).or_else(|| control_character(v))),
        _ => None,
    }
}

/// Whether `name` is a well-formed setting name.
/// A setting's `choices` as module.json gives them: required, and only, for a `choice` setting;
/// each a distinct line of text, at least two.
pub(crate) fn choices(
    kind: SettingType,
    given: Option<Vec<String>>,
) -> Result<Vec<String>, DeclarationError> {
    match (kind, given) {
        (SettingType::Choice, None) => Err(DeclarationError::NoChoices),
        (SettingType::Choice, Some(c)) => {
            if c.len() < 2 {
                return Err(DeclarationError::OneChoice);
            }
            if let Some(bad) = c
                .iter()
                .find(|v| v.is_empty() || v.chars().any(char::is_control))
            {
                return Err(DeclarationError::BadChoice(bad.clone()));
            }
            if let Some((i, v)) = c.iter().enumerate().find(|(i, v)| c[..*i].contains(v)) {
                return Err(DeclarationError::ChoiceTwice {
                    choice: v.clone(),
                    at: i,
                });
            }
            Ok(c)
        }
        (_, Some(_)) => Err(DeclarationError::ChoicesOfAnother(kind)),
        (_, None) => Ok(Vec::new()),
    }
}

/// A setting as module.json declares it, before it is checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSetting {
    name: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    meaning: Option<String>,
    default: Option<Value>,
    #[serde(rename = "default-fact")]
    default_fact: Option<String>,
    cost: Option<String>,
    choices: Option<Vec<String>>,
}

/// `settings[i]` checked, its name not one of those declared `before` it. Refused: the field
/// (`settings[i] (name).field`) and what is wrong there.
pub(crate) fn declared(
    i: usize,
    s: RawSetting,
    before: &[Setting],
) -> Result<Setting, (String, String)> {
    let at = |field: &str| match &s.name {
        Some(n) => format!("settings[{i}] ({n}).{field}"),
        None => format!("settings[{i}].{field}"),
    };
    let refused = |field: &str, message: String| (at(field), message);
    let sname = s
        .name
        .clone()
        .ok_or_else(|| refused("name", "missing".into()))?;
    if !valid_name(&sname) {
        return Err(refused(
            "name",
            "must be lower case letters, digits and -".into(),
        ));
    }
    if before.iter().any(|d| d.name == sname) {
        return Err(refused("name", "declared twice".into()));
    }
    let kind = declared_type(s.kind.as_deref()).map_err(|m| refused("type", m.to_string()))?;
    let meaning = s
        .meaning
        .clone()
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| {
            refused(
                "meaning",
                "missing: every setting says in one sentence what it means".into(),
            )
        })?;
    let choices =
        choices(kind, s.choices.clone()).map_err(|m| refused("choices", m.to_string()))?;
    let cost = parse_cost(s.cost.as_deref()).map_err(|m| refused("cost", m.to_string()))?;
    let setting = Setting {
        name: sname,
        kind,
        meaning,
        default: s.default.clone(),
        default_fact: s.default_fact.clone(),
        cost,
        choices,
    };
    if let Some(fact) = &s.default_fact {
        fact_default(&setting, fact, s.default.is_some())
            .map_err(|m| refused("default-fact", m))?;
    }
    if let Some(d) = &s.default
        && !setting.admits(d)
    {
        return Err(refused(
            "default",
            format!("{d} is not {}", setting.expected()),
        ));
    }
    Ok(setting)
}

/// A `default-fact` names a fact of the machine whose value the setting's type takes, and stands
/// alone: a setting has one default.
fn fact_default(setting: &Setting, fact: &str, default_too: bool) -> Result<(), String> {
    use mesh_wire::{FIELDS, FactKind};
    if default_too {
        return Err("a setting has one default: `default` or `default-fact`, not both".into());
    }
    let names = || FIELDS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
    let field = FIELDS
        .iter()
        .find(|f| f.name == fact)
        .ok_or_else(|| format!("{fact:?} is no fact of the machine (facts: {})", names()))?;
    let fits = match field.kind {
        FactKind::Text => matches!(setting.kind, SettingType::String | SettingType::Line),
        FactKind::Number => setting.kind == SettingType::Integer,
        FactKind::List => setting.kind == SettingType::List,
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "fact {fact} ({}) is not of the setting's type {}",
            field.meaning,
            setting.kind.as_str()
        ))
    }
}

/// A setting's `type` as module.json gives it: required, one of the types or `choice`.
fn declared_type(kind: Option<&str>) -> Result<SettingType, DeclarationError> {
    match kind {
        None => Err(DeclarationError::NoType),
        Some("choice") => Ok(SettingType::Choice),
        Some(k) => SettingType::parse(k).ok_or_else(|| DeclarationError::NotAType(k.to_string())),
    }
}

pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A value as it reads in a text file: strings bare, everything else as compact JSON.
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_from_the_command_line_are_read_by_type() {
        assert_eq!(SettingType::String.parse_value("50m"), Ok(json!("50m")));
        assert_eq!(SettingType::Integer.parse_value("3"), Ok(json!(3)));
        assert_eq!(SettingType::Boolean.parse_value("false"), Ok(json!(false)));
        assert_eq!(SettingType::List.parse_value(r#"["a"]"#), Ok(json!(["a"])));
        assert!(SettingType::Integer.parse_value("three").is_err());
        assert!(SettingType::Integer.parse_value("3.5").is_err());
        assert!(SettingType::List.parse_value("{}").is_err());
        assert_eq!(SettingType::YesNo.parse_value("no"), Ok(json!("no")));
        assert!(SettingType::YesNo.parse_value("false").is_err());
        assert_eq!(
            SettingType::Line.parse_value("ops admin"),
            Ok(json!("ops admin"))
        );
        let said = SettingType::Line
            .parse_value("ops\nPermitRootLogin yes")
            .unwrap_err();
        assert_eq!(said, ValueError::NotOfType(SettingType::Line));
        assert!(said.to_string().contains("one line"), "{said}");
    }

    #[test]
    fn a_value_with_a_control_character_is_refused_wherever_it_is() {
        assert!(SettingType::String.parse_value("a\u{0}b").is_err());
        assert!(SettingType::String.parse_value("\u{1b}[2J").is_err());
        assert!(
            SettingType::List
                .parse_value(r#"["ok", "a\u0000b"]"#)
                .is_err()
        );
        assert!(
            SettingType::Object
                .parse_value(r#"{"k\u0007": 1}"#)
                .is_err()
        );
        assert!(
            SettingType::Object
                .parse_value(r#"{"k": {"deep": "\u001b"}}"#)
                .is_err()
        );
        // a tab or a line break is text
        assert_eq!(
            SettingType::String.parse_value("a\tb\nc"),
            Ok(json!("a\tb\nc"))
        );
    }

    #[test]
    fn names_are_lower_case_words() {
        assert!(valid_name("log-max-size"));
        assert!(!valid_name("Log"));
        assert!(!valid_name("-x"));
        assert!(!valid_name(""));
    }
}
