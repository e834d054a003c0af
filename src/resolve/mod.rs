//! Resolution: inventory + catalogue → one declaration per node, composed afresh every time.
//!
//! A node whose assignments cannot all be resolved is refused with every problem at once, so an
//! operator fixes them in one go rather than one per try.

pub mod settings;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::{Catalogue, Module, ResourceDef, digest, setting};
use crate::inventory::{Inventory, InventoryError, Node};
use crate::wire::{
    self, BundleFile, ContainerSpec, Costing, Declaration, DirectorySpec, FileSpec, Key, KeysSpec,
    Mount, PackageSpec, Port, ProcessSpec, Resource, ServiceSpec, SettingUse, Spec,
};
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
    // every string of a definition reads settings as text
    let text = |t: &crate::catalogue::Template| {
        t.render(|name| {
            values
                .get(name)
                .map(|v| setting::as_text(v))
                .unwrap_or_default()
        })
    };
    let (id, spec) = match def {
        ResourceDef::File(f) => {
            let content = text(&f.template);
            (
                format!("{instance}:file:{}", f.path),
                Spec::File(FileSpec {
                    path: f.path.clone(),
                    owner: f.owner.clone(),
                    group: f.group.clone(),
                    mode: f.mode,
                    content,
                    validate: f.validate.clone(),
                    costing: Costing {
                        source: f.source.clone(),
                        settings: used(module, f.template.references(), values),
                        cost: f.cost,
                        units: f.units.clone(),
                    },
                }),
            )
        }
        ResourceDef::Keys(k) => {
            let lookup = |name: &str| values.get(name).map(|v| (*v).clone());
            let keys = k
                .keys
                .iter()
                .map(|(path, value)| Key {
                    path: path.clone(),
                    value: value.render(&lookup),
                })
                .collect();
            let refs = k.keys.iter().flat_map(|(_, v)| v.references()).collect();
            (
                format!("{instance}:keys:{}", k.path),
                Spec::Keys(KeysSpec {
                    path: k.path.clone(),
                    owner: k.owner.clone(),
                    group: k.group.clone(),
                    mode: k.mode,
                    keys,
                    costing: Costing {
                        source: k.source.clone(),
                        settings: used(module, refs, values),
                        cost: k.cost,
                        units: k.units.clone(),
                    },
                }),
            )
        }
        ResourceDef::Directory(d) => (
            format!("{instance}:directory:{}", d.path),
            Spec::Directory(DirectorySpec {
                path: d.path.clone(),
                owner: d.owner.clone(),
                group: d.group.clone(),
                mode: d.mode,
            }),
        ),
        ResourceDef::Package(name) => (
            format!("{instance}:package:{name}"),
            Spec::Package(PackageSpec { name: name.clone() }),
        ),
        ResourceDef::Process(p) => {
            let base = match &p.name {
                Some(n) => format!("{instance}-{n}"),
                None => instance.to_string(),
            };
            let unit = format!("{base}.service");
            (
                format!("{instance}:process:{unit}"),
                Spec::Process(ProcessSpec {
                    unit: unit.clone(),
                    description: format!("{} ({instance}, by mesh)", p.description),
                    command: p.command.iter().map(text).collect(),
                    user: p.user.clone(),
                    environment: p
                        .environment
                        .iter()
                        .map(|(k, v)| (k.clone(), text(v)))
                        .collect(),
                    working_directory: p.working_directory.clone(),
                    restart: p.restart.clone(),
                    bundle_dir: format!("{}/bundles/{base}", wire::STATE_DIR),
                    bundle: p
                        .bundle
                        .iter()
                        .map(|(path, t, mode)| BundleFile {
                            path: path.clone(),
                            content: text(t),
                            mode: *mode,
                        })
                        .collect(),
                }),
            )
        }
        ResourceDef::Container(c) => {
            let name = match &c.name {
                Some(n) => format!("{instance}-{n}"),
                None => instance.to_string(),
            };
            (
                format!("{instance}:container:{name}"),
                Spec::Container(ContainerSpec {
                    name,
                    image: text(&c.image),
                    command: c.command.iter().map(text).collect(),
                    environment: c
                        .environment
                        .iter()
                        .map(|(k, v)| (k.clone(), text(v)))
                        .collect(),
                    mounts: c
                        .mounts
                        .iter()
                        .map(|(source, target, read_only)| Mount {
                            source: text(source),
                            target: target.clone(),
                            read_only: *read_only,
                        })
                        .collect(),
                    ports: c
                        .ports
                        .iter()
                        .map(|(host, container, protocol)| Port {
                            host: *host,
                            container: *container,
                            protocol: protocol.clone(),
                        })
                        .collect(),
                    restart: c.restart.clone(),
                }),
            )
        }
        ResourceDef::Service(sv) => (
            format!("{instance}:service:{}", sv.unit),
            Spec::Service(ServiceSpec {
                unit: sv.unit.clone(),
                running: sv.running,
                enabled: sv.enabled,
            }),
        ),
    };
    Resource {
        id,
        instance: instance.to_string(),
        module: format!("{}@{}", module.name, module.version),
        spec,
    }
}

