//! Resolution: inventory + catalogue → one declaration per node, composed afresh every time.
//!
//! A node whose assignments cannot all be resolved is refused with every problem at once, so an
//! operator fixes them in one go rather than one per try.

#[cfg(test)]
mod checked;
pub mod consumers;
#[cfg(test)]
mod contract_tests;
#[cfg(test)]
mod fleet_tests;
pub mod held;
pub mod identity;
pub mod order;
pub mod provisions;
#[cfg(test)]
mod provisions_tests;
pub mod requirements;
mod sealed;
pub mod settings;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::{Catalogue, Module, ResourceDef, digest};
use crate::inventory::{Inventory, InventoryError, Node};
use crate::wire::{
    self, BundleFile, ContainerSpec, Cost, Costing, Declaration, FileSpec, Key, KeysSpec, Mount,
    PackageSpec, Port, ProcessSpec, Resource, ServiceSpec, SettingUse, Spec,
};
pub use held::Held;
pub use settings::{Effective, Source, effective};

/// Why a declaration could not be composed.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    /// Everything that stops a node, all at once.
    #[error("{node} cannot be planned:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Unresolved { node: String, problems: Vec<String> },
    /// Nodes that provide to each other: none can go first.
    #[error("{} cannot be ordered: some of them provide to each other in a cycle, so none can be pushed first; nothing was sent:\n{}\nmove one of these assignments to another node, or pin it to a provider outside the cycle", nodes.join(", "), why.iter().map(|w| format!("  - {w}")).collect::<Vec<_>>().join("\n"))]
    Cycle {
        nodes: Vec<String>,
        why: Vec<String>,
    },
}

/// The effective settings of one assignment: the module's mesh-wide layer, then the node layer of
/// this instance.
pub fn assignment_settings(
    inventory: &Inventory,
    module: &Module,
    node: &str,
    instance: &str,
) -> Result<Vec<Effective>, InventoryError> {
    let mesh = inventory.layer(&module.name, None)?;
    let own = inventory.layer(instance, Some(node))?;
    Ok(effective(module, mesh.as_ref(), own.as_ref()))
}

/// Everything an assignment's definition reads, answered, with what could not be.
pub fn answers(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
    a: &crate::inventory::Assignment,
) -> Result<(requirements::Answers, Vec<String>), ResolveError> {
    let module = catalogue
        .module(&a.module)
        .map_err(|e| ResolveError::Unresolved {
            node: node.name.clone(),
            problems: vec![e.to_string()],
        })?;
    let mut problems = Vec::new();
    let mut answers = requirements::own(inventory, module, node, a, &mut problems)?;
    // shown whole, as the module could read it, even where it reads none of it
    requirements::fleet(inventory, module, &mut answers.values, |_| true)?;
    requirements::modules(
        inventory,
        catalogue,
        module,
        node,
        a,
        &mut answers,
        &mut problems,
    )?;
    Ok((answers, problems))
}

/// What a node should be, and the assignments held back from it (they keep what they have).
#[derive(Debug)]
pub struct Composed {
    pub declaration: Declaration,
    pub held: Vec<Held>,
    /// Consumers whose provisions this declaration takes away from the machine.
    pub withdrawn: Vec<provisions::Withdrawn>,
}

