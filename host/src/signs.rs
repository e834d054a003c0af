//! Signs that the mesh has been on this machine, looked for when there is no record.
//!
//! A machine without a record is new only if nothing of the mesh is on it; otherwise the record
//! was lost, and applying would take the mesh's own work for what the host had (and give that
//! "back" later). Evidence is what only a helper that applied here leaves behind: kept originals
//! and their notes, process bundles, unit files it marked, containers it labelled, and the lock
//! an apply leaves. A helper binary alone is not evidence: this one is always there, and a dry run
//! (`mesh check`) uploads a helper without changing anything; helpers of other versions are named
//! beside real evidence, never on their own.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use mesh_wire::{RecordRefusal, STATE_DIR};

use crate::apply::{self, Error};
use crate::record::Paths;

/// How a unit file the mesh wrote begins.
pub(crate) const MARK: &str = "# Written by mesh";

/// Refuses a machine with no record that shows signs of the mesh; `applied_before` says the lock
/// of an earlier apply was there before this run, `operator_knows` that the operator's inventory
/// holds what this machine's helper answered before (a machine whose whole state directory is
/// gone shows nothing else).
pub(crate) fn refuse_if_found(
    paths: &Paths,
    applied_before: bool,
    operator_knows: bool,
) -> Result<(), Error> {
    refuse_if_seen(paths, applied_before, operator_knows, Containers::Ask)
}

/// Whether [`refuse_if_seen`] asks the container engine (a `docker ps`, tens of milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Containers {
    Ask,
    /// This run asked already, before it took the lock, and found none; the record is still
    /// missing under the lock, so no apply has run since: an apply writes its record before it
    /// makes anything, containers included.
    AskedBeforeTheLock,
}

