//! A unit the mesh creates: its unit file under /etc/systemd/system and the bundle of files it
//! runs under /var/lib/mesh/bundles/<unit>. Enabled and started; restarted when its unit or its
//! bundle changes; stopped, disabled and removed with its bundle when undeclared.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use mesh_wire::{Cost, ProcessSpec};

use super::Failure;
use super::{access, env, on_disk};
use crate::files;
use crate::record::{Paths, ProcessEntry};
use crate::units;

mod give_back;
mod make;

/// The unit file. Every value is checked (`mesh_wire::unit`: no control character can start a
/// line of its own) and quoted for systemd (which splits ExecStart= on spaces, expands `$VAR` and
/// `%` specifiers): the declaration's words reach the process as they are. The environment is not
/// in it: a unit file is world-readable, so it names the root-only `env_file` instead.
pub(super) fn unit_file_text(spec: &ProcessSpec, env_file: Option<&Path>) -> String {
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
    if let Some(file) = env_file {
        out.push_str(&format!(
            "EnvironmentFile={}\n",
            escape(&file.display().to_string())
        ));
    }
    out.push_str(&access::unit_lines(&spec.access));
    out.push_str(&format!("Restart={}\n", spec.restart));
    out.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    out
}

/// `%` is a specifier in every unit setting.
pub(super) fn escape(text: &str) -> String {
    text.replace('%', "%%")
}

/// One word for ExecStart=: double-quoted, with `\`, `"`, `$` and `%` escaped.
pub(super) fn quote(word: &str) -> String {
    let mut out = String::from("\"");
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '$' => out.push_str("$$"),
            '%' => out.push_str("%%"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What a process writes besides its bundle: its environment file's path and text (none when
/// it has no environment) and its unit file's text.
fn unit_and_environment(paths: &Paths, spec: &ProcessSpec) -> (PathBuf, Option<String>, String) {
    let env_file = env::path(paths, &spec.unit, false);
    let env_text = (!spec.environment.is_empty()).then(|| env::systemd_text(&spec.environment));
    let unit_text = unit_file_text(spec, env_text.as_ref().map(|_| env_file.as_path()));
    (env_file, env_text, unit_text)
}

/// Every file a process spec writes (its unit file, its environment file, its bundle's files),
/// whether or not it has them now: what a revert keeps.
pub(crate) fn files_of(paths: &Paths, spec: &ProcessSpec) -> Vec<PathBuf> {
    let bundle = Path::new(&spec.bundle_dir);
    [
        Path::new(units::UNIT_DIR).join(&spec.unit),
        env::path(paths, &spec.unit, false),
    ]
    .into_iter()
    .chain(spec.bundle.iter().map(|f| bundle.join(&f.path)))
    .collect()
}

/// The environment file a process's record names: where it is, when the process has an
/// environment and the file is there.
pub(crate) fn env_file_of(paths: &Paths, spec: &ProcessSpec) -> Option<String> {
    if spec.environment.is_empty() {
        return None;
    }
    env_file_there(paths, &spec.unit)
}

/// The environment file of the process unit `unit`, if it is on the machine.
pub(crate) fn env_file_there(paths: &Paths, unit: &str) -> Option<String> {
    let env_file = env::path(paths, unit, false);
    files::HOST
        .exists(&env_file)
        .unwrap_or(false)
        .then(|| env_file.display().to_string())
}

/// The digest the record keeps for `spec`, if its unit file, environment file and bundle on the
/// machine are exactly what the spec writes (an adopted process then needs no restart).
pub(crate) fn on_disk_digest(
    paths: &Paths,
    spec: &ProcessSpec,
    unit_file: &Path,
) -> Option<String> {
    let (env_file, env_text, unit_text) = unit_and_environment(paths, spec);
    let wanted = wanted(unit_file, &unit_text, &env_file, env_text.as_deref(), spec);
    on_disk::compare(&paths.machine, &wanted, Path::new(&spec.bundle_dir))
        .ok()
        .filter(on_disk::Drift::is_empty)
        .map(|_| digest(&unit_text, env_text.as_deref(), spec))
}

/// Every file a process writes, with the owner and mode it gets: what [`write_bundle`], the
/// environment file and the unit file put on the machine.
fn wanted<'a>(
    unit_file: &Path,
    unit_text: &'a str,
    env_file: &Path,
    env_text: Option<&'a str>,
    spec: &'a ProcessSpec,
) -> Vec<on_disk::Wanted<'a>> {
    let root =
        |path: PathBuf, bytes: &'a [u8], mode: u32, name: String, shown: bool| on_disk::Wanted {
            path,
            bytes,
            uid: files::root_ids().0,
            gid: files::root_ids().1,
            mode,
            name,
            shown,
        };
    let mut all = vec![root(
        unit_file.to_path_buf(),
        unit_text.as_bytes(),
        0o644,
        "unit file".into(),
        true,
    )];
    if let Some(text) = env_text {
        all.push(root(
            env_file.to_path_buf(),
            text.as_bytes(),
            0o600,
            "environment file".into(),
            false,
        ));
    }
    for f in &spec.bundle {
        all.push(root(
            Path::new(&spec.bundle_dir).join(&f.path),
            f.content.as_bytes(),
            f.mode,
            format!("bundle file {}", f.path),
            true,
        ));
    }
    all
}

