use std::fs;
use std::os::unix::fs::PermissionsExt;

use mesh_wire::{CHANGES_NOTED, EXIT_ALREADY_REVERTED, EXIT_UNKNOWN_CHANGE, Mode};

use super::kept::{self, Kept};
use super::{claim, confirm, revert_claimed};
use crate::apply::testkit::{decl, directory, file, run, sandbox};
use crate::record::Record;

#[test]
fn a_revert_puts_back_files_their_modes_the_record_and_a_spent_original() {
    let (dir, paths) = sandbox();
    let (a, b) = (dir.path().join("a.conf"), dir.path().join("b.conf"));
    fs::write(&a, "the host's a\n").unwrap();
    run(&decl(vec![file(&a, "mesh a\n")]), Mode::Apply, &paths).unwrap();
    fs::set_permissions(&a, fs::Permissions::from_mode(0o600)).unwrap();
    let record_before = fs::read(paths.record()).unwrap();

    // the push gives a back (its kept original is spent) and makes b
    let push = decl(vec![file(&b, "mesh b\n")]);
    let pending = kept::dir(&paths, "ab12");
    let record = Record::load(&paths).unwrap();
    let kept = Kept::take(&push, record.as_ref(), &pending, &paths).unwrap();
    assert_eq!(
        fs::metadata(&pending).unwrap().permissions().mode() & 0o777,
        0o700
    );
    run(&push, Mode::Apply, &paths).unwrap();
    assert_eq!(fs::read_to_string(&a).unwrap(), "the host's a\n");
    assert!(b.exists());

    let reverted = kept::revert(&kept, &pending, &paths, "ab12", 0, false);
    assert!(reverted.failed.is_empty(), "{reverted:?}");
    assert_eq!(fs::read_to_string(&a).unwrap(), "mesh a\n");
    assert_eq!(
        fs::metadata(&a).unwrap().permissions().mode() & 0o7777,
        0o600
    );
    assert!(!b.exists(), "b was not there before the push");
    assert_eq!(fs::read(paths.record()).unwrap(), record_before);

    // the machine is as before the push: undeclaring a still gives the host's a back
    run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert_eq!(fs::read_to_string(&a).unwrap(), "the host's a\n");
}

#[test]
fn a_revert_of_a_first_push_leaves_an_empty_record_not_none() {
    let (dir, paths) = sandbox();
    let a = dir.path().join("a.conf");
    let push = decl(vec![file(&a, "mesh a\n")]);
    let pending = kept::dir(&paths, "cd34");
    let kept = Kept::take(&push, None, &pending, &paths).unwrap();
    run(&push, Mode::Apply, &paths).unwrap();
    let reverted = kept::revert(&kept, &pending, &paths, "cd34", 0, false);
    assert!(reverted.failed.is_empty(), "{reverted:?}");
    assert!(!a.exists());
    let record = Record::load(&paths).unwrap().unwrap();
    assert!(record.resources.is_empty());
    // and the next push is not refused as a machine that lost its record
    run(&push, Mode::Apply, &paths).unwrap();
    assert_eq!(fs::read_to_string(&a).unwrap(), "mesh a\n");
}

#[test]
fn confirming_and_reverting_race_for_one_rename_and_the_loser_hears_it() {
    let (_dir, paths) = sandbox();
    fs::create_dir_all(kept::dir(&paths, "ab")).unwrap();
    assert_eq!(confirm("ab", &paths), 0);
    assert!(
        claim(&paths, "ab").unwrap().is_none(),
        "confirmed: nothing to revert"
    );

    fs::create_dir_all(kept::dir(&paths, "cd")).unwrap();
    assert!(claim(&paths, "cd").unwrap().is_some());
    assert_eq!(
        u32::from(confirm("cd", &paths)),
        EXIT_ALREADY_REVERTED,
        "reverting: too late to confirm"
    );
    assert_eq!(
        u32::from(confirm("ef", &paths)),
        EXIT_UNKNOWN_CHANGE,
        "no such change"
    );
}

#[test]
fn asking_again_about_a_change_answers_what_became_of_it() {
    let (dir, paths) = sandbox();
    fs::create_dir_all(kept::dir(&paths, "ab")).unwrap();
    assert_eq!(confirm("ab", &paths), 0);
    // the first answer was lost on the way back: the retry hears it confirmed, not "no change"
    assert_eq!(confirm("ab", &paths), 0, "confirmed, asked again");
    assert!(!kept::dir(&paths, "ab").with_extension("confirmed").exists());

    // reverted, and the next apply has said (and dropped) its reverted/ note: still reverted
    let a = dir.path().join("a.conf");
    let push = decl(vec![file(&a, "a\n")]);
    let pending = kept::dir(&paths, "cd");
    Kept::take(&push, None, &pending, &paths).unwrap();
    let claimed = claim(&paths, "cd").unwrap().unwrap();
    {
        // a revert runs under the machine's lock, let go before the next apply takes it
        let held = crate::apply::Held::take(&paths).unwrap();
        assert!(
            revert_claimed(&paths, &held, "cd", &claimed, false)
                .failed
                .is_empty()
        );
    }
    let said = super::run(&push, Mode::Apply, &paths).unwrap();
    assert_eq!(said.reverted.len(), 1, "{said:?}");
    assert_eq!(u32::from(confirm("cd", &paths)), EXIT_ALREADY_REVERTED);
    assert_eq!(u32::from(confirm("cd", &paths)), EXIT_ALREADY_REVERTED);
    assert_eq!(u32::from(confirm("e0", &paths)), EXIT_UNKNOWN_CHANGE);
}

