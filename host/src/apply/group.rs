//! A group: made with `groupadd` when the machine does not have it, and then removed with
//! `groupdel` when undeclared; one found already there is left as found (a group has nothing
//! else the mesh sets). A gid declared and found different fails: the mesh never renumbers.

use mesh_wire::{GroupSpec, Outcome, Resource, State};

use super::Failure;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, accounts, outcome};
use crate::confirm::Touches;
use crate::owners;
use crate::record::{Entry, GroupEntry, Paths, Record};

impl Run<'_> {
    pub(super) fn try_group(
        &mut self,
        resource: &Resource,
        spec: &GroupSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let made = matches!(record.resources.get(&resource.id), Some(Entry::Group(g)) if g.made);
        if let Some(gid) = accounts::group(self.paths.system.as_ref(), &spec.name)? {
            if let Some(want) = spec.gid.filter(|want| *want != gid) {
                return Err(format!(
                    "group {} has gid {gid}, declared {want}: the mesh does not renumber a group",
                    spec.name
                )
                .into());
            }
            if self.applying() && !record.resources.contains_key(&resource.id) {
                self.record_group(resource, spec, false, record)?;
            }
            let how = if made {
                "made by the mesh"
            } else {
                "found: left as found"
            };
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("group {} (gid {gid}) {how}", spec.name),
            ));
        }
        if !self.applying() {
            owners::expect("group", &spec.name);
            return Ok(outcome(
                &resource.id,
                State::Created,
                format!("would create group {}", spec.name),
            ));
        }
        // recorded before it is made: a helper killed between the two removes what it made
        self.record_group(resource, spec, true, record)?;
        let mut args = Vec::new();
        if spec.system {
            args.push("--system".to_string());
        }
        if let Some(gid) = spec.gid {
            args.extend(["--gid".to_string(), gid.to_string()]);
        }
        accounts::change(self.paths.system.as_ref(), "groupadd", &args, &spec.name)?;
        let gid = accounts::group(self.paths.system.as_ref(), &spec.name)?
            .map_or("?".into(), |g| g.to_string());
        Ok(outcome(
            &resource.id,
            State::Created,
            format!("created group {} (gid {gid})", spec.name),
        ))
    }

    fn record_group(
        &self,
        resource: &Resource,
        spec: &GroupSpec,
        made: bool,
        record: &mut Record,
    ) -> Result<(), Failure> {
        record.resources.insert(
            resource.id.clone(),
            Entry::Group(GroupEntry {
                name: spec.name.clone(),
                made,
            }),
        );
        record.save(self.paths).map_err(Failure::Record)
    }

    /// Removes a group the mesh made (`groupdel`); one it found is left.
    pub(super) fn give_back_group(&mut self, entry: &GroupEntry) -> Result<String, Failure> {
        if !entry.made {
            return Ok(format!(
                "left group {} as found: the mesh did not make it",
                entry.name
            ));
        }
        if accounts::group(self.paths.system.as_ref(), &entry.name)?.is_none() {
            return Ok(format!("group {} was gone already", entry.name));
        }
        if self.applying() {
            accounts::change(self.paths.system.as_ref(), "groupdel", &[], &entry.name)?;
        }
        Ok(format!(
            "{} group {}: the mesh made it",
            self.said("removed", "remove"),
            entry.name
        ))
    }
}

impl Kind for GroupSpec {
    const PHASE: Phase = Phase::Groups;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_group(resource, self, record)
    }

    /// nothing a revert puts back byte for byte: a group the push made is taken off as
    /// undeclaring it would, and one found is never changed
    fn touches(&self, _paths: &Paths) -> Touches {
        Touches::default()
    }
}

/// Whether the record says the mesh made a group called `name` (a group resource of the run).
pub(super) fn group_made(record: &Record, name: &str) -> bool {
    record
        .resources
        .values()
        .any(|e| matches!(e, Entry::Group(g) if g.name == name && g.made))
}

impl GiveBack for GroupEntry {
    const KIND: &'static str = "group";
    const PHASE: Phase = Phase::Groups;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_group(self)
    }

    /// nothing: a group is only made or removed, never changed
    fn touches(&self) -> Touches {
        Touches::default()
    }
}
