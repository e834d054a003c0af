//! A directory with owner and mode. One the mesh made is removed when undeclared if it is empty,
//! and kept (and said so) while it holds anything: data outlives the module that declared it.

use std::path::Path;

use mesh_wire::{DirectorySpec, Outcome, Resource, State};

use super::{Run, outcome};
use crate::files;
use crate::record::{DirectoryEntry, Entry, Record};

impl Run<'_> {
    pub(super) fn try_directory(
        &mut self,
        resource: &Resource,
        spec: &DirectorySpec,
        record: &mut Record,
    ) -> Result<Outcome, String> {
        let (path, (uid, gid)) = Self::owned_path(&spec.path, &spec.owner, &spec.group)?;
        let found = files::dir_meta(path).map_err(|e| e.to_string())?;
        let known = matches!(
            record.resources.get(&resource.id),
            Some(Entry::Directory(_))
        );
        if !known {
            let entry = DirectoryEntry {
                path: spec.path.clone(),
                created: found.is_none(),
                original: found.filter(|f| *f != (uid, gid, spec.mode)),
                parents_made: files::missing_ancestors(path),
            };
            record
                .resources
                .insert(resource.id.clone(), Entry::Directory(entry));
            if self.applying() {
                record
                    .save(self.paths)
                    .map_err(|e| format!("cannot save the record: {e}"))?;
            }
        }
        match found {
            None => {
                if self.applying() {
                    // parents it makes (the node's root, the instance's folder) are recorded,
                    // and removed again with it when empty
                    files::make_dir(path).map_err(|e| e.to_string())?;
                    set(path, uid, gid, spec.mode)?;
                }
                Ok(outcome(
                    &resource.id,
                    State::Created,
                    format!("{} {}", self.said("made", "make"), spec.path),
                ))
            }
            Some(f) if f == (uid, gid, spec.mode) => Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{} is as declared", spec.path),
            )),
            Some(_) => {
                if self.applying() {
                    set(path, uid, gid, spec.mode)?;
                }
                Ok(outcome(
                    &resource.id,
                    State::Changed,
                    format!(
                        "{} owner and mode of {}",
                        self.said("set", "set"),
                        spec.path
                    ),
                ))
            }
        }
    }

    pub(super) fn give_back_directory(&mut self, entry: &DirectoryEntry) -> Result<String, String> {
        let path = Path::new(&entry.path);
        let Some(empty) =
            files::dir_is_empty(path, &self.gone).map_err(|e| format!("{}: {e}", entry.path))?
        else {
            return Ok(format!("{} is already gone", entry.path));
        };
        if entry.created {
            if !empty {
                return Ok(format!("kept {}: it holds files", entry.path));
            }
            if self.applying() {
                files::remove_dir(path)
                    .map_err(|e| format!("{}: cannot remove it: {e}", entry.path))?;
            }
            self.gone.insert(path.to_path_buf());
            return Ok(format!(
                "{} {}: the mesh made it and it is empty",
                self.said("removed", "remove"),
                entry.path
            ));
        }
        match entry.original {
            Some((uid, gid, mode)) => {
                if self.applying() {
                    set(path, uid, gid, mode)?;
                }
                Ok(format!(
                    "{} owner and mode of {}, as the host had them",
                    self.said("gave back", "give back"),
                    entry.path
                ))
            }
            None => Ok(format!(
                "left {} as it is: it was there before the mesh",
                entry.path
            )),
        }
    }
}

impl Run<'_> {
    /// Removes the directories the mesh made in `made` (deepest first) while each is empty by
    /// then, stopping at the first that holds anything; a dry run only counts them as gone.
    pub(super) fn remove_empty_dirs(&mut self, made: &[String]) {
        for dir in made {
            let path = Path::new(dir);
            if !matches!(files::dir_is_empty(path, &self.gone), Ok(Some(true)))
                || (self.applying() && files::remove_dir(path).is_err())
            {
                break;
            }
            self.gone.insert(path.to_path_buf());
        }
    }
}

fn set(path: &Path, uid: u32, gid: u32, mode: u32) -> Result<(), String> {
    files::set_dir_owner_mode(path, uid, gid, mode).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
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
}
