//! The catalogue: every module definition mesh knows. The repo's `catalogue/` is built in
//! (embedded at build time); folders given with `--catalogue` add modules, and a module there
//! overrides a built-in one of the same name.

mod module;
pub mod requirement;
mod resources;
mod rules;
pub mod setting;
pub mod template;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub use module::Module;
pub(crate) use module::digest;
pub use requirement::{Field, Need, ProvidedField, Provision, Requirement};
pub use resources::{
    ContainerDef, FileDef, KeyValue, KeysDef, ProcessDef, ResourceDef, ServiceDef, valid_unit,
};
pub use setting::{Setting, SettingType};
pub use template::Template;

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/catalogue.rs"));
}

/// Why the catalogue could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    /// A module.json that breaks a rule; `field` is its path in the JSON.
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: String,
        field: String,
        message: String,
    },
    /// A module.json that is not JSON (or has a field of the wrong shape).
    #[error("{file}: not valid JSON: {source}")]
    Json {
        file: String,
        source: serde_json::Error,
    },
    /// A folder or file that cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A folder given with --catalogue that holds no module.
    #[error("{}: no module.json in it or in any folder directly below it", path.display())]
    Empty { path: PathBuf },
    /// A module the operator named that no catalogue has.
    #[error(
        "no module called {name:?} in the catalogue (modules: {known}); add a folder with --catalogue"
    )]
    Unknown { name: String, known: String },
}

/// Every module, by name.
#[derive(Debug, Clone)]
pub struct Catalogue {
    modules: BTreeMap<String, Module>,
}

impl Catalogue {
    /// The built-in modules, then each of `dirs` in order (a later one overrides an earlier one).
    pub fn load(dirs: &[PathBuf]) -> Result<Catalogue, CatalogueError> {
        let mut modules = BTreeMap::new();
        for m in builtin_modules()? {
            modules.insert(m.name.clone(), m);
        }
        for dir in dirs {
            for m in load_dir(dir)? {
                modules.insert(m.name.clone(), m);
            }
        }
        Ok(Catalogue { modules })
    }

    /// The module called `name`, or a refusal listing the known ones.
    pub fn module(&self, name: &str) -> Result<&Module, CatalogueError> {
        self.modules
            .get(name)
            .ok_or_else(|| CatalogueError::Unknown {
                name: name.to_string(),
                known: self.modules.keys().cloned().collect::<Vec<_>>().join(", "),
            })
    }

    /// Every module, by name.
    pub fn modules(&self) -> impl Iterator<Item = &Module> {
        self.modules.values()
    }
}

fn builtin_modules() -> Result<Vec<Module>, CatalogueError> {
    let mut folders: BTreeMap<&str, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for (path, bytes) in builtin::FILES {
        if let Some((folder, rest)) = path.split_once('/') {
            folders
                .entry(folder)
                .or_default()
                .insert(rest.to_string(), bytes.to_vec());
        }
    }
    let mut out = Vec::new();
    for (folder, mut files) in folders {
        let Some(json) = files.remove("module.json") else {
            continue;
        };
        out.push(module::parse(
            &format!("catalogue/{folder}/module.json"),
            folder,
            &json,
            &files,
            "built-in",
        )?);
    }
    Ok(out)
}

/// Loads a folder of module folders, or one module's folder.
pub fn load_dir(dir: &Path) -> Result<Vec<Module>, CatalogueError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CatalogueError::Io { path, source }
    };
    if dir.join("module.json").is_file() {
        return Ok(vec![load_module(dir)?]);
    }
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for sub in entries {
        if sub.join("module.json").is_file() {
            out.push(load_module(&sub)?);
        }
    }
    if out.is_empty() {
        return Err(CatalogueError::Empty {
            path: dir.to_path_buf(),
        });
    }
    Ok(out)
}

/// Loads one module's folder: its module.json and every file beside it.
pub fn load_module(dir: &Path) -> Result<Module, CatalogueError> {
    let mut files = BTreeMap::new();
    read_files(dir, dir, &mut files)?;
    let json_path = dir.join("module.json");
    let json = files
        .remove("module.json")
        .ok_or_else(|| CatalogueError::Io {
            path: json_path.clone(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })?;
    let folder = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    module::parse(
        &json_path.display().to_string(),
        &folder,
        &json,
        &files,
        &dir.display().to_string(),
    )
}

fn read_files(
    base: &Path,
    dir: &Path,
    into: &mut BTreeMap<String, Vec<u8>>,
) -> Result<(), CatalogueError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CatalogueError::Io { path, source }
    };
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        if path.is_dir() {
            read_files(base, &path, into)?;
        } else if let Ok(rel) = path.strip_prefix(base) {
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
    use super::*;

    #[test]
    fn every_builtin_module_parses() {
        let c = Catalogue::load(&[]).unwrap();
        assert!(c.module("motd").is_ok());
    }

    #[test]
    fn an_unknown_module_is_refused_listing_the_known_ones() {
        let c = Catalogue::load(&[]).unwrap();
        let e = c.module("nope").unwrap_err().to_string();
        assert!(e.contains("motd"), "{e}");
    }
}
