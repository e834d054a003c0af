//! A unit the mesh creates: its unit file under /etc/systemd/system and the bundle of files it
//! runs under /var/lib/mesh/bundles/<unit>. Enabled and started; restarted when its unit or its
//! bundle changes; stopped, disabled and removed with its bundle when undeclared.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use mesh_wire::{Outcome, ProcessSpec, Resource, STATE_DIR, State};

use super::{Run, outcome};
use crate::files;
use crate::record::{Entry, ProcessEntry, Record};
use crate::units;

impl Run<'_> {
    pub(super) fn try_process(
        &mut self,
        resource: &Resource,
        spec: &ProcessSpec,
        record: &mut Record,
    ) -> Result<Outcome, String> {
        if !spec.unit.ends_with(".service") || spec.unit.contains('/') {
            return Err("a process's unit is a .service name".into());
        }
        let bundle_root = Path::new(STATE_DIR).join("bundles");
        let bundle_dir = PathBuf::from(&spec.bundle_dir);
        if bundle_dir.parent() != Some(bundle_root.as_path()) {
            return Err(format!(
                "its bundle must be a directory of {}",
                bundle_root.display()
            ));
        }
        let unit_file = Path::new("/etc/systemd/system").join(&spec.unit);
        let unit_text = unit_file_text(spec);
        let digest = digest(&unit_text, spec);

        let mut entry = match record.resources.get(&resource.id) {
            Some(Entry::Process(e)) => e.clone(),
            _ => {
                if unit_file.exists() {
                    return Err(format!(
                        "{} exists and the mesh did not make it; it is left alone",
                        unit_file.display()
                    ));
                }
                ProcessEntry {
                    unit: spec.unit.clone(),
                    unit_file: unit_file.display().to_string(),
                    bundle_dir: spec.bundle_dir.clone(),
                    digest: None,
                }
            }
        };
        let changed = entry.digest.as_deref() != Some(digest.as_str());
        let now = units::state(&spec.unit).ok();
        let running = now.as_ref().and_then(|s| s.running) == Some(true);
        let enabled = now.as_ref().and_then(|s| s.enabled) == Some(true);
        if !changed && running && enabled {
            return Ok(outcome(
                &resource.id,
                State::Unchanged,
                format!("{} runs as declared", spec.unit),
            ));
        }
        let first = entry.digest.is_none();
        if self.applying() {
            // the record names the unit before it exists, so an interrupted run is undone too
            record
                .resources
                .insert(resource.id.clone(), Entry::Process(entry.clone()));
            record
                .save(self.paths)
                .map_err(|e| format!("cannot save the record: {e}"))?;
            if changed {
                write_bundle(&bundle_dir, spec)?;
                files::write_atomically(&unit_file, unit_text.as_bytes(), Some((0, 0)), 0o644)
                    .map_err(|e| format!("{}: {e}", unit_file.display()))?;
                units::daemon_reload()?;
            }
            if !enabled {
                units::systemctl("enable", &spec.unit)?;
            }
            if running && changed {
                units::systemctl("restart", &spec.unit)?;
            } else if !running {
                let _ = units::systemctl("reset-failed", &spec.unit);
                units::systemctl("start", &spec.unit)?;
            }
            entry.digest = Some(digest);
            record
                .resources
                .insert(resource.id.clone(), Entry::Process(entry));
        }
        let what = if first {
            self.said("created, enabled and started", "create, enable and start")
        } else {
            let mut did = Vec::new();
            if changed {
                did.push(self.said("rewrote", "rewrite"));
            }
            if !enabled {
                did.push(self.said("enabled", "enable"));
            }
            match (running, changed) {
                (true, true) => did.push(self.said("restarted", "restart")),
                (false, _) => did.push(self.said("started", "start")),
                (true, false) => {}
            }
            did.join(" and ")
        };
        Ok(outcome(
            &resource.id,
            if first {
                State::Created
            } else {
                State::Changed
            },
            format!("{what} {}", spec.unit),
        ))
    }

    pub(super) fn give_back_process(&mut self, entry: &ProcessEntry) -> Result<String, String> {
        if self.applying() {
            // a unit already stopped or gone is fine: what matters is that nothing is left
            let _ = units::systemctl("stop", &entry.unit);
            let _ = units::systemctl("disable", &entry.unit);
            files::remove(Path::new(&entry.unit_file))
                .map_err(|e| format!("{}: cannot remove it: {e}", entry.unit_file))?;
            match fs::remove_dir_all(&entry.bundle_dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: cannot remove it: {e}", entry.bundle_dir)),
            }
            units::daemon_reload()?;
            let _ = units::systemctl("reset-failed", &entry.unit);
        }
        Ok(format!(
            "{} {}, removed its unit file and its bundle {}",
            self.said("stopped and disabled", "stop and disable"),
            entry.unit,
            entry.bundle_dir
        ))
    }
}

