//! Answering requirements (design 27). Every value a definition can read is resolved here into
//! one map, keyed the way templates name it: `name` for a setting, `requirement.field` for a field
//! of a requirement or of the module's own provision.
//!
//! A module provider is chosen by, in order: a pin on the assignment, the holder of the seat that
//! delivers the provision, the provider on the consumer's own node, the only provider in the mesh;
//! otherwise the requirement is refused, naming the candidates or the unheld seat. Every problem
//! of an assignment is collected, so a refusal says everything at once.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::{Catalogue, Module, Need, ProvidedField, owner};
use crate::inventory::{Assignment, Inventory, InventoryError, Node};
use crate::wire::DirectorySpec;

use super::Problem;
use super::assignment_settings;

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
}

pub use super::identity::login;

/// Resolves the settings, host and mesh requirements and own provisions of `a` on `node`: all an
/// assignment can answer by itself. Problems are pushed; what could not be answered is left out.
pub(super) fn own(
    inventory: &Inventory,
    module: &Module,
    node: &Node,
    a: &Assignment,
    problems: &mut Vec<Problem>,
) -> Result<Answers, InventoryError> {
    let mut answers = Answers::default();
    for e in assignment_settings(inventory, module, &node.name, &a.instance)? {
        let Some(decl) = module.setting(&e.name) else {
            continue;
        };
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
    for r in &module.requires {
        let key = |field: &str| format!("{}.{field}", r.name);
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
                answers
                    .values
                    .insert(key("path"), Value::String(path.clone()));
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
            Need::Port => {
                let port = inventory.port(&node.name, &a.instance, &r.name)?;
                answers.values.insert(key("port"), Value::from(port));
            }
            Need::Fact => {
                answers
                    .values
                    .insert(key("name"), Value::String(node.name.clone()));
                answers
                    .values
                    .insert(key("address"), Value::String(node.address.clone()));
                if let Err(fact) =
                    super::facts::answer(inventory, module, node, &r.name, &mut answers.values)?
                {
                    answers.facts_unknown.get_or_insert(fact);
                }
            }
            Need::Mesh => {
                answers
                    .values
                    .insert(key("instance"), Value::String(a.instance.clone()));
                answers
                    .values
                    .insert(key("node"), Value::String(node.name.clone()));
                answers
                    .values
                    .insert(key("login"), Value::String(login(&a.instance, &node.name)));
            }
            Need::Access { write } => match inventory.placement(&node.name, &a.instance, &r.name)? {
                Some(path) => {
                    answers
                        .values
                        .insert(key("path"), Value::String(path.clone()));
                    answers.access.push(crate::wire::Access {
                        name: r.name.clone(),
                        path,
                        write: *write,
                    });
                }
                None => problems.push(Problem::of(a, format!(
                    "{} on {}: it requires {} access to the operator's data as {}: name the path \
                     with `mesh place {} {} {}=PATH` (the mesh never creates, owns or removes it)",
                    a.instance,
                    node.name,
                    if *write { "read-write" } else { "read" },
                    r.name,
                    a.instance,
                    node.name,
                    r.name
                ))),
            },
            Need::Module { .. } => {}
        }
    }
    fleet(inventory, module, &mut answers.values, |key| {
        module.reads.contains(key)
    })?;
    // a per-consumer provision is answered for each consumer (`provisions`), never here
    for p in module.provides.iter().filter(|p| p.per_consumer.is_none()) {
        for f in &p.fields {
            if f.from_operator {
                let name = format!("{}.{}", p.name, f.field.name);
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
                &node.name,
                &a.instance,
                &p.name,
                f,
                &answers.values,
            )?;
            answers
                .values
                .insert(format!("{}.{}", p.name, f.field.name), value);
        }
    }
    Ok(answers)
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

/// A provision's field as its provider answers it: rendered from the provider's own values, or a
/// secret generated once and kept in the inventory under `provision` (for a per-consumer
/// provision, its name and the consumer's login).
pub(super) fn field_value(
    inventory: &Inventory,
    node: &str,
    instance: &str,
    provision: &str,
    field: &ProvidedField,
    values: &BTreeMap<String, Value>,
) -> Result<Value, InventoryError> {
    let Some(template) = &field.value else {
        return Ok(Value::String(inventory.secret(
            node,
            instance,
            provision,
            &field.field.name,
        )?));
    };
    Ok(match template.lone_reference() {
        Some(name) => values.get(name).cloned().unwrap_or(Value::Null),
        None => Value::String(template.fill(values)),
    })
}

/// One assignment somewhere in the mesh that provides a provision.
struct Candidate {
    assignment: Assignment,
    node: Node,
}

impl Candidate {
    fn named(&self) -> String {
        format!("{}@{}", self.assignment.instance, self.node.name)
    }
}

/// Answers `a`'s module requirements into `answers`, pushing a problem for each that cannot be.
pub(super) fn modules(
    inventory: &Inventory,
    catalogue: &Catalogue,
    module: &Module,
    node: &Node,
    a: &Assignment,
    answers: &mut Answers,
    problems: &mut Vec<Problem>,
) -> Result<(), InventoryError> {
    for r in &module.requires {
        let Need::Module { provision, fields } = &r.need else {
            continue;
        };
        let what = format!(
            "{}: requirement {:?} (provision {provision})",
            a.instance, r.name
        );
        let provider_modules: Vec<&str> = catalogue
            .modules()
            .filter(|m| m.provides.iter().any(|p| &p.name == provision))
            .map(|m| m.name.as_str())
            .collect();
        // every provider in the mesh is read only to name them in a refusal: a fleet of
        // consumers each answered on its own node never reads the fleet once per consumer
        let names = || -> Result<String, InventoryError> {
            let n: Vec<String> = providers(inventory, &provider_modules, None, None)?
                .iter()
                .map(Candidate::named)
                .collect();
            Ok(if n.is_empty() {
                "none is assigned".to_string()
            } else {
                n.join(", ")
            })
        };
        let could = || {
            if provider_modules.is_empty() {
                "no module in the catalogue provides it".to_string()
            } else {
                format!("modules that provide it: {}", provider_modules.join(", "))
            }
        };
        let seat_delivered = catalogue
            .modules()
            .any(|m| m.provides.iter().any(|p| &p.name == provision && p.seat));
        let on = |instance: &str, on_node: &str| -> Result<Option<Candidate>, InventoryError> {
            Ok(
                providers(inventory, &provider_modules, Some(on_node), None)?
                    .into_iter()
                    .find(|c| c.assignment.instance == instance),
            )
        };
        let chosen: Result<Candidate, String> = if let Some((pi, pn)) =
            inventory.pin(&node.name, &a.instance, &r.name)?
        {
            match on(&pi, &pn)? {
                Some(c) => Ok(c),
                None => Err(format!(
                    "{what} is pinned to {pi}@{pn}, which does not provide it (providers: {})",
                    names()?
                )),
            }
        } else if seat_delivered {
            match inventory.seat(provision)? {
                Some(s) => match on(&s.instance, &s.node)? {
                    Some(c) => Ok(c),
                    None => Err(format!(
                        "{what}: the seat {provision} is held by {}@{}, which does not provide it (providers: {})",
                        s.instance,
                        s.node,
                        names()?
                    )),
                },
                None => Err(format!(
                    "{what}: the seat {provision} that delivers it is unheld; it could be held by: {} \
                         (`mesh seat set {provision} INSTANCE@NODE`; {})",
                    names()?,
                    could()
                )),
            }
        } else {
            let mut here = providers(inventory, &provider_modules, Some(&node.name), None)?;
            // two anywhere are enough to know there is no only one
            let mut anywhere = if here.is_empty() {
                providers(inventory, &provider_modules, None, Some(2))?
            } else {
                Vec::new()
            };
            match (here.len(), anywhere.len()) {
                (1, _) => Ok(here.remove(0)),
                (2.., _) => Err(format!(
                    "{what}: {} provide it on {}; pin one with `mesh assign {} {} --as {} --pin {}=INSTANCE@NODE`",
                    here.iter()
                        .map(Candidate::named)
                        .collect::<Vec<_>>()
                        .join(" and "),
                    node.name,
                    module.name,
                    node.name,
                    a.instance,
                    r.name
                )),
                (_, 1) => Ok(anywhere.remove(0)),
                (_, 0) => Err(format!("{what}: no provider in the mesh; {}", could())),
                _ => Err(format!(
                    "{what}: several providers ({}) and none on {}; pin one with `mesh assign {} {} --as {} --pin {}=INSTANCE@NODE`",
                    names()?,
                    node.name,
                    module.name,
                    node.name,
                    a.instance,
                    r.name
                )),
            }
        };
        let provider = match chosen {
            Ok(c) => c,
            Err(problem) => {
                problems.push(Problem::of(a, problem).field(r.name.clone()));
                continue;
            }
        };
        let Ok(provider_module) = catalogue.module(&provider.assignment.module) else {
            continue;
        };
        let Some(provided) = provider_module
            .provides
            .iter()
            .find(|p| &p.name == provision)
        else {
            continue;
        };
        // the provider's own answers, on its own node. A provider that cannot answer (an operator
        // value of its own unset) leaves this requirement unresolved too, saying why, rather than
        // answering with nothing.
        let mut theirs_problems = Vec::new();
        let theirs = own(
            inventory,
            provider_module,
            &provider.node,
            &provider.assignment,
            &mut theirs_problems,
        )?;
        if !theirs_problems.is_empty() {
            problems.push(Problem::of(
                a,
                format!(
                    "{what}: its provider {} cannot answer until its own problems are fixed: {}",
                    provider.named(),
                    super::problem::joined(&theirs_problems, "; ")
                ),
            ));
            continue;
        }
        let theirs = match provided.per_consumer {
            Some(_) => super::provisions::answer_for(
                inventory,
                (&provider.assignment.instance, &provider.node.name),
                provided,
                &theirs.values,
                &super::provisions::ConsumerId::of(&a.instance, &node.name),
            )?,
            None => theirs.values,
        };
        for f in fields {
            let answered = provided.fields.iter().find(|p| p.field.name == f.name);
            match answered {
                Some(p) if p.field.kind == f.kind && p.field.secret == f.secret => {
                    // a consumer that narrowed a directory to its owner
                    let me = login(&a.instance, &node.name);
                    if let Err(m) =
                        owner::answers(f.directory.as_ref(), p.field.directory.as_ref(), &me)
                    {
                        problems.push(Problem::of(
                            a,
                            format!(
                                "{what}: {} answers the field {:?} with {m} as {} asks",
                                provider.named(),
                                f.name,
                                module.name
                            ),
                        ));
                        continue;
                    }
                    match theirs.get(&format!("{provision}.{}", f.name)) {
                        // a consumer that narrowed its contract: never the value, only its want
                        Some(Value::String(v))
                            if f.min_length.is_some_and(|n| v.chars().count() < n) =>
                        {
                            problems.push(Problem::of(a, format!(
                                "{what}: {} answers the field {:?} with fewer than the {} characters {} asks for",
                                provider.named(),
                                f.name,
                                f.min_length.unwrap_or_default(),
                                module.name
                            )));
                        }
                        Some(v) if f.kind.admits(v) => {
                            answers
                                .values
                                .insert(format!("{}.{}", r.name, f.name), v.clone());
                        }
                        // never the value itself: the field may be secret
                        _ => problems.push(Problem::of(a, format!(
                            "{what}: {} answers the field {:?} with no {} value (module {} must make it one)",
                            provider.named(),
                            f.name,
                            f.kind.as_str(),
                            provider_module.name
                        ))),
                    }
                }
                Some(p) => problems.push(Problem::of(
                    a,
                    format!(
                        "{what}: {}'s field {:?} is {}{}, the contract wants {}{}",
                        provider.named(),
                        f.name,
                        p.field.kind.as_str(),
                        if p.field.secret { " (secret)" } else { "" },
                        f.kind.as_str(),
                        if f.secret { " (secret)" } else { "" }
                    ),
                )),
                None => problems.push(Problem::of(
                    a,
                    format!(
                        "{what}: {} does not answer the field {:?}",
                        provider.named(),
                        f.name
                    ),
                )),
            }
        }
        answers.providers.insert(r.name.clone(), provider.named());
    }
    Ok(())
}

/// The assignments of `modules` (the providers of one provision): on `node` only when one is
/// named, at most `limit`.
fn providers(
    inventory: &Inventory,
    modules: &[&str],
    node: Option<&str>,
    limit: Option<usize>,
) -> Result<Vec<Candidate>, InventoryError> {
    Ok(inventory
        .assignments_of(modules, node, limit)?
        .into_iter()
        .map(|(assignment, node)| Candidate { assignment, node })
        .collect())
}