/// Composes what `node` should be.
pub fn compose(
    inventory: &Inventory,
    catalogue: &Catalogue,
    node: &Node,
) -> Result<Composed, ResolveError> {
    let mut resources: Vec<Resource> = Vec::new();
    let mut problems = Vec::new();
    let mut holds = Vec::new();
    let mut withdrawn = Vec::new();
    let confirmed = inventory.confirmed(&node.name)?;
    for a in inventory.assignments(Some(&node.name))? {
        let module = match catalogue.module(&a.module) {
            Ok(m) => m,
            Err(e) => {
                problems.push(format!("{} (module {}): {e}", a.instance, a.module));
                continue;
            }
        };
        let before = problems.len();
        let mut answers = requirements::own(inventory, module, node, &a, &mut problems)?;
        let mut unanswered = Vec::new();
        requirements::modules(
            inventory,
            catalogue,
            module,
            node,
            &a,
            &mut answers,
            &mut unanswered,
        )?;
        if problems.len() == before
            && !unanswered.is_empty()
            && held::provider_gone(inventory, module, &a, confirmed.as_ref())?
        {
            resources.extend(held::kept(confirmed.as_ref(), &a.instance));
            holds.push(Held::gone(&a, node, &unanswered));
            continue;
        }
        problems.append(&mut unanswered);
        if problems.len() > before {
            continue;
        }
        if let Some(provider) =
            provisions::waiting_for(inventory, catalogue, module, node, &a, &answers.providers)?
        {
            resources.extend(held::kept(confirmed.as_ref(), &a.instance));
            holds.push(Held::waiting(&a, provider));
            continue;
        }
        provisions::made(
            inventory,
            catalogue,
            module,
            node,
            &a,
            &mut answers.values,
            &mut withdrawn,
        )?;
        for (name, d) in answers.directories {
            let spec = Spec::Directory(d);
            if let Err(e) = spec.check() {
                problems.push(format!(
                    "{} ({} from {}): the directory it requires as {name} {e}; \
                     place it elsewhere with `mesh place {} {} {name}=PATH`",
                    a.instance,
                    module.name,
                    module.file(),
                    a.instance,
                    node.name
                ));
                continue;
            }
            resources.push(Resource {
                id: format!("{}:directory:{}", a.instance, spec.target()),
                instance: a.instance.clone(),
                module: format!("{}@{}", module.name, module.version),
                confirm: false,
                spec,
            });
        }
        for (i, def) in module.resources.iter().enumerate() {
            match resource(&a.instance, module, def, &answers.values) {
                // every path is checked as rendered: a setting or a placement can make a path
                // leave its place that the definition kept
                Ok(mut r) => match with_access(&mut r, &answers.access).check() {
                    Ok(()) => resources.push(r),
                    Err(e) => problems.push(format!(
                        "{} ({} from {}): resources[{i}].{} reads as {:?}: {}; \
                         nothing is sent until the module or its settings change",
                        a.instance,
                        module.name,
                        module.file(),
                        e.field,
                        e.value,
                        e.reason
                    )),
                },
                Err(problem) => problems.push(format!("{}: {problem}", a.instance)),
            }
        }
    }
    problems.extend(collisions(&resources));
    sealed::seal(inventory, node, &mut resources, &mut problems)?;
    if !problems.is_empty() {
        return Err(ResolveError::Unresolved {
            node: node.name.clone(),
            problems,
        });
    }
    // taking off what asked for confirmation is confirmed too: the node's confirmed state says
    // which those are, whatever the helper's record (an older one does not) keeps of them
    let confirm_removals = confirmed
        .iter()
        .flat_map(|c| &c.resources)
        .filter(|old| old.confirm && !resources.iter().any(|r| r.id == old.id))
        .map(|old| old.id.clone())
        .collect();
    Ok(Composed {
        declaration: Declaration {
            version: wire::VERSION,
            node: node.name.clone(),
            resources,
            expects_record: false,
            confirm_within: None,
            confirm_removals,
        },
        held: holds,
        withdrawn,
    })
}

/// A process or container reaches every path of the operator's data its module requires
/// access to.
fn with_access<'r>(r: &'r mut Resource, access: &[wire::Access]) -> &'r Spec {
    match &mut r.spec {
        Spec::Process(p) => p.access = access.to_vec(),
        Spec::Container(c) => c.access = access.to_vec(),
        _ => {}
    }
    &r.spec
}

/// What must stay single on a machine: two instances may not write one file, run one unit or one
/// container, or own one directory.
fn collisions(resources: &[Resource]) -> Vec<String> {
    let mut seen: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    let mut out = Vec::new();
    for r in resources {
        let kind = match &r.spec {
            // a package is installed once, whoever asks for it, and never removed
            Spec::Package(_) => continue,
            // a process is a unit too: it may not be another's service
            Spec::Process(_) => "service",
            other => other.kind(),
        };
        if let Some(first) = seen.insert((kind, r.spec.target()), &r.instance)
            && first != r.instance
        {
            out.push(format!(
                "{} and {} both declare the {kind} {}; run the second under settings that move it, or not on this node",
                first,
                r.instance,
                r.spec.target()
            ));
        }
    }
    out.extend(shared_paths(resources));
    out
}

