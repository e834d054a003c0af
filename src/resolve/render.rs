//! One resource definition of a module made into the resource a node is sent: every template
//! filled with the assignment's answers, and what each setting it reads costs.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::{Module, ResourceDef, digest};
use crate::wire::{
    self, AptRepositorySpec, BundleFile, ContainerSpec, Cost, Costing, FileSpec, GroupSpec, Key,
    KeysSpec, Mount, PackageSpec, Port, ProcessSpec, Resource, ServiceSpec, SettingUse, Spec,
    SymlinkSpec, SysctlSpec, TimerSpec, UserSpec,
};

pub(super) fn resource(
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
        ResourceDef::Package(p) => (
            format!("{instance}:package:{}", p.name),
            Spec::Package(PackageSpec {
                name: p.name.clone(),
                version: p.version.clone(),
                absent: p.absent,
            }),
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
                    ready: ready(p.ready.as_ref(), values)?,
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
                    ready: ready(c.ready.as_ref(), values)?,
                }),
            )
        }
        ResourceDef::Symlink(l) => {
            let path = text(&l.path);
            (
                format!("{instance}:symlink:{path}"),
                Spec::Symlink(SymlinkSpec {
                    path,
                    target: text(&l.target),
                }),
            )
        }
        ResourceDef::Timer(t) => {
            let name = match &t.name {
                Some(n) => format!("{instance}-{n}"),
                None => instance.to_string(),
            };
            (
                format!("{instance}:timer:{name}.timer"),
                Spec::Timer(TimerSpec {
                    name,
                    description: format!("{} ({instance}, by mesh)", t.description),
                    command: t.command.iter().map(text).collect(),
                    user: t.user.clone(),
                    schedule: text(&t.schedule),
                }),
            )
        }
        ResourceDef::Group(g) => {
            let name = account(module, &text(&g.name))?;
            (
                format!("{instance}:group:{name}"),
                Spec::Group(GroupSpec {
                    name,
                    system: g.system,
                    gid: g.gid,
                }),
            )
        }
        ResourceDef::User(u) => {
            let name = account(module, &text(&u.name))?;
            let mut groups = u.groups.clone();
            if let Some(g) = groups.as_mut() {
                g.sort();
                g.dedup();
            }
            (
                format!("{instance}:user:{name}"),
                Spec::User(UserSpec {
                    name,
                    system: u.system,
                    uid: u.uid,
                    home: u.home.as_ref().map(text),
                    shell: u.shell.as_ref().map(text),
                    groups,
                    authorized_keys: u.authorized_keys.as_ref().map(text),
                    remove_home: u.remove_home,
                }),
            )
        }
        ResourceDef::AptRepository(a) => {
            let name = text(&a.name);
            (
                format!("{instance}:apt-repository:{name}"),
                Spec::AptRepository(AptRepositorySpec {
                    name,
                    uri: text(&a.uri),
                    suite: text(&a.suite),
                    components: text(&a.components)
                        .split_whitespace()
                        .map(String::from)
                        .collect(),
                    key: text(&a.key),
                }),
            )
        }
        ResourceDef::Sysctl(s) => (
            format!("{instance}:sysctl:{}", s.name),
            Spec::Sysctl(SysctlSpec {
                name: s.name.clone(),
                value: text(&s.value),
            }),
        ),
        ResourceDef::Service(sv) => {
            let unit = text(&sv.unit);
            if !crate::catalogue::valid_unit(&unit) {
                return Err(format!(
                    "module {}: service unit {} reads as {unit:?}, which is not a systemd unit name",
                    module.name,
                    sv.unit.source_text()
                ));
            }
            (
                format!("{instance}:service:{unit}"),
                Spec::Service(ServiceSpec {
                    unit,
                    running: sv.running,
                    enabled: sv.enabled,
                    on_removal: sv.on_removal,
                    ready: ready(sv.ready.as_ref(), values)?,
                }),
            )
        }
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

/// A unit's probe with the node's answers filled in.
fn ready(
    def: Option<&crate::catalogue::ReadyDef>,
    values: &BTreeMap<String, Value>,
) -> Result<Option<wire::Ready>, String> {
    def.map(|r| r.render(values)).transpose()
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

/// An account's name as its settings fill it in, held to the rule the helper applies.
fn account(module: &Module, name: &str) -> Result<String, String> {
    crate::catalogue::check_account(name)
        .map_err(|e| format!("module {}: an account's name, filled in: {e}", module.name))?;
    Ok(name.to_string())
}
