//! The machine's lock, held for the whole of one apply: one helper at a time reads the record,
//! decides, keeps what a revert needs, applies and reverts (see `confirm`).

use std::fs;

use super::Error;
use crate::files;
use crate::record::{Paths, Record};

/// The machine's lock, held until this is dropped.
pub(crate) struct Held {
    _file: fs::File,
    /// The lock was there before this run made it: an earlier apply left it.
    applied_before: bool,
    /// The machine had no record when the lock was taken (see [`Held::record`]).
    new_machine: bool,
    /// [`Held::to_apply`] looked for signs of the mesh before it took the lock, and found none.
    looked_before_lock: bool,
}

impl Held {
    /// Takes the machine's lock to apply. A machine with no record that shows signs of the mesh
    /// is refused before this run makes the lock: a refused run leaves no lock for the next run
    /// (another operator's, one that knows nothing of this machine) to take for a sign.
    ///
    /// A lock another helper holds is that helper applying now (on a new machine it makes the
    /// lock, then the record): this run waits for it, as a dry run does, and looks again. Only a
    /// lock nobody holds, with still no record, is one an earlier apply left.
    pub(crate) fn to_apply(paths: &Paths, operator_knows: bool) -> Result<Held, Error> {
        let mut looked = false;
        if !paths.record().exists() {
            let looking = lock_to_look(paths)?;
            if !paths.record().exists() {
                crate::signs::refuse_if_found(paths, looking.is_some(), operator_knows)?;
                looked = true;
            }
        }
        let mut held = Held::take(paths)?;
        held.looked_before_lock = looked;
        Ok(held)
    }

    /// Takes the machine's lock (see [`lock`]), whatever the record.
    pub(crate) fn take(paths: &Paths) -> Result<Held, Error> {
        // an apply leaves its lock behind: seen before this run makes one, it is a sign of the mesh
        let applied_before = paths.lock().exists();
        let file = lock(paths)?;
        Ok(Held {
            _file: file,
            applied_before,
            new_machine: !paths.record().exists(),
            looked_before_lock: false,
        })
    }

    /// Whether the machine had no record when this run took its lock: new, as [`Held::record`]
    /// refuses one that shows signs of the mesh.
    pub(crate) fn new_machine(&self) -> bool {
        self.new_machine
    }

    /// The record as it is now. A machine without one is refused if it shows signs of the mesh;
    /// else it is new, and gets an empty record at once, before this run leaves anything (its
    /// lock, what it keeps for a revert, a boot-time revert unit): from here on the machine is
    /// the mesh's, and nothing this run leaves, even if it fails, is taken for a lost record.
    pub(crate) fn record(&self, paths: &Paths, operator_knows: bool) -> Result<Record, Error> {
        if let Some(record) = Record::load(paths)? {
            return Ok(record);
        }
        let containers = if self.looked_before_lock {
            crate::signs::Containers::AskedBeforeTheLock
        } else {
            crate::signs::Containers::Ask
        };
        crate::signs::refuse_if_seen(paths, self.applied_before, operator_knows, containers)?;
        let record = Record::new();
        record.save(paths)?;
        Ok(record)
    }
}

/// The record as a dry run reads it, without the lock (it changes nothing): a machine without
/// one is refused if it shows signs of the mesh, else it is new and its record empty.
pub(crate) fn record_without_lock(paths: &Paths, operator_knows: bool) -> Result<Record, Error> {
    if let Some(record) = Record::load(paths)? {
        return Ok(record);
    }
    crate::signs::refuse_if_found(paths, paths.lock().exists(), operator_knows)?;
    Ok(Record::new())
}

/// The machine's lock, shared, for a dry run to read the record and measure under: a helper
/// still applying (its operator killed mid-push, or `mesh-host rollback` at the console) would
/// show it half done, and a check would record that. Waited for as an apply waits
/// (`child::LOCK_WAIT`), then [`Error::Busy`]. A machine no helper ever applied on has no lock
/// file, and none is made: a dry run changes nothing.
pub(crate) fn lock_to_look(paths: &Paths) -> Result<Option<fs::File>, Error> {
    let path = paths.lock();
    if !path.exists() {
        return Ok(None);
    }
    let file = files::HOST.open_lock(&path)?;
    let asked = std::time::Instant::now();
    loop {
        match file.try_lock_shared() {
            Ok(()) => return Ok(Some(file)),
            Err(fs::TryLockError::WouldBlock) if asked.elapsed() < crate::child::LOCK_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            Err(fs::TryLockError::WouldBlock) => return Err(Error::Busy),
            Err(fs::TryLockError::Error(e)) => return Err(Error::Record(e)),
        }
    }
}

/// Takes the machine's lock (one helper applies at a time), making the state directory first:
/// root's and closed to others (its root stays traversable, 0711, for the bundles a process runs
/// as its own user), the kept originals 0700. A helper that is ending (its operator went away) is
/// waited for, up to `child::LOCK_WAIT`.
pub(crate) fn lock(paths: &Paths) -> Result<fs::File, Error> {
    files::HOST.private_dir(&paths.root, 0o711)?;
    files::HOST.private_dir(&paths.originals(), 0o700)?;
    let file = files::HOST.open_lock(&paths.lock())?;
    let asked = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(fs::TryLockError::WouldBlock) if asked.elapsed() < crate::child::LOCK_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            Err(fs::TryLockError::WouldBlock) => return Err(Error::Busy),
            Err(fs::TryLockError::Error(e)) => return Err(Error::Record(e)),
        }
    }
}
