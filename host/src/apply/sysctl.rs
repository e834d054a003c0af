//! A kernel setting: its value found recorded before anything moves, applied at once through
//! its `/proc/sys` file and kept over a reboot by a drop-in in `/etc/sysctl.d/`; undeclared, the
//! value found is written back at once and the drop-in goes (or the file found there comes
//! back). A setting the machine cannot change (read-only in a container, which shares its
//! kernel's) fails alone, saying so, and leaves nothing behind.

use std::io;
use std::path::{Path, PathBuf};

use mesh_wire::{Outcome, Resource, State, SysctlSpec};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, outcome};
use crate::confirm::Touches;
use crate::files;
use crate::record::{Entry, FileEntry, Paths, Readers, Record, SysctlEntry};

#[cfg(test)]
thread_local! {
    /// A test's stand-in for `/proc/sys`.
    static PROC_ROOT: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

/// Where the kernel's settings are read and written; a test points it at a folder of its own.
fn proc_root(root: &files::Root) -> PathBuf {
    #[cfg(test)]
    if let Some(root) = PROC_ROOT.with(|r| r.borrow().clone()) {
        return root;
    }
    root.real(Path::new("/proc/sys"))
}

/// Its drop-in; a test's goes beside its stand-in `/proc/sys`.
fn drop_in(spec: &SysctlSpec) -> String {
    #[cfg(test)]
    if let Some(root) = PROC_ROOT.with(|r| r.borrow().clone()) {
        let name = spec.drop_in().replace("/etc/sysctl.d/", "");
        return root.with_file_name(name).display().to_string();
    }
    spec.drop_in()
}

fn proc_file(root: &files::Root, name: &str) -> PathBuf {
    proc_root(root).join(name.replace('.', "/"))
}

/// Its value as the kernel prints it, words joined by one space.
pub(crate) fn read_value(root: &files::Root, name: &str) -> Result<String, Failure> {
    let at = proc_file(root, name);
    match std::fs::read_to_string(&at) {
        Ok(text) => Ok(SysctlSpec::normal(&text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(format!(
            "this machine's kernel has no setting {name} ({} is not there): check its name, \
             or the module it needs loaded",
            at.display()
        )
        .into()),
        Err(e) => Err(format!("cannot read {}: {e}", at.display()).into()),
    }
}

/// Writes `value` into the kernel's setting, at once.
pub(crate) fn write_value(root: &files::Root, name: &str, value: &str) -> Result<(), Failure> {
    let at = proc_file(root, name);
    std::fs::write(&at, format!("{value}\n")).map_err(|e| match e.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => format!(
            "{name} cannot be changed on this machine ({}: {e}): a container shares its kernel's \
             settings and most are read-only in it; set it on the host, or do not declare it here",
            at.display()
        ),
        _ => format!("cannot set {name} through {}: {e}", at.display()),
    })
.map_err(Failure::from)
}

impl Run<'_> {
    pub(super) fn try_sysctl(
        &mut self,
        resource: &Resource,
        spec: &SysctlSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let now = read_value(&self.paths.machine, &spec.name)?;
        let want = SysctlSpec::normal(&spec.value);
        let drop_in = drop_in(spec);
        let conf = format!("{} = {want}\n", spec.name);
        let path = Path::new(&drop_in);
        let found_file = self.paths.machine.read(path).map_err(|e| e.to_string())?;
        let same_file = found_file
            .as_ref()
            .is_some_and(|f| f.bytes == conf.as_bytes() && f.mode == 0o644);
        let moved = match record.resources.get(&resource.id) {
            Some(Entry::Sysctl(e)) if e.drop_in != drop_in => Some(e.clone()),
            _ => None,
        };
        if let Some(old) = moved {
            return self.move_drop_in(resource, spec, old, record);
        }
        if now == want && same_file {
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{} = {want} is as declared", spec.name),
            ));
        }
        if !self.applying() {
            return Ok(outcome(
                &resource.id,
                State::Changed,
                format!("would set {} = {want} (it is {now})", spec.name),
            ));
        }
        // can it be changed at all? writing what it holds changes nothing, and says
        write_value(&self.paths.machine, &spec.name, &now)?;
        if !matches!(record.resources.get(&resource.id), Some(Entry::Sysctl(_))) {
            let drop_in_original = match &found_file {
                Some(f) => Some(self.keep_original(&resource.id, f)?),
                None => None,
            };
            record.resources.insert(
                resource.id.clone(),
                Entry::Sysctl(SysctlEntry {
                    name: spec.name.clone(),
                    found: now.clone(),
                    drop_in: drop_in.clone(),
                    drop_in_original,
                }),
            );
            record.save(self.paths).map_err(Failure::Record)?;
        }
        // the helper runs as root: the drop-in is root's
        self.paths
            .machine
            .write_atomically(path, conf.as_bytes(), None, 0o644)
            .map_err(|e| format!("{drop_in}: {e}"))?;
        write_value(&self.paths.machine, &spec.name, &want)?;
        Ok(outcome(
            &resource.id,
            State::Changed,
            format!(
                "set {} = {want} (it was {now}), kept in {drop_in}",
                spec.name
            ),
        ))
    }

    /// A drop-in the mesh wrote under its earlier name (`90-mesh-`, read before Debian's
    /// `99-sysctl.conf`): given back, and the setting applied again under its name now, keeping
    /// the value found before the mesh first set it.
    fn move_drop_in(
        &mut self,
        resource: &Resource,
        spec: &SysctlSpec,
        old: SysctlEntry,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let drop_in = drop_in(spec);
        if !self.applying() {
            return Ok(outcome(
                &resource.id,
                State::Changed,
                format!(
                    "would move {} from {} to {drop_in} (read after the machine's own, so the \
                     value set is the one it boots with)",
                    spec.name, old.drop_in
                ),
            ));
        }
        self.give_back_file(&FileEntry {
            path: old.drop_in.clone(),
            created: old.drop_in_original.is_none(),
            original: old.drop_in_original.clone(),
            original_lost: false,
            written: None,
            readers: Readers::default(),
            parents_made: Vec::new(),
        })?;
        let found_file = self
            .paths
            .machine
            .read(Path::new(&drop_in))
            .map_err(|e| e.to_string())?;
        let drop_in_original = match &found_file {
            Some(f) => Some(self.keep_original(&resource.id, f)?),
            None => None,
        };
        record.resources.insert(
            resource.id.clone(),
            Entry::Sysctl(SysctlEntry {
                drop_in,
                drop_in_original,
                ..old
            }),
        );
        record.save(self.paths).map_err(Failure::Record)?;
        self.try_sysctl(resource, spec, record)
    }

    /// Writes the value found back at once, and removes the drop-in (or puts back the file
    /// found at its path).
    pub(super) fn give_back_sysctl(&mut self, entry: &SysctlEntry) -> Result<String, Failure> {
        if self.applying() {
            write_value(&self.paths.machine, &entry.name, &entry.found)?;
        }
        let file = self.give_back_file(&FileEntry {
            path: entry.drop_in.clone(),
            created: entry.drop_in_original.is_none(),
            original: entry.drop_in_original.clone(),
            original_lost: false,
            written: None,
            readers: Readers::default(),
            parents_made: Vec::new(),
        })?;
        Ok(format!(
            "{} {} = {} as found; {file}",
            self.said("set", "set"),
            entry.name,
            entry.found
        ))
    }
}

