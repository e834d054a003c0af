//! A run that changes nothing writes nothing of the helper's own: the record and the state
//! directories stay as they were, so it waits on no disk; one that changes something, or finds
//! a directory of the helper's with another mode, writes as before.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use mesh_wire::Mode;

use super::testkit::{decl, file, run, sandbox};
use crate::record::Paths;

/// The record's inode and change time, and the change times of the state directories: what any
/// write, rename, chmod or chown there moves.
fn touched(paths: &Paths) -> Vec<(u64, i64, i64)> {
    [paths.record(), paths.root.clone(), paths.originals()]
        .iter()
        .map(|p| {
            let m = fs::symlink_metadata(p).unwrap();
            (m.ino(), m.ctime(), m.ctime_nsec())
        })
        .collect()
}

#[test]
fn a_run_that_changes_nothing_writes_neither_the_record_nor_its_directories() {
    let (dir, paths) = sandbox();
    let motd = dir.path().join("motd");
    let first = decl(vec![file(&motd, "a\n")]);
    run(&first, Mode::Apply, &paths).unwrap();
    let before = touched(&paths);
    let again = run(&first, Mode::Apply, &paths).unwrap();
    assert!(
        again
            .resources
            .iter()
            .all(|o| o.state == mesh_wire::State::Unchanged)
    );
    assert_eq!(touched(&paths), before, "a no-op wrote the helper's state");

    // a directory of the helper's with another mode is put right, and only that is written
    fs::set_permissions(&paths.root, fs::Permissions::from_mode(0o755)).unwrap();
    run(&first, Mode::Apply, &paths).unwrap();
    let mode = fs::metadata(&paths.root).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o711);

    // a change writes the record again
    let before = touched(&paths);
    run(&decl(vec![file(&motd, "b\n")]), Mode::Apply, &paths).unwrap();
    assert_ne!(
        touched(&paths)[0],
        before[0],
        "a change left the record unwritten"
    );
}
