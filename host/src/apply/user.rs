//! A user: made with `useradd` when the machine does not have it, its shell and supplementary
//! groups set with `usermod`, its `authorized_keys` written (`user_keys`). Undeclared, a user the
//! mesh made is removed with `userdel` (its home kept unless the module says `remove-home`); one
//! it found is left, and what the mesh changed on it (shell, groups, keys) is given back as found.
//!
//! Refused, before anything is looked at: root (by name, or uid 0), and a system account
//! (uid below 1000) the mesh did not make: daemons run as those, and the mesh taking one over
//! would change what the system's own packages rely on.

use mesh_wire::{FIRST_LOGIN_ID, Outcome, Resource, State, UserSpec};

mod home;

use super::Failure;
use super::accounts::{self, Passwd};
use super::group::group_made;
use super::kind::{GiveBack, Kind, Phase};
use super::{Run, outcome};
use crate::confirm::Touches;
use crate::owners;
use crate::record::{Entry, Paths, Record, UserEntry};

/// What the mesh would change on a user found: (what, from, to).
type Changes = Vec<(&'static str, String, String)>;

impl Run<'_> {
    pub(super) fn try_user(
        &mut self,
        resource: &Resource,
        spec: &UserSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let entry = match record.resources.get(&resource.id) {
            Some(Entry::User(u)) => Some(u.clone()),
            _ => None,
        };
        let found = accounts::passwd(self.paths.system.as_ref(), &spec.name)?;
        let made = entry
            .as_ref()
            .zip(found.as_ref())
            .is_some_and(|(e, p)| e.made_as(p.uid));
        if let Some(p) = &found {
            refuse_found(spec, p, made)?;
        }
        let Some(p) = found else {
            return self.create_user(resource, spec, record);
        };
        let mut entry = entry
            .filter(|e| made || !e.made)
            .unwrap_or_else(|| UserEntry {
                name: spec.name.clone(),
                made: false,
                remove_home: spec.remove_home,
                found_shell: None,
                found_groups: None,
                keys: None,
                uid: None,
            });
        entry.remove_home = spec.remove_home;
        if spec.authorized_keys.is_some() {
            super::user_keys::keys_place(&self.paths.machine, spec, &p)?;
        }
        let now_groups = self.paths.system.supplementary(&spec.name)?;
        let changes = changes(spec, &p, &now_groups);
        let mut said: Vec<String> = changes
            .iter()
            .map(|(what, from, to)| format!("{what} {from} -> {to}"))
            .collect();
        if self.applying() {
            self.change_user(
                resource,
                spec,
                record,
                &mut entry,
                (&p, &now_groups, &changes),
            )?;
        }
        if let Some(keys) = self.user_keys(resource, spec, &p, &mut entry, record)? {
            said.push(keys);
        }
        if said.is_empty() {
            let how = if made { "" } else { " (found)" };
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("user {}{how} is as declared", spec.name),
            ));
        }
        Ok(outcome(
            &resource.id,
            State::Changed,
            format!(
                "{} user {}: {}",
                self.said("changed", "change"),
                spec.name,
                said.join("; ")
            ),
        ))
    }

    /// Changes a user found (`p`, in `now_groups`) by `changes`, what it had recorded the
    /// first time; or records it as found, with a new `remove-home` kept for the undeclare.
    fn change_user(
        &mut self,
        resource: &Resource,
        spec: &UserSpec,
        record: &mut Record,
        entry: &mut UserEntry,
        (p, now_groups, changes): (&Passwd, &Vec<String>, &Changes),
    ) -> Result<(), Failure> {
        if !changes.is_empty() {
            // what it had is recorded the first time the mesh changes it, before it does
            if !entry.made {
                entry.found_shell.get_or_insert_with(|| p.shell.clone());
                entry.found_groups.get_or_insert_with(|| now_groups.clone());
            }
            self.save_user(resource, entry, record)?;
            accounts::change(
                self.paths.system.as_ref(),
                "usermod",
                &usermod_args(spec, changes),
                &spec.name,
            )?;
        } else if !matches!(record.resources.get(&resource.id),
                Some(Entry::User(u)) if u.remove_home == entry.remove_home)
        {
            // a user found is recorded as found; a new `remove-home` is kept for the undeclare
            self.save_user(resource, entry, record)?;
        }
        Ok(())
    }

    fn create_user(
        &mut self,
        resource: &Resource,
        spec: &UserSpec,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        let home = if spec.system && spec.home.is_none() {
            "no home".to_string()
        } else {
            format!("home {}", spec.home_or_default())
        };
        if !self.applying() {
            // what reads it later in this dry run (a process's user, a file's owner) finds it
            owners::expect("passwd", &spec.name);
            owners::expect("group", &spec.name);
            return Ok(outcome(
                &resource.id,
                State::Created,
                format!("would create user {} ({home})", spec.name),
            ));
        }
        let own_group = accounts::group(self.paths.system.as_ref(), &spec.name)?.is_some();
        if own_group && !group_made(record, &spec.name) {
            return Err(format!(
                "a group {} is on the machine that the mesh did not make: useradd would make it \
                 the new user's own group (and userdel would remove it with the user); name the \
                 user otherwise, or declare the group with the mesh",
                spec.name
            )
            .into());
        }
        let left = home::left(&self.paths.machine, self.paths.system.as_ref(), spec)?;
        let mut entry = UserEntry {
            name: spec.name.clone(),
            made: true,
            remove_home: spec.remove_home,
            found_shell: None,
            found_groups: None,
            keys: None,
            uid: None,
        };
        // recorded before it is made, with no uid yet: a helper killed between the two leaves a
        // note that proves nothing, and an account made later by anyone else stays theirs
        self.save_user(resource, &entry, record)?;
        if let Err(e) = accounts::change(
            self.paths.system.as_ref(),
            "useradd",
            &useradd_args(spec, own_group),
            &spec.name,
        ) {
            record.resources.remove(&resource.id);
            let _ = record.save(self.paths);
            return Err(e);
        }
        let p = accounts::passwd(self.paths.system.as_ref(), &spec.name)?
            .ok_or_else(|| format!("useradd made {} but getent does not find it", spec.name))?;
        entry.uid = Some(p.uid);
        self.save_user(resource, &entry, record)?;
        let mut said = format!("created user {} (uid {}, {home})", spec.name, p.uid);
        if let Some(left) = left {
            said = format!(
                "{said}; {}",
                home::take(&self.paths.machine, spec, left, &p)?
            );
        }
        if let Some(keys) = self.user_keys(resource, spec, &p, &mut entry, record)? {
            said = format!("{said}; {keys}");
        }
        Ok(outcome(&resource.id, State::Created, said))
    }

    pub(super) fn save_user(
        &self,
        resource: &Resource,
        entry: &UserEntry,
        record: &mut Record,
    ) -> Result<(), Failure> {
        record
            .resources
            .insert(resource.id.clone(), Entry::User(entry.clone()));
        record.save(self.paths).map_err(Failure::Record)
    }

    /// Removes a user the mesh made (`userdel`, `--remove` if declared so), or gives a user it
    /// found its shell and groups back; then its keys as found.
    pub(super) fn give_back_user(&mut self, entry: &UserEntry) -> Result<String, Failure> {
        // the account first: a failure there (a session still open) leaves the keys and their
        // kept original for the next push to give back
        let mut said = vec![self.give_back_account(entry)?];
        if let Some(keys) = &entry.keys {
            said.push(self.give_back_user_keys(keys)?);
        }
        Ok(said.join("; "))
    }

    fn give_back_account(&mut self, entry: &UserEntry) -> Result<String, Failure> {
        let found = accounts::passwd(self.paths.system.as_ref(), &entry.name)?;
        if entry.made {
            let Some(p) = found else {
                return Ok(format!("user {} was gone already", entry.name));
            };
            if !entry.made_as(p.uid) {
                return Ok(format!(
                    "left user {} (uid {}) as found: it is not the account the mesh made",
                    entry.name, p.uid
                ));
            }
            let mut args = Vec::new();
            if entry.remove_home {
                args.push("--remove".to_string());
            }
            if self.applying() {
                accounts::stop_user_manager(self.paths.system.as_ref(), p.uid);
                accounts::change(self.paths.system.as_ref(), "userdel", &args, &entry.name)?;
            }
            let home = if entry.remove_home {
                "with its home"
            } else {
                "its home kept"
            };
            return Ok(format!(
                "{} user {} ({home}): the mesh made it",
                self.said("removed", "remove"),
                entry.name
            ));
        }
        let mut args = Vec::new();
        if let Some(shell) = &entry.found_shell {
            args.extend(["--shell".to_string(), shell.clone()]);
        }
        if let Some(groups) = &entry.found_groups {
            args.extend(["--groups".to_string(), groups.join(",")]);
        }
        if args.is_empty() || found.is_none() {
            return Ok(format!(
                "left user {} as found: the mesh did not make it",
                entry.name
            ));
        }
        if self.applying() {
            accounts::change(self.paths.system.as_ref(), "usermod", &args, &entry.name)?;
        }
        Ok(format!(
            "{} user {} its shell and groups as found",
            self.said("gave", "give"),
            entry.name
        ))
    }
}

