//! Whole runs against a hostile machine: kept originals that belong to their resource, and a
//! managed file in a service account's directory that the account swaps for links.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use mesh_wire::{Mode, Resource, Spec, State};

use super::testkit::{decl, file, run, sandbox, states};
use crate::files::tests::{Hostile, NOBODY};
use crate::record::Paths;

/// A file resource owned by `owner`.
fn file_of(path: &Path, content: &str, owner: (u32, u32)) -> Resource {
    let mut resource = file(path, content);
    if let Spec::File(f) = &mut resource.spec {
        f.owner = owner.0.to_string();
        f.group = owner.1.to_string();
    }
    resource
}

/// Two files with the same bytes, both replaced by the mesh.
fn two_alike(original: &str) -> (tempfile::TempDir, Paths, PathBuf, PathBuf) {
    let (dir, paths) = sandbox();
    let (a, b) = (dir.path().join("a.conf"), dir.path().join("b.conf"));
    std::fs::write(&a, original).unwrap();
    std::fs::write(&b, original).unwrap();
    let both = decl(vec![file(&a, "mesh a\n"), file(&b, "mesh b\n")]);
    assert_eq!(
        states(&both, Mode::Apply, &paths),
        vec![State::Changed, State::Changed]
    );
    (dir, paths, a, b)
}

#[test]
fn two_files_with_byte_identical_originals_are_both_given_back() {
    let (_dir, paths, a, b) = two_alike("the same original\n");
    // one is given back in one push, the other in a later one
    let only_b = decl(vec![file(&b, "mesh b\n")]);
    assert_eq!(
        states(&only_b, Mode::Apply, &paths),
        vec![State::Removed, State::Unchanged]
    );
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    for f in [&a, &b] {
        assert_eq!(std::fs::read_to_string(f).unwrap(), "the same original\n");
    }
    assert_eq!(std::fs::read_dir(paths.originals()).unwrap().count(), 0);
}

#[test]
fn a_record_that_names_originals_by_content_still_gives_both_back() {
    let (_dir, paths, a, b) = two_alike("shared\n");
    // as an older helper wrote it: both entries name one blob, by the content's sha256
    let by_content = crate::files::sha256(b"shared\n");
    for blob in std::fs::read_dir(paths.originals()).unwrap() {
        std::fs::remove_file(blob.unwrap().path()).unwrap();
    }
    std::fs::write(paths.original(&by_content), "shared\n").unwrap();
    let mut record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(paths.record()).unwrap()).unwrap();
    for entry in record["resources"].as_object_mut().unwrap().values_mut() {
        entry["original"]["blob"] = by_content.clone().into();
    }
    std::fs::write(paths.record(), record.to_string()).unwrap();

    states(&decl(vec![file(&b, "mesh b\n")]), Mode::Apply, &paths);
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    for f in [&a, &b] {
        assert_eq!(std::fs::read_to_string(f).unwrap(), "shared\n");
    }
}

#[test]
fn a_managed_file_the_account_swaps_for_links_is_refused_and_nothing_else_changes() {
    let Some(h) = Hostile::new() else {
        return;
    };
    let (_state, paths) = sandbox();
    let target = h.svc.join("app.conf");
    let ours = decl(vec![file_of(&target, "same\n", (NOBODY, NOBODY))]);
    assert_eq!(states(&ours, Mode::Apply, &paths), vec![State::Created]);

    // swapped for a hard link to a root file with the same bytes: owner and mode would differ
    std::fs::remove_file(&target).unwrap();
    std::fs::hard_link(&h.canary, &target).unwrap();
    h.plant_temp_names("app.conf");
    let report = run(&ours, Mode::Apply, &paths).unwrap();
    assert_eq!(report.resources[0].state, State::Failed);
    assert!(
        report.resources[0].detail.contains("hard link"),
        "{}",
        report.resources[0].detail
    );
    h.untouched();

    // swapped for a symbolic link: refused the same way; undeclared, only the link goes
    std::fs::remove_file(&target).unwrap();
    h.link("app.conf", &h.canary);
    let report = run(&ours, Mode::Apply, &paths).unwrap();
    assert_eq!(report.resources[0].state, State::Failed);
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    h.untouched();
    assert!(std::fs::symlink_metadata(&target).is_err());
    let state = std::fs::metadata(&paths.root).unwrap();
    assert_eq!(
        (state.uid(), state.mode() & 0o7777),
        (0, 0o711),
        "the state directory is root's and closed"
    );
}
