//! The failure budget of a rollout (`push --max-failed N | P%`): how many of its nodes may fail
//! before no further wave starts.

use serde::Serialize;

/// How many nodes may fail: a count, or a share of the rollout's nodes (rounded down).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureBudget {
    #[default]
    None,
    Count(usize),
    Percent(u8),
}

impl FailureBudget {
    /// Reads `N` or `P%`; the error quotes what it could not read.
    pub fn parse(text: &str) -> Result<FailureBudget, BudgetError> {
        let t = text.trim();
        let bad = || BudgetError(text.to_string());
        match t.strip_suffix('%') {
            Some(p) => match p.trim().parse::<u8>() {
                Ok(0) => Ok(FailureBudget::None),
                Ok(p) if p <= 100 => Ok(FailureBudget::Percent(p)),
                _ => Err(bad()),
            },
            None => match t.parse::<usize>() {
                Ok(0) => Ok(FailureBudget::None),
                Ok(n) => Ok(FailureBudget::Count(n)),
                Err(_) => Err(bad()),
            },
        }
    }

    /// How many of `total` nodes may fail.
    pub fn allowed(self, total: usize) -> usize {
        match self {
            FailureBudget::None => 0,
            FailureBudget::Count(n) => n,
            FailureBudget::Percent(p) => total * p as usize / 100,
        }
    }
}

/// A `--max-failed` that is neither a count nor a share of 0% to 100%, as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a count (1) or a share (10%) of the nodes")]
pub struct BudgetError(pub String);

#[cfg(test)]
mod tests {
    use super::{BudgetError, FailureBudget};

    #[test]
    fn a_budget_is_a_count_or_a_share_of_the_nodes_rounded_down() {
        assert_eq!(FailureBudget::parse("0").unwrap().allowed(10), 0);
        assert_eq!(FailureBudget::parse("2").unwrap().allowed(10), 2);
        assert_eq!(FailureBudget::parse("25%").unwrap().allowed(10), 2);
        assert_eq!(FailureBudget::parse("10%").unwrap().allowed(5), 0);
        assert!(FailureBudget::parse("-1").is_err());
        assert!(FailureBudget::parse("101%").is_err());
        assert_eq!(
            FailureBudget::parse("many"),
            Err(BudgetError("many".into()))
        );
        assert_eq!(
            BudgetError("101%".into()).to_string(),
            "\"101%\" is not a count (1) or a share (10%) of the nodes"
        );
    }
}
