//! Answering requirements (design 27). Every value a definition can read is resolved here into
//! one map, keyed the way templates name it: `name` for a setting, `requirement.field` for a field
//! of a requirement or of the module's own provision.
//!
//! Resolution only reads the inventory: a port or a generated secret not allocated yet is named
//! in [`Answers::unallocated`] and left out, for the allocation step ([`super::allocation`]) to
//! make. A module requirement's provider is chosen in [`super::provider`], and its fields answered
//! in [`super::module_requirements`]. Every problem of an assignment is collected, so a refusal
//! says everything at once.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::{Catalogue, Module, Need, ProvidedField, Provision, Requirement};
use crate::inventory::{Assignment, Inventory, InventoryError, Node, Unallocated};
use crate::wire::DirectorySpec;

use super::Problem;
use super::assignment_settings;
pub(super) use super::module_requirements::modules;

/// Everything an assignment's definition can read, and the directories its host requirements ask
/// for.
#[derive(Debug, Default)]
pub struct Answers {
    pub values: BTreeMap<String, Value>,
    /// Host directories, by requirement name.
    pub directories: Vec<(String, DirectorySpec)>,
    /// Which provider answers each module requirement: requirement → `instance@node`.
    pub providers: BTreeMap<String, String>,
    /// The operator's data the module's processes reach.
    pub access: Vec<crate::wire::Access>,
    /// The first fact of the machine read (`host.os.id`) while the machine has said none yet.
    pub facts_unknown: Option<String>,
    /// What the values need that is not allocated yet (left out of `values`), in the order
    /// resolution asked for it.
    pub unallocated: Vec<Unallocated>,
}

pub use super::identity::login;

/// Resolves the settings, host and mesh requirements and own provisions of `a` on `node`: all an
/// assignment can answer by itself. Problems are pushed; what could not be answered is left out.
pub(super) fn own(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    node: &Node,
    a: &Assignment,
    problems: &mut Vec<Problem>,
) -> Result<Answers, InventoryError> {
    let mut answers = Answers::default();
    settings(
        inventory,
        catalogue,
        module,
        node,
        a,
        &mut answers,
        problems,
    )?;
    for r in &module.requires {
        host(inventory, module, node, a, r, &mut answers, problems)?;
    }
    fleet(inventory, module, &mut answers.values, |key| {
        module.reads.contains(key)
    })?;
    // a per-consumer provision is answered for each consumer (`provisions`), never here
    for p in module.provides.iter().filter(|p| p.per_consumer.is_none()) {
        provided(inventory, node, a, p, &mut answers, problems)?;
    }
    Ok(answers)
}

/// Why a layer's value of `e` is refused beside the module that wants it otherwise, with the
/// layer to change.
fn against_want(
    e: &super::settings::Effective,
    w: &super::settings::Wanted,
    a: &Assignment,
    node: &Node,
) -> String {
    let value = e.value.as_ref().map_or("unset".into(), ToString::to_string);
    // the node layer is the instance's; the mesh-wide and tag layers are the module's
    let layer = match (&e.source, &e.tag) {
        (_, Some(t)) => format!("{} --tag {t}", a.module),
        (super::settings::Source::Node, None) => format!("{} --node {}", a.instance, node.name),
        _ => a.module.clone(),
    };
    format!(
        "{inst}: setting {name:?} is {value} (from the {from} layer), but {by} on {node} needs it \
         {want} ({why}); set it to {want} or remove it there (`mesh settings show {layer}`, then \
         `mesh settings set {layer} ... --replace`) so it follows {by}, or take {by} \
         off {node}",
        inst = a.instance,
        name = e.name,
        from = e.source_text(),
        by = w.by,
        node = node.name,
        want = w.value,
        why = w.why,
    )
}

