//! The adopt mode's tests: refusals of a lost or untrusted record, and what adopting takes,
//! keeps and says it cannot give back.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use mesh_wire::{Declaration, Mode, RecordRefusal, State};

use super::notes_dir;
use crate::apply::Error;
use crate::apply::testkit::{decl, file, run, sandbox, states};
use crate::record::Paths;
use crate::signs;

/// A sandbox whose file `conf` holds `found`, and a declaration giving it the mesh's content.
fn machine(found: &str) -> (tempfile::TempDir, Paths, PathBuf, Declaration) {
    let (dir, paths) = sandbox();
    let target = dir.path().join("conf");
    fs::write(&target, found).unwrap();
    let declared = decl(vec![file(&target, "mesh\n")]);
    (dir, paths, target, declared)
}

fn refused(result: Result<mesh_wire::Report, Error>) -> RecordRefusal {
    match result {
        Err(Error::Refused(r)) => r,
        Err(e) => panic!("not a refusal: {e}"),
        Ok(r) => panic!("not refused: {r:?}"),
    }
}

#[test]
fn a_lost_record_is_refused_and_adopt_gives_the_original_back() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("issue");
    fs::write(&target, "the host's own\n").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o604)).unwrap();
    let declared = decl(vec![file(&target, "mesh\n")]);
    assert_eq!(states(&declared, Mode::Apply, &paths), vec![State::Changed]);
    fs::remove_file(paths.record()).unwrap();

    // a push and a dry run are refused, naming what was found; nothing changes
    let changed = decl(vec![file(&target, "mesh, again\n")]);
    for mode in [Mode::Apply, Mode::DryRun] {
        let RecordRefusal::Lost { found, .. } = refused(run(&changed, mode, &paths)) else {
            panic!("not a lost record")
        };
        assert!(
            found.iter().any(|f| f.contains("kept originals")),
            "{found:?}"
        );
    }
    assert_eq!(fs::read_to_string(&target).unwrap(), "mesh\n");
    assert!(!paths.record().exists());

    let report = run(&declared, Mode::Adopt, &paths).unwrap();
    let adoption = report.adoption.unwrap();
    assert!(adoption.cannot_give_back.is_empty(), "{adoption:?}");
    assert!(adoption.kept.is_empty(), "{adoption:?}");
    assert_eq!(
        report.resources[0].undo.as_ref().unwrap().restores,
        vec![target.display().to_string()]
    );
    // adopting again changes nothing: the record is whole
    let again = run(&declared, Mode::Adopt, &paths).unwrap();
    assert!(again.adoption.unwrap().had_record);

    assert_eq!(
        states(&declared, Mode::Apply, &paths),
        vec![State::Unchanged]
    );
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "the host's own\n");
    assert_eq!(
        fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
        0o604
    );
    assert!(signs::entries(&paths.originals()).is_empty());
    assert!(signs::entries(&notes_dir(&paths)).is_empty());
}

#[test]
fn an_original_nothing_matches_is_kept_and_named_and_never_given_back_wrong() {
    let (_dir, paths, target, declared) = machine("the host's own\n");
    states(&declared, Mode::Apply, &paths);
    // as an older helper left it: no notes, and the original named by its content, not by its
    // resource
    fs::remove_file(paths.record()).unwrap();
    fs::remove_dir_all(notes_dir(&paths)).unwrap();
    for name in signs::entries(&paths.originals()) {
        let at = paths.original(&name);
        let by_content = crate::files::sha256(&fs::read(&at).unwrap());
        fs::rename(&at, paths.original(&by_content)).unwrap();
    }

    let report = run(&declared, Mode::Adopt, &paths).unwrap();
    let adoption = report.adoption.unwrap();
    assert_eq!(adoption.kept.len(), 1, "{adoption:?}");
    assert!(
        adoption.cannot_give_back[0].contains(&target.display().to_string()),
        "{adoption:?}"
    );
    assert_eq!(report.resources[0].undo, None, "nothing is promised");

    let gone = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert_eq!(gone.resources[0].state, State::Removed);
    assert!(
        gone.resources[0].detail.contains("cannot be given back"),
        "{}",
        gone.resources[0].detail
    );
    // left as it is, and the orphaned original is still kept
    assert_eq!(fs::read_to_string(&target).unwrap(), "mesh\n");
    assert_eq!(signs::entries(&paths.originals()).len(), 1);
}

#[test]
fn an_original_kept_under_its_resource_s_name_is_matched_without_a_note() {
    let (_dir, paths, target, declared) = machine("mesh\n");
    let id = &declared.resources[0].id;
    fs::create_dir_all(paths.originals()).unwrap();
    let blob = format!("resource-{}", crate::files::sha256(id.as_bytes()));
    fs::write(paths.original(&blob), "the host's own\n").unwrap();

    let report = run(&declared, Mode::Adopt, &paths).unwrap();
    let adoption = report.adoption.unwrap();
    assert!(adoption.kept.is_empty() && adoption.cannot_give_back.is_empty());
    run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert_eq!(fs::read_to_string(&target).unwrap(), "the host's own\n");
}