/// [`refuse_if_found`], asking the container engine only if `containers` says so.
pub(crate) fn refuse_if_seen(
    paths: &Paths,
    applied_before: bool,
    operator_knows: bool,
    containers: Containers,
) -> Result<(), Error> {
    let mut found = Vec::new();
    if operator_knows {
        found.push(
            "the operator's inventory, which holds what this machine's helper answered before"
                .to_string(),
        );
    }
    if applied_before {
        found.push(format!(
            "the lock {} an earlier apply left",
            paths.lock().display()
        ));
    }
    for (dir, what) in [
        (paths.originals(), "kept originals"),
        (crate::adopt::notes_dir(paths), "notes of kept originals"),
        (paths.root.join("env"), "environment files of processes"),
    ] {
        let count = entries(&dir).len();
        if count > 0 {
            found.push(format!("{what} in {} ({count})", dir.display()));
        }
    }
    let named = [
        (
            "process bundles in",
            bundles_dir(paths).display().to_string(),
            entries(&paths.machine.real(&bundles_dir(paths))),
        ),
        (
            "unit files the mesh wrote in",
            units_dir(paths).display().to_string(),
            marked_units(&paths.machine, &units_dir(paths)),
        ),
        (
            "containers labelled",
            apply::INSTANCE_LABEL.to_string(),
            match containers {
                Containers::Ask => mesh_containers(paths),
                Containers::AskedBeforeTheLock => Vec::new(),
            },
        ),
    ];
    for (what, place, names) in named {
        if !names.is_empty() {
            found.push(format!("{what} {place}: {}", names.join(", ")));
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let others = other_helpers(paths);
    if !others.is_empty() {
        found.push(format!(
            "helpers of other mesh versions in {}: {}",
            paths.root.join("bin").display(),
            others.join(", ")
        ));
    }
    Err(Error::Refused(RecordRefusal::Lost {
        record: paths.record().display().to_string(),
        found,
    }))
}

/// Where unit files are, as the machine names them: the machine's (under a root of its own, that
/// root's); beside a state directory of its own (a test's), so a test never reads the host's
/// units.
pub(crate) fn units_dir(paths: &Paths) -> PathBuf {
    if paths.root == Path::new(STATE_DIR) || paths.machine.dir().is_some() {
        PathBuf::from(crate::units::UNIT_DIR)
    } else {
        paths
            .root
            .parent()
            .unwrap_or(&paths.root)
            .join("systemd-system")
    }
}

/// Where process bundles are, as the machine names them.
pub(crate) fn bundles_dir(paths: &Paths) -> PathBuf {
    match paths.machine.dir() {
        Some(_) => Path::new(STATE_DIR).join("bundles"),
        None => paths.root.join("bundles"),
    }
}

/// The names in a directory, sorted; none when it is missing or unreadable.
pub(crate) fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|items| {
            items
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The unit files in `dir` that begin with the mesh's mark (regular files only: a link is not
/// something the mesh wrote).
pub(crate) fn marked_units(root: &crate::files::Root, dir: &Path) -> Vec<String> {
    let dir = &root.real(dir);
    entries(dir)
        .into_iter()
        .filter(|name| {
            let path = dir.join(name);
            let regular = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
            let mut head = [0u8; MARK.len()];
            regular
                && fs::File::open(&path)
                    .and_then(|mut f| f.read_exact(&mut head))
                    .is_ok()
                && head == MARK.as_bytes()
        })
        .collect()
}

/// Containers carrying the mesh's instance label. A test's own state directory on this machine
/// (not under a root of its own) has none: the machine's Docker is not its.
pub(crate) fn mesh_containers(paths: &Paths) -> Vec<String> {
    if paths.root != Path::new(STATE_DIR) && paths.machine.dir().is_none() {
        return Vec::new();
    }
    paths.system.labelled_containers(apply::INSTANCE_LABEL)
}

/// Helper binaries in the state directory other than the one running.
fn other_helpers(paths: &Paths) -> Vec<String> {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    entries(&paths.root.join("bin"))
        .into_iter()
        .filter(|name| name.starts_with("mesh-host-") && Some(name) != me.as_ref())
        .collect()
}

#[cfg(test)]
mod tests {
    use mesh_wire::RecordRefusal;

    use super::*;
    use crate::apply::testkit::sandbox;

    fn refusal(paths: &Paths, applied_before: bool) -> Option<Vec<String>> {
        match refuse_if_found(paths, applied_before, false) {
            Ok(()) => None,
            Err(Error::Refused(RecordRefusal::Lost { found, .. })) => Some(found),
            Err(e) => panic!("not a refusal: {e}"),
        }
    }

    #[test]
    fn a_new_machine_shows_no_signs_even_with_a_helper_and_empty_folders() {
        let (_dir, paths) = sandbox();
        fs::create_dir_all(paths.root.join("bin")).unwrap();
        fs::write(paths.root.join("bin/mesh-host-0123"), "").unwrap();
        fs::create_dir_all(paths.originals()).unwrap();
        fs::create_dir_all(bundles_dir(&paths)).unwrap();
        fs::create_dir_all(units_dir(&paths)).unwrap();
        fs::write(units_dir(&paths).join("theirs.service"), "[Unit]\n").unwrap();
        assert_eq!(refusal(&paths, false), None);
    }

    #[test]
    fn each_sign_is_found_and_named() {
        let (_dir, paths) = sandbox();
        assert!(refusal(&paths, true).unwrap()[0].contains("lock"));

        let (_dir, paths) = sandbox();
        fs::create_dir_all(paths.originals()).unwrap();
        fs::write(paths.original("abc"), "theirs").unwrap();
        assert!(refusal(&paths, false).unwrap()[0].contains("kept originals"));

        let (_dir, paths) = sandbox();
        fs::create_dir_all(bundles_dir(&paths).join("web-worker")).unwrap();
        assert!(refusal(&paths, false).unwrap()[0].contains("web-worker"));

        let (_dir, paths) = sandbox();
        fs::create_dir_all(units_dir(&paths)).unwrap();
        fs::write(
            units_dir(&paths).join("web-worker.service"),
            format!("{MARK}: it is removed when the process is no longer declared.\n"),
        )
        .unwrap();
        // a link to a marked file is not one the mesh wrote
        std::os::unix::fs::symlink(
            units_dir(&paths).join("web-worker.service"),
            units_dir(&paths).join("link.service"),
        )
        .unwrap();
        let found = refusal(&paths, false).unwrap();
        assert!(found[0].contains("web-worker.service"), "{found:?}");
        assert!(!found[0].contains("link.service"), "{found:?}");
    }

    #[test]
    fn a_run_refused_for_what_the_operator_knows_leaves_nothing_that_refuses_the_next() {
        use crate::apply::testkit::{decl, file, run};
        let (dir, paths) = sandbox();
        let a = dir.path().join("a.conf");
        let mut knows = decl(vec![file(&a, "mesh a\n")]);
        knows.expects_record = true;
        let refused = run(&knows, mesh_wire::Mode::Apply, &paths);
        assert!(matches!(refused, Err(Error::Refused(_))), "{refused:?}");
        assert!(!paths.lock().exists(), "a refused run made the lock");
        // another operator's push, that knows nothing of this machine: it is new
        run(
            &decl(vec![file(&a, "mesh a\n")]),
            mesh_wire::Mode::Apply,
            &paths,
        )
        .unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "mesh a\n");
    }

    #[test]
    fn other_helpers_are_named_only_beside_evidence() {
        let (_dir, paths) = sandbox();
        fs::create_dir_all(paths.root.join("bin")).unwrap();
        fs::write(paths.root.join("bin/mesh-host-old"), "").unwrap();
        assert_eq!(refusal(&paths, false), None);
        let found = refusal(&paths, true).unwrap();
        assert!(found[1].contains("mesh-host-old"), "{found:?}");
    }

    fn docker_asked(paths: &Paths) -> usize {
        crate::system::Recording::calls_in(&paths.root.join(Paths::SYSTEM))
            .iter()
            .filter(|c| c.starts_with("docker ps"))
            .count()
    }

    #[test]
    fn a_new_machine_asks_its_container_engine_once_per_apply_and_a_labelled_container_refuses_it()
    {
        use crate::apply::testkit::{decl, machine, run};
        let (_dir, paths) = machine(|_| {});
        run(&decl(vec![]), mesh_wire::Mode::Apply, &paths).unwrap();
        assert_eq!(
            docker_asked(&paths),
            1,
            "asked before the lock, not again under it"
        );

        let (_dir, paths) = machine(|m| {
            let labels = [(apply::INSTANCE_LABEL.to_string(), "web".to_string())];
            m.containers.insert(
                "web".into(),
                crate::system::recording::Container {
                    running: true,
                    labels: labels.into(),
                },
            );
        });
        match run(&decl(vec![]), mesh_wire::Mode::Apply, &paths) {
            Err(Error::Refused(RecordRefusal::Lost { found, .. })) => {
                assert!(found.iter().any(|f| f.contains("web")), "{found:?}")
            }
            other => panic!("a machine with the mesh's container is not new: {other:?}"),
        }
        assert!(!paths.record().exists() && !paths.lock().exists());
    }
}