/// Two kinds of resource on one path fight at every push (a whole file against keys merged into
/// it, a file where a directory is, a file where a process writes its unit): refused, whoever
/// declares them.
fn shared_paths(resources: &[Resource]) -> Vec<String> {
    let mut seen: BTreeMap<String, (&str, &str)> = BTreeMap::new();
    let mut out = Vec::new();
    for r in resources {
        let (path, kind) = match &r.spec {
            Spec::File(f) => (f.path.clone(), "file"),
            Spec::Keys(k) => (k.path.clone(), "keys"),
            Spec::Directory(d) => (d.path.clone(), "directory"),
            Spec::Process(p) => (
                format!("/etc/systemd/system/{}", p.unit),
                "process unit file",
            ),
            _ => continue,
        };
        let path = path.trim_end_matches('/').to_string();
        match seen.get(&path) {
            Some(&(first_kind, first)) if first_kind != kind => out.push(format!(
                "{first} declares the {first_kind} {path} and {} the {kind} {path}: \
                 one would undo the other at every push; move one of them",
                r.instance
            )),
            // the same kind twice is the rule above's
            Some(_) => {}
            None => {
                seen.insert(path, (kind, &r.instance));
            }
        }
    }
    out
}

fn resource(
    instance: &str,
    module: &Module,
    def: &ResourceDef,
    values: &BTreeMap<String, Value>,
) -> Result<Resource, String> {
    // every string of a definition reads settings as text
    let text = |t: &crate::catalogue::Template| t.fill(values);
    let (id, spec) = match def {
        ResourceDef::File(f) => {
            let content = text(&f.template);
            let path = text(&f.path);
            (
                format!("{instance}:file:{path}"),
                Spec::File(FileSpec {
                    path,
                    secret: f.secret,
                    sealed: None,
                    effective: f.effective.clone(),
                    owner: f.owner.clone(),
                    group: f.group.clone(),
                    mode: f.mode,
                    content,
                    validate: f.validate.clone(),
                    costing: Costing {
                        source: f.source.clone(),
                        settings: used(
                            module,
                            f.template
                                .references()
                                .into_iter()
                                .chain(f.path.references())
                                .collect(),
                            values,
                            f.cost,
                        ),
                        cost: f.cost,
                        units: unit_names(&f.units, &text)?,
                    },
                }),
            )
        }
        ResourceDef::Keys(k) => {
            let lookup = |name: &str| values.get(name).cloned();
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
                        settings: used(module, refs, values, k.cost),
                        cost: k.cost,
                        units: unit_names(&k.units, &text)?,
                    },
                }),
            )
        }
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
                    secret_environment: p.secret_environment.clone(),
                    sealed_environment: Default::default(),
                    working_directory: p.working_directory.as_ref().map(text),
                    restart: p.restart.clone(),
                    bundle_dir: format!("{}/bundles/{base}", wire::STATE_DIR),
                    bundle: p
                        .bundle
                        .iter()
                        .map(|(path, t, mode)| BundleFile {
                            path: path.clone(),
                            content: text(t),
                            mode: *mode,
                            source: digest(&[t.source_text().as_bytes()]),
                            settings: used(module, t.references(), values, Cost::Restart),
                        })
                        .collect(),
                    // the operator's data: filled in by `compose` from the module's accesses
                    access: vec![],
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
                    secret_environment: c.secret_environment.clone(),
                    sealed_environment: Default::default(),
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
                        .map(|(host, container, protocol)| {
                            let text = host.fill(values);
                            Ok(Port {
                                host: text.parse().map_err(|_| {
                                    format!(
                                        "the host port {} reads as {text:?}, not a port",
                                        host.source_text()
                                    )
                                })?,
                                container: *container,
                                protocol: protocol.clone(),
                            })
                        })
                        .collect::<Result<_, String>>()?,
                    restart: c.restart.clone(),
                    // the operator's data it reaches is added once answered (`with_access`)
                    access: Vec::new(),
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
    // settings filled in may hold what a unit or an environment cannot: refused before anything
    // is sent
    spec.check_unit_values().map_err(|e| {
        format!(
            "{} {}, as its settings fill it in: {e}",
            spec.kind(),
            spec.target()
        )
    })?;
    Ok(Resource {
        id,
        instance: instance.to_string(),
        module: format!("{}@{}", module.name, module.version),
        confirm: def.confirm(),
        spec,
    })
}

/// A resource's unit names, rendered (`${me.instance}.service`) and checked.
fn unit_names(
    units: &[String],
    text: &dyn Fn(&crate::catalogue::Template) -> String,
) -> Result<Vec<String>, String> {
    units
        .iter()
        .map(|u| {
            let name = crate::catalogue::Template::parse(u)
                .map(|t| text(&t))
                .unwrap_or_else(|_| u.clone());
            if crate::catalogue::valid_unit(&name) {
                Ok(name)
            } else {
                Err(format!("{u} reads as {name:?}, which is not a unit name"))
            }
        })
        .collect()
}

