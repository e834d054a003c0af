//! Reading a declaration as the helper receives it: JSON of this wire version, every resource's
//! paths, modes and unit values checked by the one rule of each. The helper runs exactly this on
//! its stdin, and the fuzz target `declaration` runs it on anything.

use std::fmt;

use crate::{Declaration, VERSION};

/// Why a declaration is refused whole, before any resource is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Not JSON of the declaration's shape.
    Invalid(String),
    /// Another wire version.
    Version(u32),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Invalid(e) => write!(f, "the declaration is not valid: {e}"),
            ReadError::Version(v) => write!(
                f,
                "the declaration is wire version {v}, this helper speaks {VERSION}; \
                 push with a mesh of the same version"
            ),
        }
    }
}

/// The declaration in `bytes`, refused whole when it is not one of this version.
pub fn declaration(bytes: &[u8]) -> Result<Declaration, ReadError> {
    let declaration: Declaration =
        serde_json::from_slice(bytes).map_err(|e| ReadError::Invalid(e.to_string()))?;
    if declaration.version != VERSION {
        return Err(ReadError::Version(declaration.version));
    }
    Ok(declaration)
}

/// Each resource's reason to be refused, by id: what the helper fails before it touches anything
/// (a path that leaves its place, a mode that hands out power, a unit value that would break a
/// unit file).
pub fn refusals(declaration: &Declaration) -> Vec<(String, String)> {
    declaration
        .resources
        .iter()
        .filter_map(|r| {
            r.spec
                .check()
                .map_err(|e| e.to_string())
                .and_then(|()| r.spec.check_unit_values().map_err(|e| e.to_string()))
                .err()
                .map(|e| (r.id.clone(), e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_version_or_shape_is_refused_whole() {
        assert_eq!(
            declaration(br#"{"version": 999, "node": "n", "resources": []}"#),
            Err(ReadError::Version(999))
        );
        assert!(matches!(
            declaration(br#"{"version": 1, "node": "n", "resources": [{"kind": "shell"}]}"#),
            Err(ReadError::Invalid(_))
        ));
        let ok = format!(r#"{{"version": {VERSION}, "node": "n", "resources": []}}"#);
        assert!(declaration(ok.as_bytes()).is_ok());
    }
}