/// The effective value of each of the module's settings, or the problem that leaves it unset.
fn settings(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    node: &Node,
    a: &Assignment,
    answers: &mut Answers,
    problems: &mut Vec<Problem>,
) -> Result<(), InventoryError> {
    for e in assignment_settings(inventory, catalogue, module, &node.name, &a.instance)? {
        let Some(decl) = module.setting(&e.name) else {
            continue;
        };
        if let Some(w) = e.against_want() {
            let said = against_want(&e, w, a, node);
            problems.push(
                Problem::of(a, said)
                    .file(module.file())
                    .field(e.name.clone()),
            );
            continue;
        }
        if !e.conflict.is_empty() {
            let said: Vec<String> = e
                .conflict
                .iter()
                .map(|(t, v)| format!("{t} sets {v}"))
                .collect();
            problems.push(Problem::of(a, format!(
                "{}: setting {:?} is set differently by the layers of tags that {} carries ({}), \
                 and no order is kept between tags; set it in the node's own layer (`mesh settings set \
                 {} {}=VALUE --node {}`), or make the tags' layers agree",
                a.instance,
                e.name,
                node.name,
                said.join(", "),
                a.instance,
                e.name,
                node.name
            ))
            .file(module.file())
            .field(e.name.clone())
            .fix(format!("mesh settings set {} {}=VALUE --node {}", a.instance, e.name, node.name)));
            continue;
        }
        let from = e.source_text();
        match e.value {
            // its default is a fact the machine has not said yet: held, as a fact requirement is
            None if e.fact.is_some() => {
                answers.facts_unknown.get_or_insert(e.fact.unwrap_or_default());
            }
            None => problems.push(Problem::of(a, format!(
                "{}: setting {:?} (the operator's) has no default and no layer sets it; set it with \
                 `mesh settings set {} {}=VALUE` ({}: {})",
                a.instance,
                e.name,
                module.name,
                e.name,
                decl.kind.as_str(),
                decl.meaning
            ))
            .file(module.file())
            .field(e.name.clone())
            .fix(format!("mesh settings set {} {}=VALUE", module.name, e.name))),
            Some(v) if !decl.admits(&v) => problems.push(Problem::of(a, format!(
                "{}: setting {:?} is {v} (from the {} layer) but the module now wants {}",
                a.instance,
                e.name,
                from,
                decl.expected()
            ))
            .file(module.file())
            .field(e.name.clone())),
            Some(v) => {
                answers.values.insert(e.name, v);
            }
        }
    }
    Ok(())
}

/// Answers one requirement the host or the mesh answers (a module requirement is `modules`').
fn host(
    inventory: &Inventory,
    module: &Module,
    node: &Node,
    a: &Assignment,
    r: &Requirement,
    answers: &mut Answers,
    problems: &mut Vec<Problem>,
) -> Result<(), InventoryError> {
    let key = |field: &str| format!("{}.{field}", r.name);
    let text = |s: &str| Value::String(s.to_string());
    match &r.need {
        Need::Directory { owner, group, mode } => {
            let path = match inventory.placement(&node.name, &a.instance, &r.name)? {
                Some(p) => p,
                None => format!(
                    "{}/{}/{}",
                    node.root.trim_end_matches('/'),
                    a.instance,
                    r.name
                ),
            };
            answers.values.insert(key("path"), text(&path));
            answers.directories.push((
                r.name.clone(),
                DirectorySpec {
                    path,
                    owner: owner.clone(),
                    group: group.clone(),
                    mode: *mode,
                },
            ));
        }
        Need::Port => match inventory.allocated_port(&node.name, &a.instance, &r.name)? {
            Some(port) => {
                answers.values.insert(key("port"), Value::from(port));
            }
            None => answers
                .unallocated
                .push(Unallocated::port(&node.name, &a.instance, &r.name)),
        },
        Need::Fact => {
            answers.values.insert(key("name"), text(&node.name));
            answers.values.insert(key("address"), text(&node.address));
            if let Some(fact) =
                super::facts::answer(inventory, module, node, &r.name, &mut answers.values)?
            {
                answers.facts_unknown.get_or_insert(fact);
            }
        }
        Need::Mesh => {
            answers.values.insert(key("instance"), text(&a.instance));
            answers.values.insert(key("node"), text(&node.name));
            let me = login(&a.instance, &node.name);
            answers.values.insert(key("login"), text(&me));
        }
        Need::Access { write } => access(inventory, node, a, r, *write, answers, problems)?,
        Need::Module { .. } => {}
    }
    Ok(())
}