/// The settings and requirement fields a resource reads, each with a digest of its value (never
/// the value) and what its change costs: a setting's declared cost; for a requirement's field (a
/// provider's host, a port, a placed directory: `db.host`), `cost`, the resource's own, since a
/// requirement declares none.
fn used(
    module: &Module,
    references: Vec<&str>,
    values: &BTreeMap<String, Value>,
    cost: Cost,
) -> BTreeMap<String, SettingUse> {
    references
        .into_iter()
        .filter_map(|name| {
            let value = values.get(name)?;
            let cost = match module.setting(name) {
                Some(decl) => decl.cost,
                None => cost,
            };
            Some((
                name.to_string(),
                SettingUse {
                    digest: digest(&[name.as_bytes(), value.to_string().as_bytes()]),
                    cost,
                },
            ))
        })
        .collect()
}

/// A digest of a whole declaration: two equal declarations have equal digests (a sealed file
/// counts by its digest: sealing it again changes nothing).
pub fn declaration_digest(declaration: &Declaration) -> String {
    let json = serde_json::to_vec(&declaration.without_ciphertext()).unwrap_or_default();
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
        let by_name: BTreeMap<String, Value> = values
            .into_iter()
            .filter_map(|e| e.value.map(|v| (e.name, v)))
            .collect();
        module
            .resources
            .iter()
            .map(|def| resource("rt", &module, def, &by_name).unwrap().spec)
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

    #[test]
    fn a_requirement_field_a_file_reads_costs_like_a_setting_at_the_files_own_cost() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("use");
        std::fs::create_dir(&m).unwrap();
        std::fs::write(
            m.join("module.json"),
            r#"{"name": "use", "version": "1", "description": "A consumer.",
                "requires": [{"name": "db", "kind": "module", "provision": "db",
                              "fields": {"host": {"type": "string"}}}],
                "resources": [{"kind": "file", "path": "/etc/use.conf", "template": "use.conf",
                               "cost": "restart", "units": ["use.service"]}]}"#,
        )
        .unwrap();
        std::fs::write(m.join("use.conf"), "server ${db.host}\n").unwrap();
        let module = load_module(&m).unwrap();
        let costing = |host: &str| {
            let values: BTreeMap<String, Value> = [("db.host".to_string(), json!(host))].into();
            let r = resource("use", &module, &module.resources[0], &values).unwrap();
            r.spec.costing().cloned().unwrap()
        };
        let (before, after) = (costing("10.0.0.1"), costing("10.0.0.2"));
        assert_eq!(after.settings["db.host"].cost, Cost::Restart);
        assert_ne!(
            after.settings["db.host"].digest,
            before.settings["db.host"].digest
        );
        // only the provider's address moved: the file's readers pay its cost
        assert_eq!(
            crate::wire::change_cost(
                Some((before.source.as_str(), &before.settings)),
                &after,
                false
            ),
            Cost::Restart
        );
    }

    #[test]
    fn a_setting_that_would_break_a_unit_or_an_environment_is_refused_before_anything_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("svc");
        std::fs::create_dir(&m).unwrap();
        std::fs::write(
            m.join("module.json"),
            r#"{"name": "svc", "version": "1", "description": "A service.",
                "settings": [{"name": "word", "type": "string", "meaning": "A word.", "default": "hi", "cost": "restart"}],
                "resources": [
                  {"kind": "process", "description": "d", "command": ["/bin/echo", "${word}"],
                   "environment": {"WORD": "${word}"}},
                  {"kind": "container", "image": "x", "environment": {"WORD": "${word}"}}]}"#,
        )
        .unwrap();
        let module = load_module(&m).unwrap();
        let with = |word: &str| {
            let values: BTreeMap<String, Value> = [("word".to_string(), json!(word))].into();
            module
                .resources
                .iter()
                .map(|def| resource("svc", &module, def, &values).map(|_| ()))
                .collect::<Vec<_>>()
        };
        assert_eq!(with("fine"), vec![Ok(()), Ok(())]);
        let nul = with("a\0b");
        assert!(
            nul[0].as_ref().is_err_and(|e| e.contains(
                "process svc.service, as its settings fill it in: command[1] holds a control character (\\u{0})"
            )),
            "{nul:?}"
        );
        let lines = with("two\nlines");
        assert!(
            lines[0]
                .as_ref()
                .is_err_and(|e| e.contains("command[1] holds a control character")),
            "{lines:?}"
        );
        assert!(
            lines[1].as_ref().is_err_and(|e| e.contains(
                "container svc, as its settings fill it in: environment.WORD spans several lines"
            )),
            "{lines:?}"
        );
    }
}
