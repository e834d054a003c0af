//! A symbolic link the mesh makes: what was at its path recorded before it is made (nothing,
//! another link, or a file kept as a file resource's original is), and given back when
//! undeclared. A directory or a device in its place is refused, never replaced.

use std::path::Path;

use mesh_wire::{Outcome, Resource, State, SymlinkSpec};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, outcome};
use crate::confirm::Touches;
use crate::files::At;
use crate::record::{Entry, FileEntry, FoundAtLink, Paths, Readers, Record, SymlinkEntry};

impl Run<'_> {
    pub(super) fn try_symlink(
        &mut self,
        resource: &Resource,
        spec: &SymlinkSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let path = Path::new(&spec.path);
        let at = self
            .paths
            .machine
            .what_is_at(path)
            .map_err(|e| e.to_string())?;
        if at == At::Link(spec.target.clone().into()) {
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{} -> {} is as declared", spec.path, spec.target),
            ));
        }
        if let At::Other(what) = at {
            return Err(format!(
                "{what} is there; the mesh replaces only a file or a link with a link: \
                 move it away, or declare the link elsewhere"
            )
            .into());
        }
        // the first time, what is there is recorded (and a file kept) before it is replaced
        if !matches!(record.resources.get(&resource.id), Some(Entry::Symlink(_))) {
            let found = match &at {
                At::Link(old) => FoundAtLink::Link(old.display().to_string()),
                At::File if self.applying() => {
                    let found = self
                        .paths
                        .machine
                        .read(path)
                        .map_err(|e| e.to_string())?
                        .ok_or_else(|| "the file went while it was read".to_string())?;
                    FoundAtLink::File(self.keep_original(&resource.id, &found)?)
                }
                _ => FoundAtLink::Nothing,
            };
            let entry = SymlinkEntry {
                path: spec.path.clone(),
                found,
                parents_made: self.paths.machine.missing_ancestors(path),
            };
            if self.applying() {
                record
                    .resources
                    .insert(resource.id.clone(), Entry::Symlink(entry));
                record.save(self.paths).map_err(Failure::Record)?;
            }
        }
        if self.applying() {
            self.paths
                .machine
                .link(path, Path::new(&spec.target))
                .map_err(|e| e.to_string())?;
        }
        let (state, replaced) = match at {
            At::Nothing => (State::Created, String::new()),
            At::Link(old) => (
                State::Changed,
                format!(" (it pointed at {})", old.display()),
            ),
            _ => (State::Changed, " (the file there is kept)".to_string()),
        };
        Ok(outcome(
            &resource.id,
            state,
            format!(
                "{} {} -> {}{replaced}",
                self.said("linked", "link"),
                spec.path,
                spec.target
            ),
        ))
    }

    /// Puts back what was at the link's path: nothing, the link found, or the file kept.
    pub(super) fn give_back_symlink(&mut self, link: &SymlinkEntry) -> Result<String, Failure> {
        let path = Path::new(&link.path);
        match self
            .paths
            .machine
            .what_is_at(path)
            .map_err(|e| e.to_string())?
        {
            At::Link(_) | At::Nothing => {}
            other => {
                return Err(format!(
                    "{}: left as it is: it is no longer the mesh's link ({other:?})",
                    link.path
                )
                .into());
            }
        }
        match &link.found {
            FoundAtLink::Link(target) => {
                if self.applying() {
                    self.paths
                        .machine
                        .link(path, Path::new(target))
                        .map_err(|e| e.to_string())?;
                }
                Ok(format!(
                    "{} {} -> {} as found",
                    self.said("relinked", "relink"),
                    link.path,
                    target
                ))
            }
            // a file, or nothing: given back as a file resource's is
            FoundAtLink::File(original) => self.give_back_file(&FileEntry {
                path: link.path.clone(),
                created: false,
                original: Some(original.clone()),
                original_lost: false,
                written: None,
                readers: Readers::default(),
                parents_made: Vec::new(),
            }),
            FoundAtLink::Nothing => self.give_back_file(&FileEntry {
                path: link.path.clone(),
                created: true,
                original: None,
                original_lost: false,
                written: None,
                readers: Readers::default(),
                parents_made: link.parents_made.clone(),
            }),
        }
    }
}

impl Kind for SymlinkSpec {
    const PHASE: Phase = Phase::Files;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_symlink(resource, self, record)
    }

    /// what is at its path, and the directories linking it would make
    fn touches(&self, paths: &Paths) -> Touches {
        Touches {
            links: vec![self.path.clone()],
            dirs: paths.machine.missing_ancestors(Path::new(&self.path)),
            ..Touches::default()
        }
    }
}

