//! A folder the mesh made to hold what it declares is given back as found: removed once nothing
//! is left in it, whichever resource made it and whenever the last one in it goes; one it found
//! stays.

use mesh_wire::{Mode, State};

use super::testkit::{decl, directory, file, run, sandbox, states};

#[test]
fn a_folder_made_for_two_files_goes_with_them_whichever_made_it() {
    let (root, paths) = sandbox();
    let made = root.path().join("made");
    // `b` is written first, so it is the one that made the folder; undeclared, `b` is given
    // back first too, while `a` is still in it
    let b = file(&made.join("b"), "b");
    let a = file(&made.join("a"), "a");
    assert_eq!(
        states(&decl(vec![b, a]), Mode::Apply, &paths),
        vec![State::Created, State::Created]
    );
    let dry = run(&decl(vec![]), Mode::DryRun, &paths).unwrap();
    let wet = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert!(!made.exists(), "{:?}", wet.resources);
    assert_eq!(undos(&dry), undos(&wet));
    let gone = made.display().to_string();
    assert!(
        wet.resources
            .iter()
            .any(|o| o.undo.as_ref().is_some_and(|u| u.deletes.contains(&gone))),
        "the removal says the folder went: {:?}",
        wet.resources
    );
}

#[test]
fn a_folder_kept_for_a_file_still_in_it_goes_with_that_file_at_a_later_push() {
    let (root, paths) = sandbox();
    let made = root.path().join("made");
    let a = file(&made.join("a"), "a");
    let b = file(&made.join("sub/b"), "b");
    let d = directory(&made.join("data"));
    // the directory is made first (directories before files): it makes `made`
    states(
        &decl(vec![a.clone(), b.clone(), d.clone()]),
        Mode::Apply,
        &paths,
    );
    // the directory goes; `made` still holds a and sub/b, so it stays
    states(&decl(vec![a.clone(), b.clone()]), Mode::Apply, &paths);
    assert!(made.join("a").exists() && !made.join("data").exists());
    // what is left in it now promises the folder back too
    let promised = run(&decl(vec![a.clone(), b.clone()]), Mode::DryRun, &paths).unwrap();
    let gone = made.display().to_string();
    let promise = promised.resources.iter().find(|o| o.id == a.id).unwrap();
    assert!(
        promise
            .undo
            .as_ref()
            .is_some_and(|u| u.deletes_if_empty.contains(&gone)),
        "{promise:?}"
    );
    states(&decl(vec![b.clone()]), Mode::Apply, &paths);
    assert!(made.join("sub/b").exists());
    let dry = run(&decl(vec![]), Mode::DryRun, &paths).unwrap();
    let wet = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert_eq!(undos(&dry), undos(&wet));
    assert!(!made.exists(), "{:?}", wet.resources);
    assert!(root.path().exists(), "a folder the mesh found stays");
}

#[test]
fn a_folder_the_mesh_made_that_holds_someone_elses_file_is_kept_with_it() {
    let (root, paths) = sandbox();
    let made = root.path().join("made");
    let a = file(&made.join("a"), "a");
    states(&decl(vec![a.clone()]), Mode::Apply, &paths);
    std::fs::write(made.join("theirs"), "x").unwrap();
    let wet = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert!(!made.join("a").exists(), "{:?}", wet.resources);
    assert_eq!(std::fs::read_to_string(made.join("theirs")).unwrap(), "x");
}

/// What each removal of a run did (or would do): a dry run and a push say the same.
fn undos(report: &mesh_wire::Report) -> Vec<(String, Option<mesh_wire::Undo>)> {
    report
        .resources
        .iter()
        .map(|o| (o.id.clone(), o.undo.clone()))
        .collect()
}
