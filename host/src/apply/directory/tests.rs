//! A directory: made, taken over or refused, given back when empty.

use mesh_wire::{Mode, State};

use super::super::testkit::{decl, file, run, sandbox, states};

use super::super::testkit::directory as dir;

#[test]
fn a_directory_the_mesh_made_goes_when_empty_and_stays_while_it_holds_data() {
    let (root, paths) = sandbox();
    let empty = root.path().join("empty");
    let data = root.path().join("data");
    assert_eq!(
        states(&decl(vec![dir(&empty), dir(&data)]), Mode::Apply, &paths),
        vec![State::Created, State::Created]
    );
    std::fs::write(data.join("precious"), "x").unwrap();
    let report = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    let said: Vec<&str> = report.resources.iter().map(|o| o.detail.as_str()).collect();
    assert!(said.iter().any(|d| d.starts_with("removed")), "{said:?}");
    assert!(
        said.iter().any(|d| d.contains("it holds files")),
        "{said:?}"
    );
    assert!(!empty.exists());
    assert_eq!(std::fs::read_to_string(data.join("precious")).unwrap(), "x");
}

#[test]
fn a_directory_the_mesh_did_not_make_keeps_its_owner_and_mode_unless_handed_over_by_hand() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode_of = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let (root, paths) = sandbox();
    let there = root.path().join("there");
    std::fs::create_dir(&there).unwrap();
    std::fs::set_permissions(&there, std::fs::Permissions::from_mode(0o755)).unwrap();
    let declared = dir(&there);
    let inside = file(&there.join("auth.conf"), "x");
    for mode in [Mode::DryRun, Mode::Apply] {
        let report = run(&decl(vec![declared.clone(), inside.clone()]), mode, &paths).unwrap();
        let o = &report.resources[0];
        assert_eq!(o.state, State::Failed, "{mode:?}: {}", o.detail);
        assert!(
            o.detail.contains("did not make it") && o.detail.contains("0755"),
            "{}",
            o.detail
        );
        // nor is anything written into it
        assert_eq!(
            report.resources[1].state,
            State::Failed,
            "{}",
            report.resources[1].detail
        );
        assert_eq!(mode_of(&there), 0o755);
        assert!(!there.join("auth.conf").exists());
    }
    // given the declared owner and mode by hand, it is handed over: used as it is, and left
    // as it is when undeclared
    std::fs::set_permissions(&there, std::fs::Permissions::from_mode(0o750)).unwrap();
    assert_eq!(
        states(&decl(vec![declared.clone()]), Mode::Apply, &paths),
        vec![State::Unchanged]
    );
    let report = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert!(
        report.resources[0]
            .detail
            .contains("it was there before the mesh"),
        "{}",
        report.resources[0].detail
    );
    assert!(there.is_dir() && mode_of(&there) == 0o750);
}

#[test]
fn a_directory_an_older_helper_took_over_is_refused_and_its_removal_promises_the_owner_back() {
    use std::os::unix::fs::PermissionsExt as _;
    let (root, paths) = sandbox();
    let there = root.path().join("there");
    std::fs::create_dir(&there).unwrap();
    std::fs::set_permissions(&there, std::fs::Permissions::from_mode(0o750)).unwrap();
    let declared = dir(&there);
    states(&decl(vec![declared.clone()]), Mode::Apply, &paths);
    // as an older helper recorded a directory it found at 0755 and changed
    let mut record = crate::record::Record::load(&paths).unwrap().unwrap();
    let (uid, gid) = super::super::testkit::ids();
    if let Some(crate::record::Entry::Directory(d)) = record.resources.get_mut(&declared.id) {
        d.original = Some((uid, gid, 0o755));
    }
    record.save(&paths).unwrap();
    let again = run(&decl(vec![declared.clone()]), Mode::Apply, &paths).unwrap();
    assert_eq!(again.resources[0].state, State::Failed);
    assert!(
        again.resources[0].detail.contains("older helper"),
        "{}",
        again.resources[0].detail
    );
    let dry = run(&decl(vec![]), Mode::DryRun, &paths).unwrap();
    let promised = undone(&dry, &declared.id);
    assert_eq!(promised.owners.len(), 1, "{promised:?}");
    assert!(promised.owners[0].ends_with(" 0755)"), "{promised:?}");
    run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    let mode = std::fs::metadata(&there).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755);
}

/// What undeclaring `id` did (or would do), as the run reports it.
fn undone(report: &mesh_wire::Report, id: &str) -> mesh_wire::Undo {
    report
        .resources
        .iter()
        .find(|o| o.id == id && o.state == State::Removed)
        .and_then(|o| o.undo.clone())
        .unwrap_or_default()
}

#[test]
fn a_dry_run_counts_a_file_the_same_run_removes_as_gone_from_its_directory() {
    let (root, paths) = sandbox();
    let data = root.path().join("data");
    let made = dir(&data);
    let inside = file(&data.join("made.conf"), "x");
    assert_eq!(
        states(
            &decl(vec![made.clone(), inside.clone()]),
            Mode::Apply,
            &paths
        ),
        vec![State::Created, State::Created]
    );
    // what the record says undeclaring the directory will do: the plan cannot know more
    let before = run(
        &decl(vec![made.clone(), inside.clone()]),
        Mode::DryRun,
        &paths,
    )
    .unwrap();
    let promised = before
        .resources
        .iter()
        .find(|o| o.id == made.id)
        .and_then(|o| o.undo.clone())
        .unwrap_or_default();
    assert_eq!(promised.deletes_if_empty, vec![data.display().to_string()]);

    let dry = run(&decl(vec![]), Mode::DryRun, &paths).unwrap();
    let wet = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    let gone = data.display().to_string();
    assert_eq!(undone(&dry, &made.id).deletes, vec![gone.clone()]);
    assert_eq!(undone(&dry, &made.id), undone(&wet, &made.id));
    assert_eq!(undone(&dry, &inside.id), undone(&wet, &inside.id));
    assert!(!data.exists());
}

#[test]
fn a_directory_that_holds_someone_elses_file_is_kept_by_the_dry_run_and_the_run() {
    let (root, paths) = sandbox();
    let data = root.path().join("data");
    let made = dir(&data);
    states(&decl(vec![made.clone()]), Mode::Apply, &paths);
    std::fs::write(data.join("precious"), "x").unwrap();
    let dry = run(&decl(vec![]), Mode::DryRun, &paths).unwrap();
    let wet = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert_eq!(
        undone(&dry, &made.id).keeps,
        vec![data.display().to_string()]
    );
    assert_eq!(undone(&dry, &made.id), undone(&wet, &made.id));
    assert!(data.join("precious").exists());
}
