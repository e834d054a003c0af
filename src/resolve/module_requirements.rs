//! Module requirements answered: each from the provider chosen for it ([`super::provider`]),
//! with the provider's own answers on its own node (a per-consumer provision's made for this
//! consumer alone), field by field as the contract says, or a problem for each field that
//! cannot be.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::catalogue::{Catalogue, Field, Module, Need, Provision, owner};
use crate::inventory::{Assignment, Inventory, InventoryError, Node};

use super::Problem;
use super::provider::{Asked, Candidate, choose};
use super::requirements::{Answers, login, own};

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
        let asked = Asked {
            module,
            node,
            a,
            requirement: &r.name,
            provision,
            what: &what,
        };
        let provider = match choose(inventory, catalogue, &asked)? {
            Ok(c) => c,
            Err(problem) => {
                problems.push(Problem::of(a, problem.to_string()).field(r.name.clone()));
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
        let from = From {
            provider: &provider,
            module: provider_module,
            provided,
        };
        let Some(theirs) = theirs(inventory, catalogue, &asked, &from, answers, problems)? else {
            continue;
        };
        for f in fields {
            if let Some(v) = field(&asked, &from, f, &theirs, problems) {
                answers.values.insert(format!("{}.{}", r.name, f.name), v);
            }
        }
        answers.providers.insert(r.name.clone(), provider.named());
    }
    Ok(())
}

/// The provider a module requirement resolved to, and what it provides.
struct From<'a> {
    provider: &'a Candidate,
    module: &'a Module,
    provided: &'a Provision,
}

/// The provider's own answers, on its own node, as it answers the consumer of `asked` (a
/// per-consumer provision's fields made for it alone). A provider that cannot answer (an operator
/// value of its own unset) leaves the requirement unresolved too, saying why, rather than
/// answering with nothing. What it lacks allocated is the consumer's to name as well.
fn theirs(
    inventory: &Inventory,
    catalogue: &Catalogue,
    asked: &Asked<'_>,
    from: &From<'_>,
    answers: &mut Answers,
    problems: &mut Vec<Problem>,
) -> Result<Option<BTreeMap<String, Value>>, InventoryError> {
    let (a, provider) = (asked.a, from.provider);
    let mut theirs_problems = Vec::new();
    let mut theirs = own(
        inventory,
        catalogue,
        from.module,
        &provider.node,
        &provider.assignment,
        &mut theirs_problems,
    )?;
    answers.unallocated.append(&mut theirs.unallocated);
    if !theirs_problems.is_empty() {
        problems.push(Problem::of(
            a,
            format!(
                "{}: its provider {} cannot answer until its own problems are fixed: {}",
                asked.what,
                provider.named(),
                super::problem::joined(&theirs_problems, "; ")
            ),
        ));
        return Ok(None);
    }
    Ok(Some(match from.provided.per_consumer {
        Some(_) => super::provisions::answer_for(
            inventory,
            (&provider.assignment.instance, &provider.node.name),
            from.provided,
            &theirs.values,
            &super::provisions::ConsumerId::of(&a.instance, &asked.node.name),
            &mut answers.unallocated,
        )?,
        None => theirs.values,
    }))
}

/// The value the provider answers the contract's field `f` with, or the problem with it (`None`).
fn field(
    asked: &Asked<'_>,
    from: &From<'_>,
    f: &Field,
    theirs: &BTreeMap<String, Value>,
    problems: &mut Vec<Problem>,
) -> Option<Value> {
    let (a, what, named) = (asked.a, asked.what, from.provider.named());
    let answered = from.provided.fields.iter().find(|p| p.field.name == f.name);
    let problem = match answered {
        Some(p) if p.field.kind == f.kind && p.field.secret == f.secret => {
            // a consumer that narrowed a directory to its owner
            let me = login(&a.instance, &asked.node.name);
            match owner::answers(f.directory.as_ref(), p.field.directory.as_ref(), &me) {
                Err(m) => format!(
                    "{what}: {named} answers the field {:?} with {m} as {} asks",
                    f.name, asked.module.name
                ),
                Ok(()) => {
                    match valued(f, theirs.get(&format!("{}.{}", from.provided.name, f.name))) {
                        Ok(v) => return Some(v.clone()),
                        Err(Short) => format!(
                            "{what}: {named} answers the field {:?} with fewer than the {} characters {} asks for",
                            f.name,
                            f.min_length.unwrap_or_default(),
                            asked.module.name
                        ),
                        // never the value itself: the field may be secret
                        Err(Untyped) => format!(
                            "{what}: {named} answers the field {:?} with no {} value (module {} must make it one)",
                            f.name,
                            f.kind.as_str(),
                            from.module.name
                        ),
                    }
                }
            }
        }
        Some(p) => format!(
            "{what}: {named}'s field {:?} is {}{}, the contract wants {}{}",
            f.name,
            p.field.kind.as_str(),
            secret(p.field.secret),
            f.kind.as_str(),
            secret(f.secret)
        ),
        None => format!("{what}: {named} does not answer the field {:?}", f.name),
    };
    problems.push(Problem::of(a, problem));
    None
}

fn secret(is: bool) -> &'static str {
    if is { " (secret)" } else { "" }
}

/// Why a provider's value does not do for a field of the contract.
enum Wrong {
    /// A string shorter than a consumer that narrowed its contract asks for.
    Short,
    /// Missing, or not of the field's type.
    Untyped,
}
use Wrong::{Short, Untyped};

/// `value` as field `f` of the contract takes it: of its type, as long as a consumer that
/// narrowed its contract asks (only its want is said, never the value).
fn valued<'v>(f: &Field, value: Option<&'v Value>) -> Result<&'v Value, Wrong> {
    match value {
        Some(Value::String(v)) if f.min_length.is_some_and(|n| v.chars().count() < n) => Err(Short),
        Some(v) if f.kind.admits(v) => Ok(v),
        _ => Err(Untyped),
    }
}
