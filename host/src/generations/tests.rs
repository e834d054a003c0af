//! The machine's kept generations: each confirmed push kept as sent, the last ten only, written
//! whole or not at all; listed; and a rollback applies one again as a new generation.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use mesh_wire::{Generation, Mode, Planned};

use super::rollback::{Error, listing, roll_back, said};
use super::{KEPT, keep, list, load};
use crate::apply::testkit::{decl, file, sandbox};
use crate::record::Record;

fn at(number: u64) -> Generation {
    Generation {
        number,
        inventory: "inv-a".into(),
        pushed_at: 1_796_173_200 + number,
        rolled_back_to: None,
        push: None,
    }
}

/// A push from inventory `inv-a`, planned against what the machine has.
fn push(d: &mesh_wire::Declaration, paths: &crate::record::Paths) -> mesh_wire::Report {
    let record = Record::load(paths).unwrap();
    let against = record.and_then(|r| r.generation).map(|g| mesh_wire::Known {
        number: g.number,
        inventory: g.inventory,
    });
    let planned = mesh_wire::Declaration {
        planned: Some(Planned {
            inventory: "inv-a".into(),
            against,
            overwrite: false,
            unrecorded: false,
            push: None,
            lost: None,
        }),
        ..d.clone()
    };
    crate::confirm::run(&planned, Mode::Apply, paths).unwrap()
}

#[test]
fn only_the_last_ten_generations_are_kept() {
    let (dir, paths) = sandbox();
    let d = decl(vec![file(&dir.path().join("x"), "x\n")]);
    for number in 1..=13 {
        keep(&paths, &at(number), &d).unwrap();
    }
    let kept: Vec<u64> = list(&paths)
        .unwrap()
        .stored
        .iter()
        .map(|s| s.generation.number)
        .collect();
    assert_eq!(kept, (4..=13).collect::<Vec<_>>());
    assert_eq!(kept.len(), KEPT);
    assert!(load(&paths, 3).unwrap().is_none());
}

#[test]
fn a_kept_generation_is_written_whole_and_private_and_leaves_no_temp_file() {
    let (dir, paths) = sandbox();
    let d = decl(vec![file(&dir.path().join("x"), "x\n")]);
    keep(&paths, &at(1), &d).unwrap();
    keep(&paths, &at(1), &decl(vec![])).unwrap();
    let names: Vec<String> = fs::read_dir(paths.root.join("generations"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["1.json"], "a temp file was left");
    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&paths.root.join("generations/1.json")), 0o600);
    assert_eq!(mode(&paths.root.join("generations")), 0o700);
    // the second write replaced the first whole
    assert!(
        load(&paths, 1)
            .unwrap()
            .unwrap()
            .declaration
            .resources
            .is_empty()
    );
}

#[test]
fn a_push_that_makes_a_generation_is_kept_as_sent_and_a_no_op_makes_none() {
    let (dir, paths) = sandbox();
    let f = dir.path().join("motd");
    push(&decl(vec![file(&f, "one\n")]), &paths);
    push(&decl(vec![file(&f, "two\n")]), &paths);
    push(&decl(vec![file(&f, "two\n")]), &paths);
    let kept = list(&paths).unwrap().stored;
    assert_eq!(
        kept.len(),
        2,
        "a push that changed nothing is no generation"
    );
    assert_eq!(kept[1].generation.number, 2);
    assert!(kept[1].declaration.planned.is_none());
    let listed = listing(&paths).unwrap().0;
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 3, "{listed}");
    assert!(
        lines[1].trim_start().starts_with("1  ") && lines[1].contains("inv-a"),
        "{listed}"
    );
    assert!(!lines[1].contains("(current)"), "{listed}");
    assert!(
        lines[2].trim_start().starts_with("2  ") && lines[2].ends_with("(current)"),
        "{listed}"
    );
}

#[test]
fn a_rollback_applies_a_kept_generation_again_as_a_new_one_that_a_stale_push_cannot_replace() {
    let (dir, paths) = sandbox();
    let (f, g) = (dir.path().join("motd"), dir.path().join("only-in-two"));
    push(&decl(vec![file(&f, "one\n")]), &paths);
    push(&decl(vec![file(&f, "two\n"), file(&g, "g\n")]), &paths);
    let report = roll_back("1", &paths).unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "one\n");
    assert!(!g.exists(), "what generation 1 did not have is given back");
    let made = report.generation.expect("a generation");
    assert_eq!((made.number, made.rolled_back_to), (3, Some(1)));
    assert_eq!(made.inventory, "inv-a");
    let record = Record::load(&paths).unwrap().unwrap();
    assert_eq!(record.generation, Some(made));
    let listed = listing(&paths).unwrap().0;
    assert!(
        listed
            .lines()
            .last()
            .unwrap()
            .contains("rolled back to 1 on the machine  (current)"),
        "{listed}"
    );

    // the operator planned against 2: refused as stale, nothing changed
    let stale = mesh_wire::Declaration {
        planned: Some(Planned {
            inventory: "inv-a".into(),
            against: Some(mesh_wire::Known {
                number: 2,
                inventory: "inv-a".into(),
            }),
            overwrite: false,
            unrecorded: false,
            push: None,
            lost: None,
        }),
        ..decl(vec![file(&f, "two\n")])
    };
    let refused = crate::confirm::run(&stale, Mode::Apply, &paths).unwrap_err();
    assert!(
        matches!(refused, crate::apply::Error::Stale(_)),
        "{refused}"
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "one\n");
}

