//! Two helpers applying on a new machine at once: the second waits for the first, whose lock it
//! finds with no record yet, rather than taking that lock for one an earlier apply left.

use std::time::Duration;

use super::held::{Held, lock};
use super::testkit::sandbox;
use crate::record::Record;

#[test]
fn a_lock_another_helper_holds_on_a_new_machine_is_waited_for_and_one_left_is_a_sign() {
    let (_dir, paths) = sandbox();
    // the first helper: its lock made and held, its record not written yet
    let first = lock(&paths).unwrap();
    std::thread::scope(|s| {
        let second = s.spawn(|| Held::to_apply(&paths, false).map(drop));
        std::thread::sleep(Duration::from_millis(300));
        Record::new().save(&paths).unwrap();
        drop(first);
        let second = second.join().unwrap();
        assert!(second.is_ok(), "{:?}", second.err().map(|e| e.to_string()));
    });

    // a lock nobody holds, and no record: one an earlier apply left, a sign of the mesh
    std::fs::remove_file(paths.record()).unwrap();
    let refused = Held::to_apply(&paths, false)
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("an earlier apply left"), "{refused}");
}
