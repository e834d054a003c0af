//! What a push may change that is not a file's bytes: the links it makes or moves, the kernel
//! settings it sets and the shell and groups of the accounts it changes. Each kept as it was
//! before the push, and put back by the revert.

use std::io;
use std::path::Path;

use mesh_wire::Reverted;
use serde::{Deserialize, Serialize};

use super::Was;
use crate::apply;
use crate::files::{self, At};
use crate::record::Paths;

/// What was at a link's path before the push.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct KeptLink {
    path: String,
    was: LinkWas,
}

#[derive(Debug, Serialize, Deserialize)]
enum LinkWas {
    Nothing,
    Link(String),
    /// A file the push's link replaced, kept as a blob.
    File(Was),
}

/// A kernel setting's value before the push, as the kernel printed it.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct KeptSetting {
    name: String,
    value: String,
}

/// An account's shell and supplementary groups before the push; `None`: there was no such user.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct KeptAccount {
    name: String,
    was: Option<(String, Vec<String>)>,
}

impl KeptLink {
    /// What is at `path` now; a file there is kept in a blob by `keep`.
    pub(super) fn now(
        paths: &Paths,
        path: &str,
        keep: impl FnOnce(&[u8]) -> io::Result<String>,
    ) -> io::Result<KeptLink> {
        let was = match paths.machine.what_is_at(Path::new(path))? {
            At::Nothing | At::Other(_) => LinkWas::Nothing,
            At::Link(target) => LinkWas::Link(target.display().to_string()),
            At::File => match paths.machine.read(Path::new(path))? {
                Some(found) => LinkWas::File(Was {
                    blob: keep(&found.bytes)?,
                    uid: found.uid,
                    gid: found.gid,
                    mode: found.mode,
                }),
                None => LinkWas::Nothing,
            },
        };
        Ok(KeptLink {
            path: path.to_string(),
            was,
        })
    }

    /// Puts what was at the link's path back; a directory or device there now (the push never
    /// makes one) is left alone.
    pub(super) fn put_back(&self, paths: &Paths, dir: &Path, done: &mut Reverted) {
        let path = Path::new(&self.path);
        let result = paths
            .machine
            .what_is_at(path)
            .and_then(|now| match (&self.was, now) {
                (_, At::Other(_)) | (LinkWas::Nothing, At::Nothing) => Ok(None),
                (LinkWas::Link(was), At::Link(now)) if Path::new(was) == now => Ok(None),
                (LinkWas::Nothing, _) => paths
                    .machine
                    .remove(path)
                    .map(|()| Some("removed (it was not there)".to_string())),
                (LinkWas::Link(was), _) => paths
                    .machine
                    .link(path, Path::new(was))
                    .map(|()| Some(format!("points at {was} again"))),
                (LinkWas::File(was), _) => {
                    let bytes = files::HOST.read(&dir.join(&was.blob))?.ok_or_else(|| {
                        io::Error::other(format!("its kept copy {} is gone", was.blob))
                    })?;
                    paths.machine.remove(path)?;
                    paths
                        .machine
                        .write_atomically(path, &bytes.bytes, Some((was.uid, was.gid)), was.mode)
                        .map(|()| Some("the file found there put back".to_string()))
                }
            });
        match result {
            Ok(Some(said)) => done.restored.push(format!("{}: {said}", self.path)),
            Ok(None) => {}
            Err(e) => done.failed.push(format!("{}: {e}", self.path)),
        }
    }
}

impl KeptSetting {
    /// The setting's value now; `None`: this kernel has no such setting (the push fails it).
    pub(super) fn now(paths: &Paths, name: &str) -> Option<KeptSetting> {
        apply::sysctl_value(&paths.machine, name)
            .ok()
            .map(|value| KeptSetting {
                name: name.to_string(),
                value,
            })
    }

    pub(super) fn put_back(&self, paths: &Paths, done: &mut Reverted) {
        match apply::sysctl_value(&paths.machine, &self.name) {
            Ok(now) if now == self.value => {}
            _ => match apply::set_sysctl_value(&paths.machine, &self.name, &self.value) {
                Ok(()) => done.restored.push(format!(
                    "{} = {}: as before the push",
                    self.name, self.value
                )),
                Err(e) => done.failed.push(format!("{}: {e}", self.name)),
            },
        }
    }
}

impl KeptAccount {
    pub(super) fn now(paths: &Paths, name: &str) -> io::Result<KeptAccount> {
        let was = apply::account_of(paths.system.as_ref(), name).map_err(io::Error::other)?;
        Ok(KeptAccount {
            name: name.to_string(),
            was,
        })
    }

    /// Gives the user its shell and groups back; a user the push made was taken off with the
    /// rest of what it made, and one gone since is not made again.
    pub(super) fn put_back(&self, paths: &Paths, done: &mut Reverted) {
        let Some((shell, groups)) = &self.was else {
            return;
        };
        let system = paths.system.as_ref();
        let now = match apply::account_of(system, &self.name) {
            Ok(Some(now)) => now,
            Ok(None) => return,
            Err(e) => return done.failed.push(format!("user {}: {e}", self.name)),
        };
        let mut args = Vec::new();
        if &now.0 != shell {
            args.extend(["--shell".to_string(), shell.clone()]);
        }
        if &now.1 != groups {
            args.extend(["-G".to_string(), groups.join(",")]);
        }
        if args.is_empty() {
            return;
        }
        match system.change_account("usermod", &args, &self.name) {
            Ok(()) => done.restored.push(format!(
                "user {}: shell and groups as before the push",
                self.name
            )),
            Err(e) => done.failed.push(format!("user {}: {e}", self.name)),
        }
    }
}
