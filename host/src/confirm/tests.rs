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

/// The kinds a revert puts back beyond files: a link, an account, a group and a timer the push
/// made go again, and the record kept before the push names none of them.
#[test]
fn a_revert_takes_off_every_kind_the_push_made_and_names_each() {
    use mesh_wire::{GroupSpec, Spec, SymlinkSpec, TimerSpec, UserSpec};

    use crate::apply::testkit::{machine, model, resource};

    let (root, paths) = machine(|_| {});
    let etc = root.path().join("etc");
    fs::create_dir_all(etc.join("ssh/sshd_config.d")).unwrap();
    fs::write(etc.join("site-policy.conf"), "AllowUsers admin\n").unwrap();
    let a = resource(
        "t:file:/etc/a.conf",
        crate::apply::testkit::file(std::path::Path::new("/etc/a.conf"), "one\n").spec,
    );
    let moved = |target: &str| {
        resource(
            "t:symlink:/etc/current",
            Spec::Symlink(SymlinkSpec {
                path: "/etc/current".into(),
                target: target.into(),
            }),
        )
    };
    let found = |shell: &str| {
        resource(
            "t:user:mesh-sys-found",
            Spec::User(UserSpec {
                name: "mesh-sys-found".into(),
                system: true,
                uid: None,
                home: None,
                shell: Some(shell.into()),
                groups: None,
                authorized_keys: None,
                remove_home: false,
            }),
        )
    };
    let first = decl(vec![a.clone(), moved("/srv/a"), found("/bin/sh")]);
    run(&first, Mode::Apply, &paths).unwrap();
    let record_before = fs::read(paths.record()).unwrap();

    let link = resource(
        "t:symlink:/etc/ssh/sshd_config.d/10-site.conf",
        Spec::Symlink(SymlinkSpec {
            path: "/etc/ssh/sshd_config.d/10-site.conf".into(),
            target: "/etc/site-policy.conf".into(),
        }),
    );
    let group = resource(
        "t:group:mesh-sys-ops",
        Spec::Group(GroupSpec {
            name: "mesh-sys-ops".into(),
            system: true,
            gid: None,
        }),
    );
    let user = resource(
        "t:user:mesh-sys-op",
        Spec::User(UserSpec {
            name: "mesh-sys-op".into(),
            system: true,
            uid: None,
            home: None,
            shell: None,
            groups: Some(vec!["mesh-sys-ops".into()]),
            authorized_keys: None,
            remove_home: false,
        }),
    );
    let timer = resource(
        "t:timer:nightly",
        Spec::Timer(TimerSpec {
            name: "nightly".into(),
            description: "runs nightly (t, by mesh)".into(),
            command: vec!["/bin/true".into()],
            user: "root".into(),
            schedule: "daily".into(),
        }),
    );
    let changed_a = resource(
        "t:file:/etc/a.conf",
        crate::apply::testkit::file(std::path::Path::new("/etc/a.conf"), "two\n").spec,
    );
    let push = decl(vec![
        changed_a,
        link,
        group,
        user,
        timer,
        moved("/srv/b"),
        found("/bin/bash"),
    ]);
    let pending = kept::dir(&paths, "ef56");
    let record = Record::load(&paths).unwrap();
    let kept = Kept::take(&push, record.as_ref(), &pending, &paths).unwrap();
    run(&push, Mode::Apply, &paths).unwrap();
    assert!(etc.join("ssh/sshd_config.d/10-site.conf").is_symlink());
    assert!(model(&paths).users.contains_key("mesh-sys-op"));

    let reverted = kept::revert(&kept, &pending, &paths, "ef56", 0, false);
    assert!(reverted.failed.is_empty(), "{reverted:?}");
    let said = reverted.restored.join("\n");
    for id in [
        "t:symlink:/etc/ssh/sshd_config.d/10-site.conf",
        "t:group:mesh-sys-ops",
        "t:user:mesh-sys-op",
        "t:timer:nightly",
        "/etc/a.conf",
    ] {
        assert!(said.contains(id), "the revert names {id}: {said}");
    }
    assert!(
        !etc.join("ssh/sshd_config.d/10-site.conf").exists()
            && !etc.join("ssh/sshd_config.d/10-site.conf").is_symlink(),
        "the link the push made is gone"
    );
    let m = model(&paths);
    assert!(
        !m.users.contains_key("mesh-sys-op") && !m.groups.contains_key("mesh-sys-ops"),
        "{m:?}"
    );
    assert!(!etc.join("systemd/system/nightly.timer").exists());
    assert_eq!(fs::read_to_string(etc.join("a.conf")).unwrap(), "one\n");
    assert_eq!(
        fs::read_link(etc.join("current"))
            .unwrap()
            .display()
            .to_string(),
        "/srv/a",
        "the link the push moved points where it did"
    );
    assert_eq!(m.users["mesh-sys-found"].shell, "/bin/sh");
    assert_eq!(fs::read(paths.record()).unwrap(), record_before);
}
