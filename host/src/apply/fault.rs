//! The fault switch of the end-to-end tests: with it, a file `fault` in the state directory
//! naming a resource's id makes the helper die right after applying that resource, as a killed
//! helper would, so a test can prove the next run converges.
//!
//! It stays in the helper, not in the recording `System`: the lab tests that use it
//! (`tests/e2e/honesty`, `costs_every_cause`, `confirm`) kill a real helper on a real machine
//! at a chosen instant, which no fake of the machine can do. A test without the lab makes the
//! machine refuse a call instead (`system::recording::Model::failing`).
//!
//! It exists only in a helper built with the `test-switches` feature, which `build.rs` turns on
//! only when the operator itself is built with debug assertions (`cargo test`). A release helper
//! has no such switch: anyone who can write that file must not be able to stop a push at its
//! worst instant.

use mesh_wire::Mode;

use crate::record::Paths;

/// Dies here if the fault file names `id` (a test helper only).
#[cfg(feature = "test-switches")]
pub(super) fn at(mode: Mode, paths: &Paths, id: &str) {
    if mode != Mode::Apply {
        return;
    }
    let path = paths.root.join("fault");
    if let Ok(Some(wanted)) = crate::files::HOST.read(&path)
        && String::from_utf8_lossy(&wanted.bytes).trim() == id
    {
        let _ = crate::files::HOST.remove(&path);
        std::process::abort();
    }
}

/// A release helper: no switch at all.
#[cfg(not(feature = "test-switches"))]
pub(super) fn at(_: Mode, _: &Paths, _: &str) {}

#[cfg(all(test, not(feature = "test-switches")))]
mod tests {
    use mesh_wire::{Mode, State};

    use super::super::testkit::{decl, file, sandbox, states};

    #[test]
    fn a_helper_built_without_test_switches_ignores_a_fault_file() {
        let (dir, paths) = sandbox();
        let (first, second) = (dir.path().join("first"), dir.path().join("second"));
        let named = file(&first, "one\n");
        std::fs::create_dir_all(&paths.root).unwrap();
        std::fs::write(paths.root.join("fault"), &named.id).unwrap();
        // a helper with the switch would abort right after `first`
        assert_eq!(
            states(
                &decl(vec![named, file(&second, "two\n")]),
                Mode::Apply,
                &paths
            ),
            vec![State::Created, State::Created]
        );
        assert_eq!(std::fs::read_to_string(&second).unwrap(), "two\n");
        assert!(paths.root.join("fault").exists(), "the file is not read");
    }
}
