//! Resolution: inventory + catalogue → one declaration per node, composed afresh every time.
//!
//! A node whose assignments cannot all be resolved is refused with every problem at once, so an
//! operator fixes them in one go rather than one per try.

pub mod settings;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::{Catalogue, Module, ResourceDef, digest, setting};
use crate::inventory::{Inventory, InventoryError, Node};
use crate::wire::{self, Declaration, FileSpec, Resource, SettingUse, Spec};
pub use settings::{Effective, Source, effective};

/// Why a declaration could not be composed.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    /// Everything that stops a node, all at once.
    #[error("{node} cannot be planned:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Unresolved { node: String, problems: Vec<String> },
}

/// The effective settings of one assignment.
pub fn assignment_settings(
    inventory: &Inventory,
    module: &Module,
    node: &str,
) -> Result<Vec<Effective>, InventoryError> {
    let mesh = inventory.layer(&module.name, None)?;
    let own = inventory.layer(&module.name, Some(node))?;
    Ok(effective(module, mesh.as_ref(), own.as_ref()))
}

/// Composes what `node` should be.
pub fn compose(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
) -> Result<Declaration, ResolveError> {
    let mut resources = Vec::new();
    let mut problems = Vec::new();
    for a in inventory.assignments(Some(&node.name))? {
        let module = match catalogue.module(&a.module) {
            Ok(m) => m,
            Err(e) => {
                problems.push(format!("{} (module {}): {e}", a.instance, a.module));
                continue;
            }
        };
        let values = assignment_settings(inventory, module, &node.name)?;
        let mut ok = true;
        for e in &values {
            let Some(decl) = module.setting(&e.name) else {
                continue;
            };
            match &e.value {
                None => {
                    ok = false;
                    problems.push(format!(
                        "{}: setting {:?} has no default and no layer sets it; set it with `mesh settings set {} {}=VALUE` ({}: {})",
                        a.instance, e.name, module.name, e.name, decl.kind.as_str(), decl.meaning
                    ));
                }
                Some(v) if !decl.kind.admits(v) => {
                    ok = false;
                    problems.push(format!(
                        "{}: setting {:?} is {v} (from the {} layer) but the module now wants {}",
                        a.instance,
                        e.name,
                        e.source.as_str(),
                        decl.kind.expected()
                    ));
                }
                Some(_) => {}
            }
        }
        if !ok {
            continue;
        }
        let by_name: BTreeMap<&str, &Value> = values
            .iter()
            .filter_map(|e| e.value.as_ref().map(|v| (e.name.as_str(), v)))
            .collect();
        for def in &module.resources {
            resources.push(resource(&a.instance, module, def, &by_name));
        }
    }
    if !problems.is_empty() {
        return Err(ResolveError::Unresolved {
            node: node.name.clone(),
            problems,
        });
    }
    Ok(Declaration {
        version: wire::VERSION,
        node: node.name.clone(),
        resources,
    })
}

fn resource(
    instance: &str,
    module: &Module,
    def: &ResourceDef,
    values: &BTreeMap<&str, &Value>,
) -> Resource {
    match def {
        ResourceDef::File(f) => {
            let content = f.template.render(|name| {
                values
                    .get(name)
                    .map(|v| setting::as_text(v))
                    .unwrap_or_default()
            });
            let settings = f
                .template
                .references()
                .into_iter()
                .filter_map(|name| {
                    let decl = module.setting(name)?;
                    let value = values.get(name)?;
                    Some((
                        name.to_string(),
                        SettingUse {
                            digest: digest(&[name.as_bytes(), value.to_string().as_bytes()]),
                            cost: decl.cost,
                        },
                    ))
                })
                .collect();
            Resource {
                id: format!("{instance}:file:{}", f.path),
                instance: instance.to_string(),
                module: format!("{}@{}", module.name, module.version),
                spec: Spec::File(FileSpec {
                    path: f.path.clone(),
                    owner: f.owner.clone(),
                    group: f.group.clone(),
                    mode: f.mode,
                    content,
                    source: f.source.clone(),
                    settings,
                    cost: f.cost,
                    units: f.units.clone(),
                }),
            }
        }
    }
}

/// A digest of a whole declaration: two equal declarations have equal digests.
pub fn declaration_digest(declaration: &Declaration) -> String {
    let json = serde_json::to_vec(declaration).unwrap_or_default();
    digest(&[&json])
}