#[test]
fn the_notes_of_what_became_of_changes_stay_bounded_in_number() {
    let (_dir, paths) = sandbox();
    for n in 0..CHANGES_NOTED + 10 {
        let id = format!("{n:04x}");
        fs::create_dir_all(kept::dir(&paths, &id)).unwrap();
        assert_eq!(confirm(&id, &paths), 0);
    }
    let notes = fs::read_dir(paths.root.join("changes")).unwrap().count();
    assert_eq!(notes, CHANGES_NOTED);
    let last = format!("{:04x}", CHANGES_NOTED + 9);
    assert_eq!(confirm(&last, &paths), 0, "the newest note is kept");
}

#[test]
fn a_dry_run_says_a_change_still_awaits_confirmation() {
    let (dir, paths) = sandbox();
    let push = decl(vec![file(&dir.path().join("a.conf"), "a\n")]);
    let dry = super::run(&push, Mode::DryRun, &paths).unwrap();
    assert_eq!(dry.pending, None);
    fs::create_dir_all(kept::dir(&paths, "ab")).unwrap();
    let dry = super::run(&push, Mode::DryRun, &paths).unwrap();
    assert_eq!(dry.pending.as_deref(), Some("ab"));
    // being reverted is not settled either
    claim(&paths, "ab").unwrap();
    let dry = super::run(&push, Mode::DryRun, &paths).unwrap();
    assert_eq!(dry.pending.as_deref(), Some("ab"));
}

#[test]
fn a_directory_the_push_made_goes_after_the_files_in_it() {
    let (dir, paths) = sandbox();
    let made = dir.path().join("made");
    let push = decl(vec![directory(&made), file(&made.join("x.conf"), "x\n")]);
    let pending = kept::dir(&paths, "ef56");
    let kept = Kept::take(&push, None, &pending, &paths).unwrap();
    run(&push, Mode::Apply, &paths).unwrap();
    assert!(made.join("x.conf").exists());
    let reverted = kept::revert(&kept, &pending, &paths, "ef56", 0, false);
    assert!(reverted.failed.is_empty(), "{reverted:?}");
    assert!(!made.exists(), "{reverted:?}");
}

#[test]
fn the_directories_a_file_needed_go_with_it() {
    let (dir, paths) = sandbox();
    let deep = dir.path().join("a").join("b");
    let push = decl(vec![file(&deep.join("x.conf"), "x\n")]);
    let pending = kept::dir(&paths, "ab78");
    let kept = Kept::take(&push, None, &pending, &paths).unwrap();
    run(&push, Mode::Apply, &paths).unwrap();
    assert!(deep.join("x.conf").exists());
    let reverted = kept::revert(&kept, &pending, &paths, "ab78", 0, false);
    assert!(reverted.failed.is_empty(), "{reverted:?}");
    assert!(!dir.path().join("a").exists(), "{reverted:?}");
}

#[test]
fn a_generation_awaiting_confirmation_is_kept_once_confirmed_and_never_when_reverted() {
    let (dir, paths) = sandbox();
    let a = dir.path().join("a.conf");
    for (id, confirmed) in [("ef56", true), ("ab78", false)] {
        let push = decl(vec![file(&a, &format!("{id}\n"))]);
        let pending = kept::dir(&paths, id);
        let record = Record::load(&paths).unwrap();
        Kept::take(&push, record.as_ref(), &pending, &paths).unwrap();
        let made = run(&push, Mode::Apply, &paths).unwrap().generation.unwrap();
        crate::generations::keep_awaiting(&pending, &made, &push).unwrap();
        assert!(
            crate::generations::load(&paths, made.number)
                .unwrap()
                .is_none(),
            "kept before it was confirmed"
        );
        if confirmed {
            assert_eq!(confirm(id, &paths), 0);
        } else {
            let claimed = claim(&paths, id).unwrap().unwrap();
            let held = crate::apply::Held::take(&paths).unwrap();
            assert!(
                revert_claimed(&paths, &held, id, &claimed, false)
                    .failed
                    .is_empty()
            );
        }
    }
    let kept: Vec<u64> = crate::generations::list(&paths)
        .unwrap()
        .stored
        .iter()
        .map(|s| s.generation.number)
        .collect();
    assert_eq!(kept, vec![1], "the reverted generation 2 was kept");
    assert_eq!(fs::read_to_string(&a).unwrap(), "ef56\n");
}
