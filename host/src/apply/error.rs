//! What stops a run before any resource is looked at ([`Error`]), what fails one resource alone
//! ([`ApplyError`], its [`Failure`]), and how the helper says so.

use std::fmt;
use std::io;

use mesh_wire::{RecordRefusal, Stale};

use crate::record::LoadError;
use crate::sealed::UnsealError;
use crate::system::SystemError;

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
    /// The push was planned against an older generation than the machine's: nothing was
    /// changed.
    Stale(Stale),
}

impl Error {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Error::Record(_) => mesh_wire::HelperExit::Record.status(),
            Error::Busy => mesh_wire::HelperExit::Busy.status(),
            Error::Awaiting(_) => mesh_wire::HelperExit::Awaiting.status(),
            Error::Refused(r) => u8::try_from(r.exit_code()).unwrap_or(3),
            Error::Stale(_) => mesh_wire::HelperExit::Stale.status(),
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
            Error::Stale(s) => write!(
                f,
                "refused (stale): {s}; nothing was changed: `mesh check` shows what a push would \
                 replace"
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

/// Refuses, before anything is changed, a push planned against an older generation than the
/// machine's `record` is at (see [`mesh_wire::stale`]).
pub(crate) fn refuse_stale(
    declaration: &mesh_wire::Declaration,
    record: &crate::record::Record,
) -> Result<(), Error> {
    match declaration
        .planned
        .as_ref()
        .and_then(|p| mesh_wire::stale(record.generation.as_ref(), p))
    {
        Some(stale) => Err(Error::Stale(stale)),
        None => Ok(()),
    }
}

/// Why one resource could not be made or given back: said on its line, and the run goes on
/// with the others.
#[derive(Debug)]
pub(crate) struct ApplyError {
    /// The resource's id.
    pub(crate) id: String,
    /// Its kind (`file`, `process`, …).
    pub(crate) kind: &'static str,
    pub(crate) failure: Failure,
}

/// What went wrong with one resource.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The record could not be saved before the change was made: nothing was changed.
    Record(io::Error),
    /// A path of the machine could not be read, written or removed.
    Path { path: String, error: io::Error },
    /// What was asked of the machine's systemd, Docker, packages or accounts failed: the error
    /// names the command, what it was about, and why.
    System(Box<SystemError>),
    /// A secret's content did not open with the host key.
    Sealed(Box<UnsealError>),
    /// Anything else, as the step that failed said it.
    Said(String),
}

impl Failure {
    /// `error` reaching `path`.
    pub(crate) fn path(path: impl fmt::Display, error: io::Error) -> Failure {
        Failure::Path {
            path: path.to_string(),
            error,
        }
    }

    /// Names the resource that failed.
    pub(crate) fn of(self, id: &str, kind: &'static str) -> ApplyError {
        ApplyError {
            id: id.to_string(),
            kind,
            failure: self,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Record(e) => write!(f, "cannot save the record: {e}"),
            Failure::Path { path, error } => write!(f, "{path}: {error}"),
            Failure::System(e) => write!(f, "{e}"),
            Failure::Sealed(e) => write!(f, "{e}"),
            Failure::Said(s) => f.write_str(s),
        }
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.id, self.kind, self.failure)
    }
}

/// Where a failed call to the machine becomes a resource's failure, for every kind.
impl From<SystemError> for Failure {
    fn from(e: SystemError) -> Self {
        Failure::System(Box::new(e))
    }
}

impl From<UnsealError> for Failure {
    fn from(e: UnsealError) -> Self {
        Failure::Sealed(Box::new(e))
    }
}

impl From<String> for Failure {
    fn from(said: String) -> Self {
        Failure::Said(said)
    }
}

impl From<&str> for Failure {
    fn from(said: &str) -> Self {
        Failure::Said(said.to_string())
    }
}
