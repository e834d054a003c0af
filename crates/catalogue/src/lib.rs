//! The catalogue: every module definition mesh knows. The repo's `catalogue/` is built in
//! (embedded at build time); folders given with `--catalogue` add modules, and a module there
//! overrides a built-in one of the same name.

mod folder;
mod form;
mod module;
pub mod owner;
pub mod per_consumer;
pub mod requirement;
mod resources;
pub mod rollout;
mod rules;
mod scope;
pub mod setting;
pub mod template;
pub mod wants;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use folder::{load_dir, load_module};
pub use module::parse_bytes as parse_module;

pub use module::Module;
pub use module::digest;
pub use requirement::{Field, Need, ProvidedField, Provision, Requirement};
pub use resources::{AccountError, ProbeError, check_account};
pub use resources::{
    AptRepositoryDef, ContainerDef, FileDef, GroupDef, KeyValue, KeysDef, PackageDef, ProbeDef,
    ProcessDef, ReadyDef, ResourceDef, ServiceDef, SymlinkDef, SysctlDef, TimerDef, UserDef,
    valid_unit,
};
pub use setting::{DeclarationError, Setting, SettingType, ValueError};
pub use template::{Template, TemplateError};

pub mod contract;
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
    /// A file of a module folder that is not the module's own: a link that leaves the folder, a
    /// link to a folder, a special file.
    #[error("{}: {message}", path.display())]
    Shipped { path: PathBuf, message: String },
    /// A module of an operator's folder that did not load: commands that use it are refused.
    #[error(
        "module {name} is broken, so nothing that uses it can go ahead: {reason}; fix it (`mesh module check DIR` says the same) or remove its folder"
    )]
    Broken { name: String, reason: String },
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
    /// What each provision promises, by provision name (a later folder's overrides).
    contracts: BTreeMap<String, contract::Contract>,
    /// Modules of the operator's folders that did not load, by folder name, with why: only
    /// what uses them is refused.
    broken: BTreeMap<String, String>,
    /// Folders given that hold no module (any more): said, and whatever used their modules is
    /// refused as using a module no catalogue has.
    empty: Vec<PathBuf>,
}

impl Catalogue {
    /// The built-in modules, then each of `dirs` in order (a later one overrides an earlier one).
    /// A module folder that does not load is kept as broken (see [`Catalogue::broken`]); a
    /// folder that cannot be read at all fails the load.
    pub fn load(dirs: &[PathBuf]) -> Result<Catalogue, CatalogueError> {
        let mut modules = BTreeMap::new();
        let mut broken = BTreeMap::new();
        let mut contracts = BTreeMap::new();
        let mut empty = Vec::new();
        for m in builtin_modules()? {
            modules.insert(m.name.clone(), m);
        }
        for c in builtin_contracts()? {
            contracts.insert(c.name.clone(), c);
        }
        for dir in dirs {
            for c in contract::load_dir(dir)? {
                contracts.insert(c.name.clone(), c);
            }
        }
        for dir in dirs {
            // a folder whose last module was taken away stops only what used that module
            let found = match folder::scan(dir) {
                Err(CatalogueError::Empty { path }) => {
                    empty.push(path);
                    Vec::new()
                }
                found => found?,
            };
            for (name, loaded) in found {
                match loaded {
                    Ok(m) => {
                        broken.remove(&m.name);
                        modules.insert(m.name.clone(), m);
                    }
                    // a broken override hides the module it overrides: using it is refused,
                    // not quietly answered by another version
                    Err(e) => {
                        modules.remove(&name);
                        broken.insert(name, e.to_string());
                    }
                }
            }
        }
        // a module that breaks a contract is broken like one that does not parse; a built-in one
        // fails the build's own tests
        let mut kept = BTreeMap::new();
        // a want is checked against the module it names, so before any module moves
        let mut wanting: BTreeMap<String, Result<(), CatalogueError>> = modules
            .values()
            .map(|m| (m.name.clone(), wants::check(m, &modules)))
            .collect();
        for (name, m) in modules {
            let wants = wanting.remove(&name).unwrap_or(Ok(()));
            match wants.and_then(|()| contract::check(&m, &m.file(), &contracts)) {
                Ok(()) => {
                    kept.insert(name, m);
                }
                Err(e) if m.origin == "built-in" => return Err(e),
                Err(e) => {
                    broken.insert(name, e.to_string());
                }
            }
        }
        Ok(Catalogue {
            modules: kept,
            broken,
            contracts,
            empty,
        })
    }