/// Refuses a user found that the mesh may not manage: root, a system account it did not make,
/// or one whose uid differs from the declared one.
fn refuse_found(spec: &UserSpec, p: &Passwd, made: bool) -> Result<(), Failure> {
    if p.uid == 0 {
        return Err(format!("user {} has uid 0: the mesh never manages root", spec.name).into());
    }
    if p.uid < FIRST_LOGIN_ID && !made {
        return Err(format!(
            "user {} is a system account (uid {}) the mesh did not make: it is left as it is, \
             since the machine's own software runs as it; declare an account of its own",
            spec.name, p.uid
        )
        .into());
    }
    if let Some(want) = spec.uid.filter(|want| *want != p.uid) {
        return Err(format!(
            "user {} has uid {}, declared {want}: the mesh does not renumber a user",
            spec.name, p.uid
        )
        .into());
    }
    Ok(())
}

/// What differs between `spec` and the user as found.
fn changes(spec: &UserSpec, p: &Passwd, groups: &[String]) -> Changes {
    let mut out = Changes::new();
    if let Some(shell) = spec.shell.as_ref().filter(|s| **s != p.shell) {
        out.push(("shell", p.shell.clone(), shell.clone()));
    }
    if let Some(want) = &spec.groups {
        let mut want = want.clone();
        want.sort();
        want.dedup();
        if want != groups {
            out.push((
                "groups",
                format!("[{}]", groups.join(",")),
                format!("[{}]", want.join(",")),
            ));
        }
    }
    out
}