impl GiveBack for SymlinkEntry {
    const KIND: &'static str = "symlink";
    const PHASE: Phase = Phase::Files;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_symlink(self)
    }

    /// what is at its path, the folders made for it and the file it replaced
    fn touches(&self) -> Touches {
        Touches {
            links: vec![self.path.clone()],
            dirs: self.parents_made.clone(),
            originals: match &self.found {
                FoundAtLink::File(original) => vec![original.blob.clone()],
                _ => Vec::new(),
            },
            ..Touches::default()
        }
    }

    fn parents_made(&mut self) -> Option<(&str, &mut Vec<String>)> {
        matches!(self.found, FoundAtLink::Nothing)
            .then_some((self.path.as_str(), &mut self.parents_made))
    }
}

#[cfg(test)]
mod tests {
    use mesh_wire::{Mode, Resource, Spec, State, SymlinkSpec};

    use super::super::testkit::{decl, sandbox, states};

    fn link(path: &std::path::Path, target: &str) -> Resource {
        Resource {
            id: format!("t:symlink:{}", path.display()),
            instance: "t".into(),
            module: "t@1".into(),
            confirm: false,
            spec: Spec::Symlink(SymlinkSpec {
                path: path.display().to_string(),
                target: target.into(),
            }),
        }
    }

    fn points_at(path: &std::path::Path) -> String {
        std::fs::read_link(path).unwrap().display().to_string()
    }

    #[test]
    fn a_link_is_made_left_alone_moved_and_removed_when_undeclared() {
        let (dir, paths) = sandbox();
        let at = dir.path().join("sub/current");
        let one = |t: &str| decl(vec![link(&at, t)]);
        assert_eq!(
            states(&one("/srv/a"), Mode::DryRun, &paths),
            vec![State::Created]
        );
        assert!(std::fs::symlink_metadata(&at).is_err(), "a dry run linked");
        assert_eq!(
            states(&one("/srv/a"), Mode::Apply, &paths),
            vec![State::Created]
        );
        assert_eq!(points_at(&at), "/srv/a");
        assert_eq!(
            states(&one("/srv/a"), Mode::Apply, &paths),
            vec![State::Unchanged]
        );
        assert_eq!(
            states(&one("/srv/b"), Mode::Apply, &paths),
            vec![State::Changed]
        );
        assert_eq!(points_at(&at), "/srv/b");
        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert!(std::fs::symlink_metadata(&at).is_err(), "the link stayed");
        assert!(!dir.path().join("sub").exists(), "the parent made stayed");
    }

    #[test]
    fn a_link_found_in_its_place_is_given_back_pointing_where_it_did() {
        let (dir, paths) = sandbox();
        let at = dir.path().join("current");
        std::os::unix::fs::symlink("/srv/theirs", &at).unwrap();
        let report =
            super::super::testkit::run(&decl(vec![link(&at, "/srv/ours")]), Mode::Apply, &paths)
                .unwrap();
        assert!(
            report.resources[0]
                .detail
                .contains("it pointed at /srv/theirs"),
            "{:?}",
            report.resources[0]
        );
        assert_eq!(points_at(&at), "/srv/ours");
        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert_eq!(points_at(&at), "/srv/theirs");
    }

    #[test]
    fn a_file_found_in_its_place_is_kept_and_restored() {
        let (dir, paths) = sandbox();
        let at = dir.path().join("conf");
        std::fs::write(&at, "the operator's own\n").unwrap();
        assert_eq!(
            states(&decl(vec![link(&at, "/srv/ours")]), Mode::Apply, &paths),
            vec![State::Changed]
        );
        assert_eq!(points_at(&at), "/srv/ours");
        assert_eq!(
            states(&decl(vec![]), Mode::Apply, &paths),
            vec![State::Removed]
        );
        assert!(!std::fs::symlink_metadata(&at).unwrap().is_symlink());
        assert_eq!(
            std::fs::read_to_string(&at).unwrap(),
            "the operator's own\n"
        );
    }

    #[test]
    fn a_directory_in_its_place_is_refused_and_left() {
        let (dir, paths) = sandbox();
        let at = dir.path().join("data");
        std::fs::create_dir(&at).unwrap();
        let report =
            super::super::testkit::run(&decl(vec![link(&at, "/srv/ours")]), Mode::Apply, &paths)
                .unwrap();
        let o = &report.resources[0];
        assert_eq!(o.state, State::Failed, "{o:?}");
        assert!(o.detail.contains("a directory is there"), "{o:?}");
        assert!(at.is_dir());
    }
}
