//! One thing that stops a node from being composed, with what it is about.
//!
//! The sentence an operator reads is kept whole (`Display` prints it as it always read); the
//! parts beside it say which instance, module, file and field failed, so `--json` can name them
//! without anyone parsing the sentence.

use serde::Serialize;

use crate::inventory::Assignment;

/// A resolution problem. Every part but `reason` is `None` where the place that found the
/// problem does not know it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The instance whose resolution failed.
    pub instance: Option<String>,
    /// The module the instance is of.
    pub module: Option<String>,
    /// The catalogue file the module was read from.
    pub file: Option<String>,
    /// The setting, requirement, field or resource path that failed.
    pub field: Option<String>,
    /// The whole sentence, as the human output says it.
    pub reason: String,
    /// The command that fixes it, where one is known.
    pub fix: Option<String>,
}

impl Problem {
    /// A problem known only by its sentence.
    pub fn says(reason: impl Into<String>) -> Problem {
        Problem {
            instance: None,
            module: None,
            file: None,
            field: None,
            reason: reason.into(),
            fix: None,
        }
    }

    /// A problem of assignment `a` (its instance and module).
    pub fn of(a: &Assignment, reason: impl Into<String>) -> Problem {
        Problem {
            instance: Some(a.instance.clone()),
            module: Some(a.module.clone()),
            ..Problem::says(reason)
        }
    }

    /// The catalogue file the module came from.
    #[must_use]
    pub fn file(mut self, file: impl Into<String>) -> Problem {
        self.file = Some(file.into());
        self
    }

    /// The setting, requirement or field that failed.
    #[must_use]
    pub fn field(mut self, field: impl Into<String>) -> Problem {
        self.field = Some(field.into());
        self
    }

    /// The command that fixes it.
    #[must_use]
    pub fn fix(mut self, fix: impl Into<String>) -> Problem {
        self.fix = Some(fix.into());
        self
    }
}

impl From<String> for Problem {
    fn from(reason: String) -> Problem {
        Problem::says(reason)
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// The sentences of `problems`, joined by `sep`, as the human output has always joined them.
pub fn joined(problems: &[Problem], sep: &str) -> String {
    problems
        .iter()
        .map(|p| p.reason.as_str())
        .collect::<Vec<_>>()
        .join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_reads_as_its_sentence_and_serializes_every_part() {
        let p = Problem::says("db: setting \"port\" is 0")
            .field("port")
            .fix("mesh settings set db port=VALUE");
        assert_eq!(p.to_string(), "db: setting \"port\" is 0");
        insta::assert_json_snapshot!(p);
    }
}