fn usermod_args(spec: &UserSpec, changes: &Changes) -> Vec<String> {
    let mut args = Vec::new();
    for (what, _, _) in changes {
        match *what {
            "shell" => args.extend([
                "--shell".to_string(),
                spec.shell.clone().unwrap_or_default(),
            ]),
            _ => args.extend([
                "--groups".to_string(),
                spec.groups.clone().unwrap_or_default().join(","),
            ]),
        }
    }
    args
}

/// `useradd`'s arguments: a login account gets its home made; a system one only when it
/// declares one. Its own group is made with it, or is the group of its name already there.
fn useradd_args(spec: &UserSpec, own_group: bool) -> Vec<String> {
    let mut args = Vec::new();
    if spec.system {
        args.push("--system".to_string());
    }
    if let Some(uid) = spec.uid {
        args.extend(["--uid".to_string(), uid.to_string()]);
    }
    if own_group {
        args.extend(["--gid".to_string(), spec.name.clone()]);
    } else {
        args.push("--user-group".to_string());
    }
    if !spec.system || spec.home.is_some() {
        args.extend([
            "--home-dir".to_string(),
            spec.home_or_default(),
            "--create-home".to_string(),
        ]);
    } else {
        args.push("--no-create-home".to_string());
    }
    if let Some(shell) = &spec.shell {
        args.extend(["--shell".to_string(), shell.clone()]);
    }
    if let Some(groups) = spec.groups.as_ref().filter(|g| !g.is_empty()) {
        args.extend(["--groups".to_string(), groups.join(",")]);
    }
    args
}

impl Kind for UserSpec {
    const PHASE: Phase = Phase::Users;

    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure> {
        run.try_user(resource, self, record)
    }

    /// its shell and groups, and the `authorized_keys` the mesh may write in its home (a user
    /// the push makes is taken off whole by a revert, as undeclaring it would)
    fn touches(&self, paths: &Paths) -> Touches {
        let home = match accounts::passwd(paths.system.as_ref(), &self.name) {
            Ok(Some(found)) if self.authorized_keys.is_some() => Some(found.home),
            _ => None,
        };
        let mut touches = Touches {
            accounts: vec![self.name.clone()],
            ..Touches::default()
        };
        if let Some(home) = home {
            let keys = std::path::Path::new(&home).join(".ssh/authorized_keys");
            touches.files.push((
                keys.display().to_string(),
                Vec::new(),
                mesh_wire::Cost::None,
            ));
            touches.dirs = paths.machine.missing_ancestors(&keys);
        }
        touches
    }
}

impl GiveBack for UserEntry {
    const KIND: &'static str = "user";
    const PHASE: Phase = Phase::Users;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_user(self)
    }

    /// its shell and groups, and the `authorized_keys` the mesh wrote (with what was there)
    fn touches(&self) -> Touches {
        let mut touches = Touches {
            accounts: vec![self.name.clone()],
            ..Touches::default()
        };
        if let Some(keys) = &self.keys {
            touches
                .files
                .push((keys.path.clone(), Vec::new(), mesh_wire::Cost::None));
            touches.dirs.extend(keys.made_dir.iter().cloned());
            touches
                .originals
                .extend(keys.original.iter().map(|o| o.blob.clone()));
        }
        touches
    }
}

#[cfg(test)]
mod tests;
