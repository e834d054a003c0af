//! A push planned against an older generation than the machine's is refused under the lock,
//! before anything is kept or changed; the generation moves with every apply.

use std::fs;

use mesh_wire::{Declaration, Known, Mode, Planned};

use super::Error;
use super::testkit::{decl, file, sandbox};
use crate::record::{Paths, Record};

/// A declaration writing `content` to `path`, planned by `inventory` against `against`.
fn planned(
    path: &std::path::Path,
    content: &str,
    inventory: &str,
    against: Option<(u64, &str)>,
    overwrite: bool,
) -> Declaration {
    Declaration {
        planned: Some(Planned {
            inventory: inventory.into(),
            against: against.map(|(number, i)| Known {
                number,
                inventory: i.into(),
            }),
            overwrite,
            unrecorded: false,
            push: None,
            lost: None,
        }),
        ..decl(vec![file(path, content)])
    }
}

/// The helper's whole run, as `mesh-host apply` makes it.
fn apply(d: &Declaration, paths: &Paths) -> Result<mesh_wire::Report, Error> {
    crate::confirm::run(d, Mode::Apply, paths)
}

#[test]
fn a_push_planned_against_an_older_generation_changes_nothing() {
    let (dir, paths) = sandbox();
    let f = dir.path().join("motd");
    let first = apply(&planned(&f, "a1\n", "a", None, false), &paths).unwrap();
    let one = first.generation.expect("a generation");
    assert_eq!((one.number, one.inventory.as_str()), (1, "a"));
    let second = apply(&planned(&f, "a2\n", "a", Some((1, "a")), false), &paths).unwrap();
    assert_eq!(second.generation.map(|g| g.number), Some(2));
    let record = fs::read(paths.record()).unwrap();

    // B last saw generation 1: the machine is at 2
    let refused = apply(&planned(&f, "b\n", "b", Some((1, "a")), false), &paths).unwrap_err();
    let Error::Stale(stale) = &refused else {
        panic!("not stale: {refused}");
    };
    assert_eq!(stale.machine.number, 2);
    assert_eq!(refused.exit_code(), 22);
    assert!(refused.to_string().contains("`mesh check`"), "{refused}");
    assert_eq!(fs::read_to_string(&f).unwrap(), "a2\n");
    assert_eq!(
        fs::read(paths.record()).unwrap(),
        record,
        "the record moved"
    );
    // the same number from another inventory is not the machine's either
    let other = apply(&planned(&f, "b\n", "b", Some((2, "b")), false), &paths);
    assert!(matches!(other, Err(Error::Stale(_))));
}

#[test]
fn a_dry_run_says_the_generation_and_a_push_planned_against_it_goes_through() {
    let (dir, paths) = sandbox();
    let f = dir.path().join("motd");
    apply(&planned(&f, "a1\n", "a", None, false), &paths).unwrap();
    let checked =
        crate::confirm::run(&planned(&f, "b\n", "b", None, false), Mode::DryRun, &paths).unwrap();
    let seen = checked.generation.expect("the machine's generation");
    let against = Some((seen.number, seen.inventory.as_str()));
    let pushed = apply(&planned(&f, "b\n", "b", against, false), &paths).unwrap();
    let now = pushed.generation.unwrap();
    assert_eq!((now.number, now.inventory.as_str()), (2, "b"));
    assert_eq!(fs::read_to_string(&f).unwrap(), "b\n");
}

#[test]
fn overwrite_replaces_a_newer_generation_and_an_older_record_is_generation_0() {
    let (dir, paths) = sandbox();
    let f = dir.path().join("motd");
    apply(&planned(&f, "a1\n", "a", None, false), &paths).unwrap();
    apply(&planned(&f, "a2\n", "a", Some((1, "a")), false), &paths).unwrap();
    let over = apply(&planned(&f, "b\n", "b", Some((0, "b")), true), &paths).unwrap();
    assert_eq!(over.generation.map(|g| g.number), Some(3));
    assert_eq!(fs::read_to_string(&f).unwrap(), "b\n");

    // a record written before generations: it accepts any plan
    let mut record = Record::load(&paths).unwrap().unwrap();
    record.generation = None;
    record.save(&paths).unwrap();
    let text = fs::read_to_string(paths.record()).unwrap();
    assert!(!text.contains("generation"), "{text}");
    let pushed = apply(&planned(&f, "a3\n", "a", Some((1, "a")), false), &paths).unwrap();
    assert_eq!(pushed.generation.map(|g| g.number), Some(2));
}
