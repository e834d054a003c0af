//! Reading module folders from disk: a folder of module folders, or one module's folder.
//!
//! A module's files are its own: a symbolic link whose target leaves the module's folder (a
//! template pointing at `~/.ssh/id_ed25519`, a module folder linked from elsewhere) is refused
//! naming the link, so `plan --diff` can never show, and `push` never send, a file the module
//! does not hold. Links to folders and special files are refused too (a FIFO would hang the
//! loader).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::{CatalogueError, Module, module};

/// A module folder as found: its name (the folder's), and the module or why it is broken.
pub(super) type Found = (String, Result<Module, CatalogueError>);

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CatalogueError {
    let path = path.to_path_buf();
    move |source| CatalogueError::Io { path, source }
}

fn refused(path: &Path, message: String) -> CatalogueError {
    CatalogueError::Shipped {
        path: path.to_path_buf(),
        message,
    }
}

/// Every module folder of `dir` (or `dir` itself when it is one), each loaded or with its
/// error; an error here is the folder's own (unreadable, or holding no module at all).
pub(super) fn scan(dir: &Path) -> Result<Vec<Found>, CatalogueError> {
    if dir.join("module.json").exists() {
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
        return Ok(vec![(name, load_module(dir))]);
    }
    let base = dir.canonicalize().map_err(io(dir))?;
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let mut out = Vec::new();
    for sub in entries {
        if !sub.join("module.json").exists() {
            continue;
        }
        let name = sub
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let loaded = inside(&sub, &base, "the catalogue folder").and_then(|()| load_module(&sub));
        out.push((name, loaded));
    }
    if out.is_empty() {
        return Err(CatalogueError::Empty {
            path: dir.to_path_buf(),
        });
    }
    Ok(out)
}

/// Loads a folder of module folders, or one module's folder; the first broken module fails it.
pub fn load_dir(dir: &Path) -> Result<Vec<Module>, CatalogueError> {
    scan(dir)?.into_iter().map(|(_, m)| m).collect()
}

/// Loads one module's folder: its module.json and every file beside it.
pub fn load_module(dir: &Path) -> Result<Module, CatalogueError> {
    let base = dir.canonicalize().map_err(io(dir))?;
    let mut files = BTreeMap::new();
    read_files(&base, dir, dir, &mut files)?;
    let json_path = dir.join("module.json");
    let json = files
        .remove("module.json")
        .ok_or_else(|| CatalogueError::Io {
            path: json_path.clone(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })?;
    let folder = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    module::parse(
        &json_path.display().to_string(),
        &folder,
        &json,
        &files,
        &dir.display().to_string(),
    )
}

/// Refuses `path` (a symbolic link) when its target is not under `base`, which `what` names.
fn inside(path: &Path, base: &Path, what: &str) -> Result<(), CatalogueError> {
    let is_link = fs::symlink_metadata(path)
        .map_err(io(path))?
        .file_type()
        .is_symlink();
    if !is_link {
        return Ok(());
    }
    let target = path.canonicalize().map_err(io(path))?;
    if target.starts_with(base) {
        Ok(())
    } else {
        Err(refused(
            path,
            format!(
                "a symbolic link to {}, outside {what} {}; copy it in instead",
                target.display(),
                base.display()
            ),
        ))
    }
}

/// Reads the files of `dir` (under the module folder `root`, canonically `base`) into `into`,
/// by their path relative to `root`.
fn read_files(
    base: &Path,
    root: &Path,
    dir: &Path,
    into: &mut BTreeMap<String, Vec<u8>>,
) -> Result<(), CatalogueError> {
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(io(&path))?;
        if kind.is_dir() {
            read_files(base, root, &path, into)?;
            continue;
        }
        if kind.is_symlink() {
            inside(&path, base, "the module's folder")?;
            if path.is_dir() {
                return Err(refused(
                    &path,
                    "a symbolic link to a folder; a module's folder holds its files itself".into(),
                ));
            }
        }
        if !path.is_file() {
            return Err(refused(&path, "not a regular file".into()));
        }
        if let Ok(rel) = path.strip_prefix(root) {
            into.insert(
                rel.to_string_lossy().into_owned(),
                fs::read(&path).map_err(io(&path))?,
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    const MODULE: &str = r#"{"name": "m", "version": "1", "description": "A module.",
        "resources": [{"kind": "file", "path": "/etc/m", "template": "t.txt"}]}"#;

    /// A catalogue folder with module `m`, its template made by `template`.
    fn catalogue(template: impl FnOnce(&Path)) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("cat").join("m");
        fs::create_dir_all(&m).unwrap();
        fs::write(m.join("module.json"), MODULE).unwrap();
        template(&m.join("t.txt"));
        dir
    }

    #[test]
    fn a_template_linked_inside_the_folder_is_read() {
        let dir = catalogue(|t| {
            fs::write(t.with_file_name("real.txt"), "x\n").unwrap();
            symlink("real.txt", t).unwrap();
        });
        assert!(load_dir(&dir.path().join("cat")).is_ok());
    }

    #[test]
    fn a_template_linked_out_of_the_folder_is_refused_naming_it() {
        let dir = catalogue(|t| {
            let secret = t.parent().unwrap().parent().unwrap().parent().unwrap();
            fs::write(secret.join("secret"), "the operator's key\n").unwrap();
            symlink(secret.join("secret"), t).unwrap();
        });
        let e = load_dir(&dir.path().join("cat")).unwrap_err().to_string();
        assert!(
            e.contains("m/t.txt: a symbolic link to") && e.contains("outside the module's folder"),
            "{e}"
        );
    }

    #[test]
    fn a_module_folder_linked_from_elsewhere_is_refused() {
        let dir = catalogue(|t| fs::write(t, "x\n").unwrap());
        let other = dir.path().join("other");
        fs::create_dir(&other).unwrap();
        fs::rename(dir.path().join("cat/m"), other.join("m")).unwrap();
        symlink(other.join("m"), dir.path().join("cat/m")).unwrap();
        let e = load_dir(&dir.path().join("cat")).unwrap_err().to_string();
        assert!(e.contains("outside the catalogue folder"), "{e}");
    }

    #[test]
    fn a_linked_module_json_is_refused_too() {
        let dir = catalogue(|t| fs::write(t, "x\n").unwrap());
        let m = dir.path().join("cat/m");
        fs::rename(m.join("module.json"), dir.path().join("elsewhere.json")).unwrap();
        symlink(dir.path().join("elsewhere.json"), m.join("module.json")).unwrap();
        let e = load_dir(&dir.path().join("cat")).unwrap_err().to_string();
        assert!(e.contains("module.json: a symbolic link"), "{e}");
    }
}