    /// Folders given that hold no module.
    pub fn empty_folders(&self) -> &[PathBuf] {
        &self.empty
    }

    /// Modules that did not load, by name, with why.
    pub fn broken(&self) -> impl Iterator<Item = (&str, &str)> {
        self.broken.iter().map(|(n, e)| (n.as_str(), e.as_str()))
    }

    /// The module called `name`, or a refusal: it is broken, or no catalogue has it.
    pub fn module(&self, name: &str) -> Result<&Module, CatalogueError> {
        if let Some(reason) = self.broken.get(name) {
            return Err(CatalogueError::Broken {
                name: name.to_string(),
                reason: reason.clone(),
            });
        }
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

    /// The contract of a provision, if it has one.
    pub fn contract(&self, provision: &str) -> Option<&contract::Contract> {
        self.contracts.get(provision)
    }
}

/// Checks `modules` (as `mesh module check DIR` loaded them) against the built-in contracts and
/// those of `dir`.
pub fn check_contracts(modules: &[Module], dir: &Path) -> Result<(), CatalogueError> {
    let mut contracts = BTreeMap::new();
    for c in builtin_contracts()?
        .into_iter()
        .chain(contract::load_dir(dir)?)
    {
        contracts.insert(c.name.clone(), c);
    }
    for m in modules {
        contract::check(m, &m.file(), &contracts)?;
    }
    Ok(())
}

/// The built-in catalogue's `contracts/NAME.json`.
fn builtin_contracts() -> Result<Vec<contract::Contract>, CatalogueError> {
    let mut out = Vec::new();
    for (path, bytes) in builtin::FILES {
        if let Some(name) = path
            .strip_prefix("contracts/")
            .and_then(|f| f.strip_suffix(".json"))
        {
            out.push(contract::parse(&format!("catalogue/{path}"), name, bytes)?);
        }
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_module_parses() {
        let c = Catalogue::load(&[]).unwrap();
        assert!(c.module("motd").is_ok());
    }

    #[test]
    fn a_broken_module_refuses_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        for (name, json) in [
            (
                "good",
                r#"{"name": "good", "version": "1", "description": "Fine."}"#,
            ),
            ("bad", r#"{"name": "bad", "version": "1"}"#),
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("module.json"), json).unwrap();
        }
        let c = Catalogue::load(&[dir.path().to_path_buf()]).unwrap();
        assert!(c.module("good").is_ok());
        let e = c.module("bad").unwrap_err().to_string();
        assert!(
            e.starts_with("module bad is broken") && e.contains("description: missing"),
            "{e}"
        );
        assert_eq!(c.broken().map(|(n, _)| n).collect::<Vec<_>>(), vec!["bad"]);
        assert!(load_dir(dir.path()).is_err());
    }

    #[test]
    fn a_folder_that_holds_no_module_any_more_refuses_only_what_used_one() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalogue::load(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(c.empty_folders(), [dir.path().to_path_buf()]);
        assert!(c.module("motd").is_ok());
        assert!(c.module("gone").is_err());
        // one that is not there at all is a mistake in the command, refused whole
        assert!(Catalogue::load(&[dir.path().join("typo")]).is_err());
        assert!(load_dir(dir.path()).is_err());
    }

    #[test]
    fn an_unknown_module_is_refused_listing_the_known_ones() {
        let c = Catalogue::load(&[]).unwrap();
        let e = c.module("nope").unwrap_err().to_string();
        assert!(e.contains("motd"), "{e}");
    }
}