/// The settings a resource reads, each with a digest of its value (never the value) and its cost.
fn used(
    module: &Module,
    references: Vec<&str>,
    values: &BTreeMap<&str, &Value>,
) -> BTreeMap<String, SettingUse> {
    references
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
        .collect()
}

/// A digest of a whole declaration: two equal declarations have equal digests.
pub fn declaration_digest(declaration: &Declaration) -> String {
    let json = serde_json::to_vec(declaration).unwrap_or_default();
    digest(&[&json])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    use super::{effective, resource};
    use crate::catalogue::load_module;
    use crate::inventory::Layer;
    use crate::wire::{Cost, Spec};

    const MODULE: &str = r#"{"name": "rt", "version": "1", "description": "A runtime.",
        "settings": [
          {"name": "size", "type": "string", "meaning": "Log size.", "default": "10m", "cost": "restart"},
          {"name": "files", "type": "integer", "meaning": "Log files.", "default": 3, "cost": "restart"},
          {"name": "live", "type": "boolean", "meaning": "Keep running.", "default": true, "cost": "reload"},
          {"name": "dns", "type": "list", "meaning": "Resolvers.", "default": [], "cost": "restart"}
        ],
        "resources": [
          {"kind": "keys", "path": "/etc/rt.json", "units": ["rt.service"],
           "keys": {"opts": {"size": "${size}", "files": "${files:text}"}, "live": "${live}", "dns": "${dns}"}},
          {"kind": "file", "path": "/etc/rt.conf", "template": "rt.conf"}
        ]}"#;

    fn resources(mesh: Option<&Layer>) -> Vec<Spec> {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("rt");
        std::fs::create_dir(&m).unwrap();
        std::fs::write(m.join("module.json"), MODULE).unwrap();
        std::fs::write(
            m.join("rt.conf"),
            "size=${size} files=${files} live=${live}\n",
        )
        .unwrap();
        let module = load_module(&m).unwrap();
        let values = effective(&module, mesh, None);
        let by_name: BTreeMap<&str, &Value> = values
            .iter()
            .filter_map(|e| e.value.as_ref().map(|v| (e.name.as_str(), v)))
            .collect();
        module
            .resources
            .iter()
            .map(|def| resource("rt", &module, def, &by_name).spec)
            .collect()
    }

    #[test]
    fn an_unset_tunable_takes_its_default_in_a_json_file_and_in_a_text_file() {
        let specs = resources(None);
        let Spec::Keys(keys) = &specs[0] else {
            panic!("not keys")
        };
        let got: Vec<(String, Value)> = keys
            .keys
            .iter()
            .map(|k| (k.dotted(), k.value.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("opts.size".to_string(), json!("10m")),
                // asked for as text: Docker wants "3", not 3
                ("opts.files".to_string(), json!("3")),
                ("live".to_string(), json!(true)),
                ("dns".to_string(), json!([])),
            ]
        );
        let Spec::File(file) = &specs[1] else {
            panic!("not a file")
        };
        assert_eq!(file.content, "size=10m files=3 live=true\n");
    }

    #[test]
    fn each_resource_names_the_settings_it_reads_with_their_costs() {
        let before = resources(None);
        let mut layer = Layer::new();
        layer.insert("live".into(), json!(false));
        let after = resources(Some(&layer));
        let (Some(b), Some(a)) = (before[0].costing(), after[0].costing()) else {
            panic!("keys have a costing")
        };
        assert_eq!(a.settings["live"].cost, Cost::Reload);
        assert_ne!(a.settings["live"].digest, b.settings["live"].digest);
        assert_eq!(a.settings["size"], b.settings["size"]);
        // only a reload-cost key moved: the keys resource costs a reload
        assert_eq!(
            crate::wire::change_cost(Some((b.source.as_str(), &b.settings)), a, false),
            Cost::Reload
        );
    }
}