impl Kind for SysctlSpec {
    const PHASE: Phase = Phase::Files;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_sysctl(resource, self, record)
    }

    /// its value in the kernel, and its drop-in
    fn touches(&self, _paths: &Paths) -> Touches {
        Touches {
            files: vec![(drop_in(self), Vec::new(), mesh_wire::Cost::None)],
            settings: vec![self.name.clone()],
            ..Touches::default()
        }
    }
}

impl GiveBack for SysctlEntry {
    const KIND: &'static str = "sysctl";
    const PHASE: Phase = Phase::Files;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_sysctl(self)
    }

    /// its value in the kernel, its drop-in and the file found at the drop-in's path
    fn touches(&self) -> Touches {
        Touches {
            files: vec![(self.drop_in.clone(), Vec::new(), mesh_wire::Cost::None)],
            settings: vec![self.name.clone()],
            originals: self
                .drop_in_original
                .iter()
                .map(|o| o.blob.clone())
                .collect(),
            ..Touches::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use mesh_wire::{Mode, Resource, Spec, State, SysctlSpec};

    use super::super::testkit::{decl, run, sandbox, states};

    fn sysctl(name: &str, value: &str) -> Resource {
        Resource {
            id: format!("t:sysctl:{name}"),
            instance: "t".into(),
            module: "t@1".into(),
            confirm: false,
            spec: Spec::Sysctl(SysctlSpec {
                name: name.into(),
                value: value.into(),
            }),
        }
    }

    /// A stand-in `/proc/sys` holding `net/ipv4/ping_group_range` as the kernel prints it.
    fn kernel(dir: &std::path::Path) -> std::path::PathBuf {
        let root = dir.join("proc-sys");
        std::fs::create_dir_all(root.join("net/ipv4")).unwrap();
        std::fs::write(root.join("net/ipv4/ping_group_range"), "1\t0\n").unwrap();
        super::PROC_ROOT.with(|r| *r.borrow_mut() = Some(root.clone()));
        root
    }

    #[test]
    fn a_sysctl_is_set_at_once_left_alone_and_given_back_as_found() {
        let (dir, paths) = sandbox();
        let root = kernel(dir.path());
        let file = root.join("net/ipv4/ping_group_range");
        let one = decl(vec![sysctl("net.ipv4.ping_group_range", "0 2147483647")]);
        assert_eq!(states(&one, Mode::DryRun, &paths), vec![State::Changed]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "1\t0\n");
        assert_eq!(states(&one, Mode::Apply, &paths), vec![State::Changed]);
        let drop_in = dir.path().join("99-zz-mesh-net.ipv4.ping_group_range.conf");
        assert_eq!(
            std::fs::read_to_string(&drop_in).unwrap(),
            "net.ipv4.ping_group_range = 0 2147483647\n"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "0 2147483647\n");
        assert_eq!(states(&one, Mode::Apply, &paths), vec![State::Unchanged]);
        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "1 0\n");
        assert!(!drop_in.exists());
    }

    #[test]
    fn a_drop_in_under_its_earlier_name_is_moved_after_the_machines_own_keeping_what_was_found() {
        let (dir, paths) = sandbox();
        let root = kernel(dir.path());
        let file = root.join("net/ipv4/ping_group_range");
        let one = decl(vec![sysctl("net.ipv4.ping_group_range", "0 1000")]);
        assert_eq!(states(&one, Mode::Apply, &paths), vec![State::Changed]);
        // as a helper before the rename left it: its drop-in read before 99-sysctl.conf
        let now = dir.path().join("99-zz-mesh-net.ipv4.ping_group_range.conf");
        let before = dir.path().join("90-mesh-net.ipv4.ping_group_range.conf");
        std::fs::rename(&now, &before).unwrap();
        let record = std::fs::read_to_string(paths.record()).unwrap();
        let old = record.replace("99-zz-mesh-", "90-mesh-");
        assert_ne!(old, record);
        std::fs::write(paths.record(), old).unwrap();

        assert_eq!(states(&one, Mode::DryRun, &paths), vec![State::Changed]);
        assert_eq!(states(&one, Mode::Apply, &paths), vec![State::Changed]);
        assert!(
            !before.exists(),
            "the drop-in under its earlier name stayed"
        );
        assert_eq!(
            std::fs::read_to_string(&now).unwrap(),
            "net.ipv4.ping_group_range = 0 1000\n"
        );
        assert_eq!(states(&one, Mode::Apply, &paths), vec![State::Unchanged]);
        states(&decl(vec![]), Mode::Apply, &paths);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "1 0\n",
            "the value found"
        );
        assert!(!now.exists());
    }

    #[test]
    fn a_sysctl_the_machine_cannot_change_fails_saying_so_and_leaves_nothing() {
        let (dir, paths) = sandbox();
        let root = kernel(dir.path());
        let file = root.join("net/ipv4/ping_group_range");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        if std::fs::write(&file, "1\t0\n").is_ok() {
            // root writes whatever the mode: read-only is the lab's to show
            return;
        }
        let report = run(
            &decl(vec![sysctl("net.ipv4.ping_group_range", "0 1")]),
            Mode::Apply,
            &paths,
        )
        .unwrap();
        let o = &report.resources[0];
        assert_eq!(o.state, State::Failed, "{o:?}");
        assert!(
            o.detail.contains("cannot be changed on this machine"),
            "{o:?}"
        );
        assert!(
            !paths.record().exists()
                || !std::fs::read_to_string(paths.record())
                    .unwrap()
                    .contains("sysctl")
        );
    }

    #[test]
    fn a_sysctl_this_kernel_does_not_have_is_named() {
        let (dir, paths) = sandbox();
        kernel(dir.path());
        let report = run(
            &decl(vec![sysctl("net.ipv4.nope", "1")]),
            Mode::DryRun,
            &paths,
        )
        .unwrap();
        let o = &report.resources[0];
        assert_eq!(o.state, State::Failed, "{o:?}");
        assert!(o.detail.contains("has no setting net.ipv4.nope"), "{o:?}");
    }
}
