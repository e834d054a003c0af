//! What stops a run before any resource is looked at, and how the helper says so.

use std::fmt;
use std::io;

use mesh_wire::RecordRefusal;

use crate::record::LoadError;

/// What stops a run before any resource is looked at.
#[derive(Debug)]
pub(crate) enum Error {
    /// The state directory or the record cannot be read or written.
    Record(io::Error),
    /// Another helper is applying on this machine.
    Busy,
    /// A change on this machine awaits its confirmation (by its id): nothing else is applied
    /// until it is confirmed or reverted.
    Awaiting(String),
    /// The record is lost or cannot be trusted: nothing is touched until the operator acts.
    Refused(RecordRefusal),
}

impl Error {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Error::Record(_) => 3,
            Error::Busy => 4,
            Error::Awaiting(_) => u8::try_from(mesh_wire::EXIT_AWAITING).unwrap_or(4),
            Error::Refused(r) => u8::try_from(r.exit_code()).unwrap_or(3),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Record(e) => write!(f, "the helper's record is not usable: {e}"),
            Error::Busy => write!(
                f,
                "another mesh-host is applying on this machine; try again when it is done"
            ),
            Error::Awaiting(id) => write!(
                f,
                "change {id} on this machine awaits its confirmation (unit mesh-confirm-{id}); \
                 try again once it is confirmed or reverted, at its deadline"
            ),
            Error::Refused(r @ RecordRefusal::UnknownVersion { .. }) => write!(
                f,
                "{r}; nothing was changed: push with a mesh that knows it"
            ),
            Error::Refused(r) => write!(
                f,
                "{r}; nothing was changed: take the machine as it is now with `mesh node adopt`"
            ),
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Record(e)
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Io(e) => Error::Record(e),
            LoadError::Refused(r) => Error::Refused(r),
        }
    }
}
