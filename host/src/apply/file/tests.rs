//! A whole file: written, its original kept and given back, its secret never shown.

use std::os::unix::fs::MetadataExt;

use mesh_wire::{Mode, Spec, State};

use super::super::testkit::{decl, file, run, sandbox, states};

#[test]
fn a_kept_file_is_neither_given_back_nor_rewritten_and_is_reported_with_its_undo() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("held");
    std::fs::write(&target, "the operator's own\n").unwrap();
    run(&decl(vec![file(&target, "mesh\n")]), Mode::Apply, &paths).unwrap();
    // the machine's copy moved by hand: kept means left exactly as it is, not repaired
    std::fs::write(&target, "edited\n").unwrap();
    let id = format!("t:file:{}", target.display());
    let mut held = decl(vec![]);
    held.keep = vec![id.clone(), "t:file:/not/in/the/record".into()];
    for mode in [Mode::DryRun, Mode::Apply] {
        let report = run(&held, mode, &paths).unwrap();
        assert_eq!(report.resources.len(), 1, "{:?}", report.resources);
        assert_eq!(report.resources[0].id, id);
        assert_eq!(report.resources[0].state, State::Unchanged);
        // what undoing it would do stays known, for the plan of its later removal
        assert!(report.resources[0].undo.is_some(), "{:?}", report.resources);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "edited\n");
    }
    // no longer kept: given back as ever
    let report = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert_eq!(report.resources[0].state, State::Removed);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "the operator's own\n"
    );
}

#[test]
fn a_file_is_made_left_alone_changed_and_given_back() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("conf");
    std::fs::write(&target, "the operator's own\n").unwrap();

    // a dry run says what it would do and touches nothing
    assert_eq!(
        states(&decl(vec![file(&target, "mesh\n")]), Mode::DryRun, &paths),
        vec![State::Changed]
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "the operator's own\n"
    );
    assert!(!paths.record().exists());

    assert_eq!(
        states(&decl(vec![file(&target, "mesh\n")]), Mode::Apply, &paths),
        vec![State::Changed]
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mesh\n");
    assert_eq!(std::fs::metadata(&target).unwrap().mode() & 0o7777, 0o640);
    let mtime = std::fs::metadata(&target).unwrap().mtime_nsec();

    assert_eq!(
        states(&decl(vec![file(&target, "mesh\n")]), Mode::Apply, &paths),
        vec![State::Unchanged]
    );
    assert_eq!(
        std::fs::metadata(&target).unwrap().mtime_nsec(),
        mtime,
        "an unchanged file was rewritten"
    );

    // undeclared: the original comes back, and the kept copy is gone
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "the operator's own\n"
    );
    assert_eq!(std::fs::read_dir(paths.originals()).unwrap().count(), 0);
}

#[test]
fn a_file_the_mesh_created_is_removed_when_undeclared() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("new.conf");
    assert_eq!(
        states(&decl(vec![file(&target, "x\n")]), Mode::Apply, &paths),
        vec![State::Created]
    );
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    assert!(!target.exists());
    // nothing left to undo
    assert!(states(&decl(vec![]), Mode::Apply, &paths).is_empty());
}

#[test]
fn a_file_its_check_refuses_is_put_back_as_it_was() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("conf");
    std::fs::write(&target, "before\n").unwrap();
    let mut refused = file(&target, "after\n");
    if let Spec::File(f) = &mut refused.spec {
        f.validate = vec!["false".into()];
    }
    let report = run(&decl(vec![refused]), Mode::Apply, &paths).unwrap();
    assert_eq!(report.resources[0].state, State::Failed);
    assert!(
        report.resources[0]
            .detail
            .contains("the check `false` refused"),
        "{}",
        report.resources[0].detail
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "before\n");
    let mut accepted = file(&target, "after\n");
    if let Spec::File(f) = &mut accepted.spec {
        f.validate = vec!["true".into()];
    }
    assert_eq!(
        states(&decl(vec![accepted]), Mode::Apply, &paths),
        vec![State::Changed]
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "after\n");
}

#[test]
fn a_refused_secret_file_never_shows_what_the_check_quoted() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("secret.conf");
    let mut secret = file(&target, "password hunter2\n");
    if let Spec::File(f) = &mut secret.spec {
        f.secret = true;
        f.mode = 0o600;
        // a checker that quotes the line it refuses
        f.validate = vec![
            "sh".into(),
            "-c".into(),
            format!("cat {} >&2; exit 1", target.display()),
        ];
    }
    let report = run(&decl(vec![secret]), Mode::Apply, &paths).unwrap();
    let detail = &report.resources[0].detail;
    assert_eq!(report.resources[0].state, State::Failed);
    assert!(
        detail.contains("not shown: the file holds secrets"),
        "{detail}"
    );
    assert!(!detail.contains("hunter2"), "{detail}");
    assert!(!target.exists(), "the refused file stays on the machine");
}

#[test]
fn a_dry_run_shows_what_a_plain_file_has_and_never_a_secret_ones() {
    let (dir, paths) = sandbox();
    let plain = dir.path().join("plain.conf");
    let secret = dir.path().join("secret.conf");
    std::fs::write(&plain, "by hand\n").unwrap();
    std::fs::write(&secret, "password typed-by-hand\n").unwrap();
    let mut hidden = file(&secret, "password hunter2\n");
    if let Spec::File(f) = &mut hidden.spec {
        f.secret = true;
    }
    let d = decl(vec![file(&plain, "declared\n"), hidden]);
    let report = run(&d, Mode::DryRun, &paths).unwrap();
    let seen = &report.resources[0].seen;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].found.as_deref(), Some("by hand\n"));
    assert_eq!(seen[0].declared, "declared\n");
    assert!(report.resources[1].seen.is_empty());
    let sent = serde_json::to_string(&report).unwrap();
    assert!(
        !sent.contains("hunter2") && !sent.contains("typed-by-hand"),
        "{sent}"
    );
    // a push reports what it did, not what it found
    let report = run(&d, Mode::Apply, &paths).unwrap();
    assert!(report.resources.iter().all(|o| o.seen.is_empty()));
}

#[test]
fn a_file_that_cannot_be_written_fails_alone() {
    let (dir, paths) = sandbox();
    let good = dir.path().join("ok.conf");
    // its "directory" is a file: nothing can be made there
    std::fs::write(dir.path().join("plain"), "").unwrap();
    let bad = dir.path().join("plain/dir.conf");
    let report = run(
        &decl(vec![file(&bad, "x\n"), file(&good, "y\n")]),
        Mode::Apply,
        &paths,
    )
    .unwrap();
    assert_eq!(report.resources[0].state, State::Failed);
    assert!(
        report.resources[0].detail.contains("plain"),
        "{}",
        report.resources[0].detail
    );
    assert_eq!(report.resources[1].state, State::Created);
}

#[test]
fn the_directories_made_for_a_file_go_with_it() {
    let (dir, paths) = sandbox();
    let deep = dir.path().join("made/for/it.conf");
    assert_eq!(
        states(&decl(vec![file(&deep, "x\n")]), Mode::Apply, &paths),
        vec![State::Created]
    );
    std::fs::write(dir.path().join("made/theirs"), "kept").unwrap();
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    assert!(!dir.path().join("made/for").exists());
    // a directory that now holds someone else's file stays
    assert!(dir.path().join("made/theirs").exists());
}
