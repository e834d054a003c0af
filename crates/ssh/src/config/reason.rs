//! Why a configuration file cannot be used, typed: [`super::ConfigError`] names the file and
//! line, and its `reason` is one of these, said as ssh says it where ssh refuses the same.

use super::include::{MAX_DEPTH, MAX_FILES};
use super::matching::{ExecRefused, MatchError};
use super::values::ValueError;
use crate::files::FileError;

/// What is wrong at a line of a configuration file (or with the file itself).
#[derive(Debug, thiserror::Error)]
pub enum Reason {
    /// The file could not be read (said without its path: the error names it).
    #[error("{}", .0.reason())]
    Unreadable(FileError),
    #[error("Bad configuration option: {0}")]
    BadOption(String),
    #[error("Host without a pattern")]
    NoPattern,
    #[error(transparent)]
    Value(#[from] ValueError),
    #[error(transparent)]
    Match(#[from] MatchError),
    #[error(transparent)]
    Exec(#[from] ExecRefused),
    #[error("Include without a file")]
    NoIncludeFile,
    #[error("Include nested more than {MAX_DEPTH} deep: do the files include each other?")]
    TooDeep,
    /// `Include ~user/…` where that user has no home.
    #[error("Include {arg}: no home for ~{user} (HOME is not set, nor in passwd)")]
    NoHome { arg: String, user: String },
    #[error("Include {arg}: {error}")]
    Include { arg: String, error: FileError },
    #[error("Include reads more than {MAX_FILES} files in all")]
    TooMany,
}
