//! Every exit status of the helper and of its launcher, defined once: the helper exits with
//! them and the operator names them, so "another helper is applying" reaches the operator as
//! that, not as a number.

/// How a `mesh-host` run (or the launcher in front of it) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelperExit {
    /// Done; the report is on stdout.
    Done,
    /// Asked wrongly: a command it does not know, a declaration it cannot read, a console
    /// command (`generations`, `rollback`) not run as root or naming nothing it keeps.
    Usage,
    /// Its record cannot be used (written, or read where an apply needs it).
    Record,
    /// Another `mesh-host` holds the machine's lock.
    Busy,
    /// Its report could not be written (nobody reads its stdout any more).
    Unwritten,
    /// No readable record, but signs that the mesh has been there: it refuses to touch the
    /// machine (a dry run too) and prints a [`crate::RecordRefusal`] on stdout; the recovery is
    /// `mesh node adopt NODE`.
    RecordLost,
    /// A record that cannot be trusted (it does not parse, or its version is unknown); a
    /// [`crate::RecordRefusal`] on stdout.
    RecordUnreadable,
    /// The push was planned against an older generation than the machine's: nothing changed,
    /// a [`crate::Stale`] on stdout.
    Stale,
    /// `confirm ID`: the change was already reverted (its deadline passed).
    AlreadyReverted,
    /// `confirm ID`: the machine knows nothing of the change (not pending, no note of its
    /// fate among the last [`crate::CHANGES_NOTED`]).
    UnknownChange,
    /// A change on the machine awaits its confirmation: nothing else is applied; its id on
    /// stdout.
    Awaiting,
    /// The launcher: the helper of this content hash is not on the machine yet (upload it).
    HelperMissing,
    /// The launcher: the machine is not a platform mesh has a helper for (or lacks `b2sum`,
    /// which checks the helper as it is stored).
    WrongPlatform,
    /// The launcher: the helper sent did not arrive whole (its digest is not the one it was
    /// sent with), or could not be written; nothing was stored, and nothing ran.
    NotStored,
}

/// Every exit, for the tables that list them.
pub const HELPER_EXITS: &[HelperExit] = &[
    HelperExit::Done,
    HelperExit::Usage,
    HelperExit::Record,
    HelperExit::Busy,
    HelperExit::Unwritten,
    HelperExit::RecordLost,
    HelperExit::RecordUnreadable,
    HelperExit::Stale,
    HelperExit::AlreadyReverted,
    HelperExit::UnknownChange,
    HelperExit::Awaiting,
    HelperExit::HelperMissing,
    HelperExit::WrongPlatform,
    HelperExit::NotStored,
];

impl HelperExit {
    /// The process's exit status.
    pub const fn status(self) -> u8 {
        match self {
            HelperExit::Done => 0,
            HelperExit::Usage => 2,
            HelperExit::Record => 3,
            HelperExit::Busy => 4,
            HelperExit::Unwritten => 5,
            HelperExit::RecordLost => 20,
            HelperExit::RecordUnreadable => 21,
            HelperExit::Stale => 22,
            HelperExit::AlreadyReverted => 30,
            HelperExit::UnknownChange => 31,
            HelperExit::Awaiting => 32,
            HelperExit::HelperMissing => 90,
            HelperExit::WrongPlatform => 91,
            HelperExit::NotStored => 92,
        }
    }

    /// The exit a status means; `None` for one no helper gives (a signal's, a shell's).
    pub fn of(status: u32) -> Option<HelperExit> {
        HELPER_EXITS
            .iter()
            .copied()
            .find(|e| u32::from(e.status()) == status)
    }

    /// What it means, in words an operator reads after the status.
    pub fn meaning(self) -> &'static str {
        match self {
            HelperExit::Done => "done",
            HelperExit::Usage => "the helper was asked something it cannot do",
            HelperExit::Record => "the helper's record on the machine cannot be used",
            HelperExit::Busy => {
                "another mesh-host is applying on this machine (another push, or a rollback on \
                 its console); try again when it is done"
            }
            HelperExit::Unwritten => "the helper's report could not be written",
            HelperExit::RecordLost => "the machine's record is lost",
            HelperExit::RecordUnreadable => "the machine's record cannot be trusted",
            HelperExit::Stale => "the machine is at a newer generation than the push's plan",
            HelperExit::AlreadyReverted => "the change was already reverted",
            HelperExit::UnknownChange => "the machine knows nothing of the change",
            HelperExit::Awaiting => "a change on the machine awaits its confirmation",
            HelperExit::HelperMissing => "the helper is not on the machine yet",
            HelperExit::WrongPlatform => {
                "the machine is not a platform mesh has a helper for (Linux/x86_64 with b2sum)"
            }
            HelperExit::NotStored => "the helper sent did not arrive whole: nothing was stored",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_has_its_own_status_and_is_found_by_it() {
        for e in HELPER_EXITS {
            assert_eq!(HelperExit::of(u32::from(e.status())), Some(*e));
        }
        let mut statuses: Vec<u8> = HELPER_EXITS.iter().map(|e| e.status()).collect();
        statuses.sort_unstable();
        statuses.dedup();
        assert_eq!(statuses.len(), HELPER_EXITS.len());
        assert_eq!(HelperExit::of(1), None);
        assert_eq!(HelperExit::of(255), None);
    }
}
