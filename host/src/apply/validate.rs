//! Checking written files per unit, all or nothing: the files that feed one unit are checked
//! together once all of them are in place (a daemon's check reads its whole configuration); if any
//! check refuses, every file of that unit written in this run goes back to what it was, the unit
//! is paid nothing for them, and each file's outcome says why.

use super::Failure;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mesh_wire::State;

use super::{Error, Run, effective, outcome};
use crate::child::{self, Bounded as _};
use crate::files;
use crate::record::{Entry, Record};

/// A file written in this run, with what is needed to put it back.
pub(super) struct Written {
    pub(super) id: String,
    pub(super) path: String,
    /// What was there before this run wrote it; `None`: nothing was.
    pub(super) previous: Option<files::Found>,
    /// Its record entry before this run wrote it.
    pub(super) entry: Option<Entry>,
    /// Its check command; empty: none.
    pub(super) validate: Vec<String>,
    /// How to check that the settings it gives are in force, once its check passed.
    pub(super) effective: Option<mesh_wire::Effective>,
    pub(super) secret: bool,
    /// The units that read it.
    pub(super) units: Vec<String>,
}

impl Run<'_> {
    /// Runs the checks of the files written in this run, unit by unit, and puts back every file
    /// of a unit one of whose checks refused.
    pub(super) fn check_written(&mut self, record: &mut Record) -> Result<(), Error> {
        let written = std::mem::take(&mut self.written);
        let paths = self.paths;
        for group in groups(&written) {
            let refused: Vec<(&Written, Failure)> = group
                .iter()
                .map(|&i| &written[i])
                .filter_map(|w| check(w, paths).err().map(|e| (w, e)))
                .collect();
            if refused.is_empty() {
                continue;
            }
            let refused_units: BTreeSet<&str> = refused
                .iter()
                .flat_map(|(w, _)| w.units.iter().map(String::as_str))
                .collect();
            let refused_paths: Vec<&str> = refused.iter().map(|(w, _)| w.path.as_str()).collect();
            let mut causes = BTreeSet::new();
            for w in group.iter().map(|&i| &written[i]) {
                let undone = put_back(&self.paths.machine, w);
                match &w.entry {
                    Some(entry) => {
                        record.resources.insert(w.id.clone(), entry.clone());
                    }
                    None => {
                        record.resources.remove(&w.id);
                    }
                }
                causes.insert(w.id.clone());
                let others: Vec<&str> = group
                    .iter()
                    .map(|&i| written[i].path.as_str())
                    .filter(|p| *p != w.path)
                    .collect();
                let detail = match refused.iter().find(|(r, _)| r.id == w.id) {
                    Some((_, e)) if others.is_empty() => {
                        format!("{}: {e}; the previous content is back", w.path)
                    }
                    Some((_, e)) => format!(
                        "{}: {e}; the previous content is back, and so is that of {} (read by \
                         the same unit, put back with it)",
                        w.path,
                        others.join(", ")
                    ),
                    None => {
                        let unit = w
                            .units
                            .iter()
                            .find(|u| refused_units.contains(u.as_str()))
                            .or(w.units.first())
                            .map_or("its unit", String::as_str);
                        format!(
                            "{}: put back: {unit}'s check refused {}",
                            w.path,
                            refused_paths.join(", ")
                        )
                    }
                };
                let detail = match undone {
                    Ok(()) => format!("{detail}; no unit was touched for it"),
                    Err(e) => format!("{detail}; but it could not be put back: {e}"),
                };
                if let Some(o) = self.outcomes.iter_mut().find(|o| o.id == w.id) {
                    *o = outcome(&w.id, State::Failed, detail);
                }
            }
            self.forgive(record, &causes);
            record.save(self.paths)?;
        }
        Ok(())
    }
}