/// The operator's data an access requirement reaches: where the operator placed it.
fn access(
    inventory: &Inventory,
    node: &Node,
    a: &Assignment,
    r: &Requirement,
    write: bool,
    answers: &mut Answers,
    problems: &mut Vec<Problem>,
) -> Result<(), InventoryError> {
    match inventory.placement(&node.name, &a.instance, &r.name)? {
        Some(path) => {
            answers
                .values
                .insert(format!("{}.path", r.name), Value::String(path.clone()));
            answers.access.push(crate::wire::Access {
                name: r.name.clone(),
                path,
                write,
            });
        }
        None => problems.push(Problem::of(
            a,
            format!(
                "{} on {}: it requires {} access to the operator's data as {}: name the path \
                 with `mesh place {} {} {}=PATH` (the mesh never creates, owns or removes it)",
                a.instance,
                node.name,
                if write { "read-write" } else { "read" },
                r.name,
                a.instance,
                node.name,
                r.name
            ),
        )),
    }
    Ok(())
}

/// Answers the fields of one provision `a` makes for every consumer alike: an operator's
/// secret as set, a generated one as kept, any other from the module's own values.
fn provided(
    inventory: &Inventory,
    node: &Node,
    a: &Assignment,
    p: &Provision,
    answers: &mut Answers,
    problems: &mut Vec<Problem>,
) -> Result<(), InventoryError> {
    for f in &p.fields {
        let name = format!("{}.{}", p.name, f.field.name);
        if f.from_operator {
            match inventory.kept_secret(&node.name, &a.instance, &p.name, &f.field.name)? {
                Some(v) => {
                    answers.values.insert(name, Value::String(v));
                }
                None => problems.push(Problem::of(a, format!(
                    "{} on {}: the secret {name} is the operator's and was never set: \
                     `mesh secret set {} {name} --node {}` (it reads the value from a terminal or stdin)",
                    a.instance, node.name, a.instance, node.name
                ))),
            }
            continue;
        }
        let value = field_value(
            inventory,
            (&node.name, &a.instance, &p.name),
            f,
            &answers.values,
            &mut answers.unallocated,
        )?;
        if let Some(value) = value {
            answers.values.insert(name, value);
        }
    }
    Ok(())
}

/// Answers `${NAME.nodes}` of each fact requirement whose key `wanted` keeps: every node's name.
/// The list is as long as the fleet, so resolution makes it only for a module that reads it: made
/// for every assignment, a plan of the fleet would cost nodes × assignments.
pub(super) fn fleet(
    inventory: &Inventory,
    module: &Module,
    values: &mut BTreeMap<String, Value>,
    wanted: impl Fn(&str) -> bool,
) -> Result<(), InventoryError> {
    for r in &module.requires {
        let key = format!("{}.nodes", r.name);
        if !matches!(r.need, Need::Fact) || !wanted(&key) {
            continue;
        }
        let nodes: Vec<Value> = inventory
            .node_names_list()?
            .iter()
            .map(|n| Value::String(n.clone()))
            .collect();
        values.insert(key, Value::Array(nodes));
    }
    Ok(())
}

/// A provision's field as its provider (`node`, `instance`, `provision`) answers it: rendered
/// from the provider's own values, or a secret generated once and kept in the inventory under
/// `provision` (for a per-consumer provision, its name and the consumer's login). `None`: a
/// generated secret not made yet, named in `unallocated`.
pub(super) fn field_value(
    inventory: &Inventory,
    (node, instance, provision): (&str, &str, &str),
    field: &ProvidedField,
    values: &BTreeMap<String, Value>,
    unallocated: &mut Vec<Unallocated>,
) -> Result<Option<Value>, InventoryError> {
    let Some(template) = &field.value else {
        let kept = inventory.kept_secret(node, instance, provision, &field.field.name)?;
        if kept.is_none() {
            unallocated.push(Unallocated::secret(
                node,
                instance,
                provision,
                &field.field.name,
            ));
        }
        return Ok(kept.map(Value::String));
    };
    Ok(Some(match template.lone_reference() {
        Some(name) => values.get(name).cloned().unwrap_or(Value::Null),
        None => Value::String(template.fill(values)),
    }))
}