#[test]
fn an_unknown_generation_names_those_the_machine_keeps() {
    let (dir, paths) = sandbox();
    let f = dir.path().join("motd");
    let none = roll_back("1", &paths).unwrap_err();
    assert!(none.to_string().contains("it keeps none yet"), "{none}");
    push(&decl(vec![file(&f, "one\n")]), &paths);
    push(&decl(vec![file(&f, "two\n")]), &paths);
    for asked in ["7", "latest"] {
        let refused = roll_back(asked, &paths).unwrap_err();
        assert!(matches!(refused, Error::Unknown { .. }), "{refused}");
        assert!(
            refused
                .to_string()
                .contains(&format!("keeps no generation {asked}: it keeps 1, 2")),
            "{refused}"
        );
    }
    assert_eq!(fs::read_to_string(&f).unwrap(), "two\n");
}

#[test]
fn a_rollback_to_what_the_machine_has_changes_nothing_and_makes_no_generation() {
    let (dir, paths) = sandbox();
    let f = dir.path().join("motd");
    push(&decl(vec![file(&f, "one\n")]), &paths);
    let report = roll_back("1", &paths).unwrap();
    assert_eq!(
        report.generation.map(|g| (g.number, g.rolled_back_to)),
        Some((1, None))
    );
    assert_eq!(list(&paths).unwrap().stored.len(), 1);
    assert_eq!(fs::read_to_string(&f).unwrap(), "one\n");
}

#[test]
fn one_unreadable_kept_generation_hides_none_of_the_others_and_is_named_with_why() {
    let (dir, paths) = sandbox();
    let f = dir.path().join("motd");
    for word in ["one", "two", "three"] {
        push(&decl(vec![file(&f, &format!("{word}\n"))]), &paths);
    }
    let two = paths.root.join("generations/2.json");
    fs::write(&two, "{\"generation\":").unwrap();
    let kept = list(&paths).unwrap();
    let readable: Vec<u64> = kept.stored.iter().map(|s| s.generation.number).collect();
    assert_eq!(readable, vec![1, 3]);
    assert_eq!(kept.unreadable.len(), 1);
    let (listed, unreadable) = listing(&paths).unwrap();
    assert_eq!(unreadable, 1);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 4, "{listed}");
    assert!(lines[1].trim_start().starts_with("1  "), "{listed}");
    assert!(
        lines[2].trim_start().starts_with("2  UNREADABLE")
            && lines[2].contains(&format!("{}: EOF while parsing", two.display())),
        "{listed}"
    );
    assert!(
        lines[3].trim_start().starts_with("3  ") && lines[3].ends_with("(current)"),
        "{listed}"
    );
    // a rollback to it refuses, naming the file, and changes nothing; to another it goes on
    let refused = roll_back("2", &paths).unwrap_err();
    assert!(matches!(refused, Error::Unreadable(_)), "{refused}");
    assert!(
        refused.to_string().contains(&format!(
            "generation 2 cannot be rolled back to: its kept file {} cannot be read (EOF",
            two.display()
        )) && refused.to_string().contains("nothing was changed"),
        "{refused}"
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "three\n");
    roll_back("1", &paths).unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "one\n");
}

#[test]
fn a_rollback_with_a_failed_resource_never_says_nothing_changed_and_says_what_failed_and_applied() {
    let (dir, paths) = sandbox();
    let (f, g) = (dir.path().join("motd"), dir.path().join("issue"));
    push(&decl(vec![file(&f, "one\n"), file(&g, "one\n")]), &paths);
    push(&decl(vec![file(&f, "one\n"), file(&g, "two\n")]), &paths);
    // the file generation 1 has is a directory now: it fails, and nothing else moves
    fs::remove_file(&f).unwrap();
    fs::create_dir(&f).unwrap();
    fs::write(&g, "one\n").unwrap();
    let report = roll_back("1", &paths).unwrap();
    assert!(report.failed(), "{report:?}");
    let text = said(&report, "1");
    assert!(!text.contains("nothing changed"), "{text}");
    assert!(
        text.starts_with(
            "NOT rolled back to generation 1: 1 resource FAILED (below), and nothing else \
             needed a change; the machine stays at generation 2"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!("FAILED     t:file:{}", f.display())),
        "{text}"
    );

    // one fails, another is applied: rolled back only in part, the new generation named
    fs::write(&g, "two\n").unwrap();
    let report = roll_back("1", &paths).unwrap();
    let text = said(&report, "1");
    assert!(
        text.starts_with(
            "rolled back to generation 1 only in part: 1 resource FAILED and 1 change applied \
             (below); the machine is at generation 3 now"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!("changed    t:file:{}", g.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("FAILED     t:file:{}", f.display())),
        "{text}"
    );
    assert_eq!(fs::read_to_string(&g).unwrap(), "one\n");
}