#[test]
fn a_record_that_cannot_be_trusted_is_refused_and_adopt_sets_it_aside() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("conf");
    let declared = decl(vec![file(&target, "mesh\n")]);
    states(&declared, Mode::Apply, &paths);
    let good = fs::read_to_string(paths.record()).unwrap();

    fs::write(
        paths.record(),
        good.replace("\"version\": 1", "\"version\": 99"),
    )
    .unwrap();
    for mode in [Mode::Apply, Mode::DryRun, Mode::Adopt] {
        let refusal = refused(run(&declared, mode, &paths));
        assert!(
            matches!(refusal, RecordRefusal::UnknownVersion { version: 99, .. }),
            "{refusal:?}"
        );
        assert!(refusal.to_string().contains("version 99"), "{refusal}");
    }

    fs::write(paths.record(), "{\"version\": 1, \"resources\": ").unwrap();
    let refusal = refused(run(&declared, Mode::Apply, &paths));
    assert!(
        matches!(refusal, RecordRefusal::Unreadable { .. }),
        "{refusal:?}"
    );
    assert_eq!(refusal.exit_code(), mesh_wire::EXIT_RECORD_UNREADABLE);
    let report = run(&declared, Mode::Adopt, &paths).unwrap();
    let kept = report.adoption.unwrap().kept;
    assert!(kept[0].contains("record.json.unreadable-"), "{kept:?}");
    assert_eq!(
        states(&declared, Mode::Apply, &paths),
        vec![State::Unchanged]
    );
}

#[test]
fn keys_whose_values_before_the_mesh_are_lost_are_left_as_they_are() {
    let (dir, paths) = sandbox();
    let target = dir.path().join("daemon.json");
    fs::write(&target, r#"{"theirs": 1, "ours": "before"}"#).unwrap();
    let keys: mesh_wire::Resource = serde_json::from_value(serde_json::json!({
        "id": "t:keys:daemon", "instance": "t", "module": "t@1", "kind": "keys",
        "path": target.display().to_string(), "owner": "0", "group": "0", "mode": 0o644,
        "keys": [{"path": ["ours"], "value": "mesh"}],
        "source": "s", "settings": {}, "cost": "none", "units": []
    }))
    .unwrap();
    let declared = decl(vec![keys]);
    states(&declared, Mode::Apply, &paths);
    fs::remove_file(paths.record()).unwrap();
    refused(run(&declared, Mode::Apply, &paths));

    let report = run(&declared, Mode::Adopt, &paths).unwrap();
    assert_eq!(report.resources[0].undo, None, "nothing is promised");
    assert!(
        report.adoption.unwrap().cannot_give_back[0].contains("daemon.json"),
        "the loss is said"
    );
    assert_eq!(
        states(&declared, Mode::Apply, &paths),
        vec![State::Unchanged]
    );
    let gone = run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert!(
        gone.resources[0].detail.contains("cannot be given back"),
        "{}",
        gone.resources[0].detail
    );
    assert_eq!(
        fs::read_to_string(&target)
            .unwrap()
            .replace(char::is_whitespace, ""),
        r#"{"theirs":1,"ours":"mesh"}"#
    );
}

#[test]
fn units_the_mesh_marked_are_taken_and_others_are_not() {
    let (_dir, paths) = sandbox();
    let units = signs::units_dir(&paths);
    fs::create_dir_all(&units).unwrap();
    fs::write(units.join("w-old.service"), format!("{}: x\n", signs::MARK)).unwrap();
    fs::write(units.join("theirs.service"), "[Unit]\n").unwrap();
    let report = run(&decl(vec![]), Mode::Adopt, &paths).unwrap();
    let ids: Vec<&str> = report.resources.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, vec!["adopted:process:w-old.service"]);
    assert_eq!(
        report.resources[0].undo.as_ref().unwrap().stops,
        vec!["w-old.service"]
    );
}

#[test]
fn a_new_machine_is_adopted_as_new_and_a_push_then_keeps_what_it_had() {
    let (_dir, paths, target, declared) = machine("the host's own\n");
    let report = run(&declared, Mode::Adopt, &paths).unwrap();
    assert!(report.new_machine, "{report:?}");
    let adoption = report.adoption.clone().unwrap();
    assert!(adoption.new_machine, "{adoption:?}");
    assert!(adoption.cannot_give_back.is_empty(), "{adoption:?}");
    assert!(report.resources.is_empty(), "nothing taken: {report:?}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "the host's own\n");

    // the push replaces it and keeps it; undeclared, it comes back
    assert_eq!(states(&declared, Mode::Apply, &paths), vec![State::Changed]);
    assert_eq!(fs::read_to_string(&target).unwrap(), "mesh\n");
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "the host's own\n");
}

#[test]
fn a_machine_the_operator_knows_is_never_adopted_as_new() {
    let (_dir, paths, _target, declared) = machine("the mesh's, or the host's?\n");
    let known = Declaration {
        expects_record: true,
        ..declared
    };
    let report = run(&known, Mode::Adopt, &paths).unwrap();
    let adoption = report.adoption.unwrap();
    assert!(!adoption.new_machine, "{adoption:?}");
    assert!(
        adoption.cannot_give_back.iter().any(|l| l.contains("lost")),
        "{adoption:?}"
    );
}