/// The files written, in groups that are checked together: two files are in one group when a
/// unit reads both (directly or through others). A file no unit reads is a group of its own.
fn groups(written: &[Written]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(BTreeSet<&str>, Vec<usize>)> = Vec::new();
    for (i, w) in written.iter().enumerate() {
        let mut units: BTreeSet<&str> = w.units.iter().map(String::as_str).collect();
        let mut members = vec![i];
        // every group that shares a unit with this file joins its group
        let (joined, apart): (Vec<_>, Vec<_>) = groups
            .into_iter()
            .partition(|(theirs, _)| !theirs.is_disjoint(&units));
        for (theirs, their_members) in joined {
            units.extend(theirs);
            members.extend(their_members);
        }
        members.sort_unstable();
        groups = apart;
        groups.push((units, members));
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// A written file's `validate` command, then whether its settings are in force (a secret
/// file's settings are never compared in the clear).
fn check(w: &Written, paths: &crate::record::Paths) -> Result<(), Failure> {
    validate(&w.validate, w.secret, child::CHECK)?;
    match &w.effective {
        Some(e) if !w.secret => effective::check(&w.path, e, paths, child::CHECK),
        _ => Ok(()),
    }
}

/// Puts a written file back as it was before this run.
fn put_back(root: &crate::files::Root, w: &Written) -> Result<(), Failure> {
    let path = Path::new(&w.path);
    match &w.previous {
        Some(f) => root.write_atomically(path, &f.bytes, Some((f.uid, f.gid)), f.mode),
        None => root.remove(path),
    }
    .map_err(|e| e.to_string())
    .map_err(Failure::from)
}

/// Runs a file's check command; an empty one checks nothing. The check's own words are passed on,
/// except for a secret file: a checker may quote the line it refuses.
fn validate(argv: &[String], secret: bool, deadline: Duration) -> Result<(), Failure> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(());
    };
    let out = Command::new(program)
        .args(args)
        .output_within(deadline)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::TimedOut => format!("the check `{}` {e}", argv.join(" ")),
            _ => format!("cannot run the check `{}`: {e}", argv.join(" ")),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said.trim();
        Err(format!(
            "the check `{}` refused the new content{}",
            argv.join(" "),
            if secret {
                " (what it said is not shown: the file holds secrets)".to_string()
            } else if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            }
        )
        .into())
    }
}

#[cfg(test)]
mod tests {
    use mesh_wire::{Mode, Resource, Spec, State};

    use super::super::testkit::{decl, file, run, sandbox};
    use crate::record::Record;

    /// A file read by `units`, checked by `validate`.
    fn read_by(
        path: &std::path::Path,
        content: &str,
        units: &[&str],
        validate: &[&str],
    ) -> Resource {
        let mut r = file(path, content);
        if let Spec::File(f) = &mut r.spec {
            f.costing.units = units.iter().map(|u| u.to_string()).collect();
            f.costing.cost = mesh_wire::Cost::Restart;
            f.validate = validate.iter().map(|v| v.to_string()).collect();
        }
        r
    }

    #[test]
    fn a_check_past_its_deadline_is_killed_and_refuses() {
        let started = std::time::Instant::now();
        let argv = ["sleep".to_string(), "100000".to_string()];
        let e = super::validate(&argv, false, std::time::Duration::from_secs(1)).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(
            e.to_string(),
            "the check `sleep 100000` did not finish within its deadline of 1 s and was killed"
        );
    }

    #[test]
    fn one_refused_file_puts_back_every_file_of_its_unit_and_owes_nothing() {
        let (dir, paths) = sandbox();
        let (a, b, alone) = (
            dir.path().join("a.conf"),
            dir.path().join("b.conf"),
            dir.path().join("alone.conf"),
        );
        std::fs::write(&a, "a before\n").unwrap();
        std::fs::write(&b, "b before\n").unwrap();
        let refuse_b = format!("! grep -q bad {}", b.display());
        let d = decl(vec![
            read_by(&a, "a new\n", &["u.service"], &["true"]),
            read_by(&b, "b bad\n", &["u.service"], &["sh", "-c", &refuse_b]),
            // checked on its own: another unit's file is not put back with them
            read_by(&alone, "alone\n", &[], &["true"]),
        ]);
        let report = run(&d, Mode::Apply, &paths).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a before\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b before\n");
        assert_eq!(std::fs::read_to_string(&alone).unwrap(), "alone\n");
        assert!(report.units.is_empty(), "{:?}", report.units);
        let states: Vec<State> = report.resources.iter().map(|o| o.state).collect();
        assert_eq!(states, vec![State::Failed, State::Failed, State::Created]);
        let put_back = &report.resources[0].detail;
        assert!(
            put_back.contains(&format!(
                "put back: u.service's check refused {}",
                b.display()
            )),
            "{put_back}"
        );
        let refused = &report.resources[1].detail;
        assert!(refused.contains("refused the new content"), "{refused}");
        assert!(refused.contains(&a.display().to_string()), "{refused}");
        // nothing is owed to the unit, and the next run tries both again
        let record = Record::load(&paths).unwrap().unwrap();
        assert!(record.units.is_empty(), "{:?}", record.units);
        let again = run(&d, Mode::DryRun, &paths).unwrap();
        assert_eq!(again.resources[0].state, State::Changed);
        assert_eq!(again.resources[1].state, State::Changed);
    }
}
