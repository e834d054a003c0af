//! What the helper's unit tests share: a state directory in a temp dir, and runs of it.

use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;

use mesh_wire::{
    Cost, Costing, Declaration, FileSpec, Mode, Report, Resource, Spec, State, VERSION,
};

use crate::record::Paths;

/// One run at a time: a test that spawns a command (`validate`) forks while another test may
/// hold its lock file open, and the child keeps that lock until it execs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The helper's run, one at a time.
pub(crate) fn run(d: &Declaration, mode: Mode, paths: &Paths) -> Result<Report, super::Error> {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    super::run(d, mode, paths)
}

/// A temp dir with the helper's state under `state/`.
pub(crate) fn sandbox() -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        root: dir.path().join("state"),
        machine: crate::files::HOST,
        system: Box::new(crate::system::Recording::at(
            dir.path().join("state").join(Paths::SYSTEM),
            crate::files::HOST,
        )),
    };
    (dir, paths)
}

/// Our own uid and gid: no getent needed, and no root.
pub(crate) fn ids() -> (u32, u32) {
    std::fs::metadata("/proc/self")
        .map(|m| (m.uid(), m.gid()))
        .unwrap_or((0, 0))
}

/// A whole file at `path`, ours, mode 0640, declared by instance `t`.
pub(crate) fn file(path: &std::path::Path, content: &str) -> Resource {
    Resource {
        id: format!("t:file:{}", path.display()),
        instance: "t".into(),
        module: "t@1".into(),
        confirm: false,
        spec: Spec::File(FileSpec {
            path: path.display().to_string(),
            owner: ids().0.to_string(),
            group: ids().1.to_string(),
            mode: 0o640,
            content: content.into(),
            validate: vec![],
            secret: false,
            sealed: None,
            effective: None,
            costing: Costing {
                source: "s".into(),
                settings: std::collections::BTreeMap::new(),
                cost: Cost::None,
                units: vec![],
            },
        }),
    }
}

/// A directory at `path`, ours, mode 0750, declared by instance `t`.
pub(crate) fn directory(path: &std::path::Path) -> Resource {
    Resource {
        id: format!("t:directory:{}", path.display()),
        instance: "t".into(),
        module: "t@1".into(),
        confirm: false,
        spec: Spec::Directory(mesh_wire::DirectorySpec {
            path: path.display().to_string(),
            owner: ids().0.to_string(),
            group: ids().1.to_string(),
            mode: 0o750,
        }),
    }
}

pub(crate) fn decl(resources: Vec<Resource>) -> Declaration {
    Declaration {
        version: VERSION,
        node: "n".into(),
        resources,
        expects_record: false,
        confirm_within: None,
        confirm_removals: Vec::new(),
        keep: Vec::new(),
        planned: None,
    }
}

pub(crate) fn states(d: &Declaration, mode: Mode, paths: &Paths) -> Vec<State> {
    run(d, mode, paths)
        .unwrap()
        .resources
        .iter()
        .map(|o| o.state)
        .collect()
}

/// A machine of a test's own, as `mesh-host --root` has it: a temp dir standing for `/` (with
/// `/etc/systemd/system`), the helper's state under it, and the recording system, whose model
/// starts as `model` says.
pub(crate) fn machine(
    model: impl FnOnce(&mut crate::system::recording::Model),
) -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("etc/systemd/system")).unwrap();
    let system = dir.path().join("var/lib/mesh").join(Paths::SYSTEM);
    crate::system::Recording::at(system, crate::files::Root::under(dir.path().into())).set(model);
    let paths = Paths::under(dir.path());
    (dir, paths)
}

/// Every call the recording system of `paths` was asked, in order, but the look-ups
/// (`systemctl show`, `docker container inspect`, `docker ps`): what was done.
pub(crate) fn done(paths: &Paths) -> Vec<String> {
    crate::system::Recording::calls_in(&paths.root.join(Paths::SYSTEM))
        .into_iter()
        .filter(|c| {
            !["systemctl show", "docker container inspect", "docker ps"]
                .iter()
                .any(|lookup| c.starts_with(lookup))
        })
        .collect()
}

/// Forgets the calls recorded so far: the next [`done`] says what the next run did.
pub(crate) fn forget_calls(paths: &Paths) {
    let _ = std::fs::remove_file(
        paths
            .root
            .join(Paths::SYSTEM)
            .join(crate::system::Recording::LOG),
    );
}

/// The recording system's model of `paths`' machine now.
pub(crate) fn model(paths: &Paths) -> crate::system::recording::Model {
    crate::system::Recording::at(paths.root.join(Paths::SYSTEM), paths.machine.clone()).model()
}

/// A resource of instance `t` with `spec`.
pub(crate) fn resource(id: &str, spec: Spec) -> Resource {
    Resource {
        id: id.into(),
        instance: "t".into(),
        module: "t@1".into(),
        confirm: false,
        spec,
    }
}