/// What a change from what `entry` was made from costs the unit: its frame moved (or is not
/// known), a restart; else the strongest cost among its bundle files that moved
/// ([`mesh_wire::BundleFile::cost`]). A change nothing here explains restarts it.
fn change_cost(entry: &ProcessEntry, frame: &str, spec: &ProcessSpec) -> Cost {
    let Some(made) = entry.made_from.as_ref().filter(|m| m.frame == frame) else {
        return Cost::Restart;
    };
    spec.bundle
        .iter()
        .filter_map(|f| {
            let was = made.bundle.get(&f.path);
            let moved = was.is_none_or(|w| w.sha256 != files::sha256(f.content.as_bytes()));
            moved.then(|| f.cost(was.map(|w| (w.source.as_str(), &w.settings))))
        })
        .max()
        .unwrap_or(Cost::Restart)
}

/// What a process is besides its bundle files' contents: its unit file, its environment and
/// the names and modes of its bundle files.
fn frame(unit_text: &str, env_text: Option<&str>, spec: &ProcessSpec) -> String {
    hashed(unit_text, env_text, spec, false)
}

/// What the unit runs from: a change of any of it restarts the unit.
fn digest(unit_text: &str, env_text: Option<&str>, spec: &ProcessSpec) -> String {
    hashed(unit_text, env_text, spec, true)
}

/// The sha256 of a process's unit file, environment and bundle files (their contents too when
/// `contents`).
fn hashed(unit_text: &str, env_text: Option<&str>, spec: &ProcessSpec, contents: bool) -> String {
    let mut all = unit_text.as_bytes().to_vec();
    if let Some(env) = env_text {
        all.extend_from_slice(b"\0environment\0");
        all.extend_from_slice(env.as_bytes());
    }
    for f in &spec.bundle {
        all.extend_from_slice(format!("\0{}\0{:o}\0", f.path, f.mode).as_bytes());
        if contents {
            all.extend_from_slice(f.content.as_bytes());
        }
    }
    files::sha256(&all)
}

/// Writes the bundle and removes any file in it the declaration no longer names.
fn write_bundle(root: &files::Root, dir: &Path, spec: &ProcessSpec) -> Result<(), Failure> {
    root.make_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut wanted = BTreeSet::new();
    for f in &spec.bundle {
        let rel = Path::new(&f.path);
        if f.path.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(format!("bundle file {:?} is not a plain relative path", f.path).into());
        }
        let at = dir.join(rel);
        if let Some(parent) = at.parent() {
            root.make_dir(parent)
                .map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        root.write_atomically(&at, f.content.as_bytes(), Some(files::root_ids()), f.mode)
            .map_err(|e| format!("{}: {e}", at.display()))?;
        wanted.insert(at);
    }
    root.prune(dir, &wanted)
        .map_err(|e| format!("{}: {e}", dir.display()))
        .map_err(Failure::from)
}
