//! A module's `"rollout"` in module.json: how many of its assignments a push may restart at once
//! (`{"max-unavailable": N | "P%"}`). Defined here once, with its check; the deploy layer reads
//! it to group nodes into waves.

use serde::Serialize;
use serde_json::Value;

/// Why a `max-unavailable` is refused, quoting it: a share out of 1%..=100%, or not a count of
/// one or more.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MaxUnavailableError {
    #[error("{0:?} is not a count (2) or a share (25%) of the assignments; a share is 1% to 100%")]
    Share(String),
    #[error("{0:?} is not a count (2) or a share (25%) of the assignments; a count is 1 or more")]
    Count(String),
}

/// How many of a module's assignments may be restarting at once: a count, or a share of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MaxUnavailable {
    Count(u32),
    Percent(u8),
}

impl MaxUnavailable {
    /// Reads `N` or `P%` (what `--max-unavailable` and module.json take); the error says why not.
    pub fn parse(text: &str) -> Result<MaxUnavailable, MaxUnavailableError> {
        match text.trim().strip_suffix('%') {
            Some(p) => match p.trim().parse::<u8>() {
                Ok(p) if (1..=100).contains(&p) => Ok(MaxUnavailable::Percent(p)),
                _ => Err(MaxUnavailableError::Share(text.to_string())),
            },
            None => match text.trim().parse::<u32>() {
                Ok(n) if n >= 1 => Ok(MaxUnavailable::Count(n)),
                _ => Err(MaxUnavailableError::Count(text.to_string())),
            },
        }
    }

    /// How many of `of` assignments that is, never less than one (a rollout always moves).
    pub fn of(self, of: usize) -> usize {
        match self {
            MaxUnavailable::Count(n) => n as usize,
            MaxUnavailable::Percent(p) => (of * p as usize / 100).max(1),
        }
    }
}

impl std::fmt::Display for MaxUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaxUnavailable::Count(n) => write!(f, "{n}"),
            MaxUnavailable::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// A module's rollout rules, as declared (nothing declared: the defaults of the deploy layer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Rollout {
    /// `"max-unavailable"`: at most this many of the module's assignments restart at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<MaxUnavailable>,
}

/// Checks module.json's `"rollout"` value: `(field, message)` when it breaks a rule.
pub(super) fn rollout(value: Option<Value>) -> Result<Rollout, (String, String)> {
    let Some(value) = value else {
        return Ok(Rollout::default());
    };
    let Value::Object(map) = value else {
        return Err((
            "rollout".into(),
            "must be an object, e.g. {\"max-unavailable\": 2}".into(),
        ));
    };
    let mut out = Rollout::default();
    for (key, v) in map {
        if key != "max-unavailable" {
            return Err((
                format!("rollout.{key}"),
                "unknown field; the one field is \"max-unavailable\"".into(),
            ));
        }
        let text = match &v {
            Value::Number(n) => n.to_string(),
            Value::String(s) if s.trim().ends_with('%') => s.clone(),
            _ => {
                return Err((
                    "rollout.max-unavailable".into(),
                    format!("{v} is neither a count (2) nor a share (\"25%\")"),
                ));
            }
        };
        out.max_unavailable = Some(
            MaxUnavailable::parse(&text)
                .map_err(|m| ("rollout.max-unavailable".into(), m.to_string()))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{MaxUnavailable, rollout};

    #[test]
    fn max_unavailable_is_a_count_or_a_share_and_anything_else_is_refused_by_field() {
        let r = rollout(Some(json!({"max-unavailable": 2}))).unwrap();
        assert_eq!(r.max_unavailable, Some(MaxUnavailable::Count(2)));
        let r = rollout(Some(json!({"max-unavailable": "25%"}))).unwrap();
        assert_eq!(r.max_unavailable, Some(MaxUnavailable::Percent(25)));
        assert_eq!(r.max_unavailable.unwrap().of(6), 1);
        assert_eq!(MaxUnavailable::Percent(50).of(6), 3);
        assert_eq!(rollout(None).unwrap().max_unavailable, None);
        for bad in [
            json!({"max-unavailable": 0}),
            json!({"max-unavailable": "0%"}),
            json!({"max-unavailable": "two"}),
            json!({"max-unavailable": -1}),
        ] {
            let (field, _) = rollout(Some(bad.clone())).unwrap_err();
            assert_eq!(field, "rollout.max-unavailable", "{bad}");
        }
        let (field, _) = rollout(Some(json!({"serial": 1}))).unwrap_err();
        assert_eq!(field, "rollout.serial");
        assert!(rollout(Some(json!(2))).is_err());
    }
}