/// The unit file. Every value is quoted for systemd (which splits ExecStart= on spaces, expands
/// `$VAR` and `%` specifiers): the declaration's words reach the process as they are.
fn unit_file_text(spec: &ProcessSpec) -> String {
    let mut out = String::new();
    out.push_str(crate::signs::MARK);
    out.push_str(": it is removed when the process is no longer declared.\n");
    out.push_str("[Unit]\n");
    out.push_str(&format!("Description={}\n", escape(&spec.description)));
    out.push_str("\n[Service]\n");
    let argv: Vec<String> = spec.command.iter().map(|a| quote(a)).collect();
    out.push_str(&format!("ExecStart={}\n", argv.join(" ")));
    out.push_str(&format!("User={}\n", escape(&spec.user)));
    let dir = spec
        .working_directory
        .clone()
        .unwrap_or_else(|| spec.bundle_dir.clone());
    out.push_str(&format!("WorkingDirectory={}\n", escape(&dir)));
    for (k, v) in &spec.environment {
        out.push_str(&format!("Environment={}\n", quote(&format!("{k}={v}"))));
    }
    out.push_str(&format!("Restart={}\n", spec.restart));
    out.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    out
}

/// `%` is a specifier in every unit setting.
fn escape(text: &str) -> String {
    text.replace('%', "%%")
}

/// One word for ExecStart= or Environment=: double-quoted, with `\`, `"`, `$` and `%` escaped.
fn quote(word: &str) -> String {
    let mut out = String::from("\"");
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '$' => out.push_str("$$"),
            '%' => out.push_str("%%"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The digest the record keeps for `spec`, if its unit file and bundle on the machine are exactly
/// what the spec writes (an adopted process then needs no restart).
pub(crate) fn on_disk_digest(spec: &ProcessSpec, unit_file: &Path) -> Option<String> {
    let text = unit_file_text(spec);
    let same_unit = fs::read(unit_file).ok()? == text.as_bytes();
    let same_bundle = spec.bundle.iter().all(|f| {
        fs::read(Path::new(&spec.bundle_dir).join(&f.path)).is_ok_and(|b| b == f.content.as_bytes())
    });
    (same_unit && same_bundle).then(|| digest(&text, spec))
}

fn digest(unit_text: &str, spec: &ProcessSpec) -> String {
    let mut all = unit_text.as_bytes().to_vec();
    for f in &spec.bundle {
        all.extend_from_slice(format!("\0{}\0{:o}\0", f.path, f.mode).as_bytes());
        all.extend_from_slice(f.content.as_bytes());
    }
    files::sha256(&all)
}

/// Writes the bundle and removes any file in it the declaration no longer names.
fn write_bundle(dir: &Path, spec: &ProcessSpec) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut wanted = BTreeSet::new();
    for f in &spec.bundle {
        let rel = Path::new(&f.path);
        if f.path.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(format!(
                "bundle file {:?} is not a plain relative path",
                f.path
            ));
        }
        let at = dir.join(rel);
        if let Some(parent) = at.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        files::write_atomically(&at, f.content.as_bytes(), Some((0, 0)), f.mode)
            .map_err(|e| format!("{}: {e}", at.display()))?;
        wanted.insert(at);
    }
    remove_unwanted(dir, &wanted).map_err(|e| format!("{}: {e}", dir.display()))
}

fn remove_unwanted(dir: &Path, wanted: &BTreeSet<PathBuf>) -> io::Result<()> {
    for item in fs::read_dir(dir)? {
        let path = item?.path();
        if path.is_dir() {
            remove_unwanted(&path, wanted)?;
            if fs::read_dir(&path)?.next().is_none() {
                fs::remove_dir(&path)?;
            }
        } else if !wanted.contains(&path) {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn words_reach_the_process_as_they_are() {
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote("$HOME 100%"), "\"$$HOME 100%%\"");
        assert_eq!(quote("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
    }
}
