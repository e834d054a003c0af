//! Why a helper refused to touch a machine whose record it cannot trust.

use serde::{Deserialize, Serialize};

use crate::*;

/// Why a helper refused to touch a machine: it cannot trust what it knows of the machine, and
/// applying anyway would take the mesh's own work for the host's (and lose the real originals).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "refused", rename_all = "kebab-case")]
pub enum RecordRefusal {
    /// There is no record, and yet the machine shows signs of the mesh.
    Lost {
        /// Where the record should be.
        record: String,
        /// What was found, in words (each names a path, unit or container).
        found: Vec<String>,
    },
    /// The record does not parse.
    Unreadable { record: String, reason: String },
    /// The record is of a version this helper does not know (a newer mesh wrote it).
    UnknownVersion {
        record: String,
        version: u64,
        known: u32,
    },
}

impl RecordRefusal {
    /// The helper's exit status for this refusal.
    pub fn exit_code(&self) -> u32 {
        match self {
            RecordRefusal::Lost { .. } => EXIT_RECORD_LOST,
            RecordRefusal::Unreadable { .. } | RecordRefusal::UnknownVersion { .. } => {
                EXIT_RECORD_UNREADABLE
            }
        }
    }
}

impl std::fmt::Display for RecordRefusal {
    /// What was found, without the node's name or the fix (each side adds its own).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordRefusal::Lost { record, found } => write!(
                f,
                "the helper's record {record} is missing, yet the machine shows signs of the mesh: {}",
                found.join("; ")
            ),
            RecordRefusal::Unreadable { record, reason } => {
                write!(f, "the helper's record {record} cannot be read: {reason}")
            }
            RecordRefusal::UnknownVersion {
                record,
                version,
                known,
            } => write!(
                f,
                "the helper's record {record} is version {version}, and this helper knows only \
                 version {known} (a newer mesh wrote it)"
            ),
        }
    }
}
