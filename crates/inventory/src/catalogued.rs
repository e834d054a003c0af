//! The checks of what the inventory stores that only the catalogue can decide: a setting's key
//! and value, a placement, a pin, a seat. One definition of each, for the commands that store
//! them (`settings set`, `place`, `assign --pin`, `seat set`) and for `inventory import` alike,
//! so a document can never store what the command would refuse.

use serde_json::Value;

use super::validate::{check_place, system_directory};
use mesh_catalogue::{Module, Need, Setting};

/// Whose a node's layer named `name` is, given what runs on `node` (instance, module): the
/// instance's of that name (its module returned); refused when the module of that name runs there
/// only under other names (which one is meant?); else `None`: the module's of that name.
pub fn node_layer<'a>(
    name: &str,
    node: &str,
    here: &'a [(String, String)],
) -> Result<Option<&'a str>, String> {
    if let Some((_, module)) = here.iter().find(|(instance, _)| instance == name) {
        return Ok(Some(module));
    }
    let others: Vec<&str> = here
        .iter()
        .filter(|(_, module)| module == name)
        .map(|(instance, _)| instance.as_str())
        .collect();
    match others.first() {
        Some(first) => Err(format!(
            "{name} runs on {node} as {}; a node's layer is an instance's: name one, e.g. \
             `mesh settings … {first} --node {node}`",
            others.join(" and ")
        )),
        None => Ok(None),
    }
}

/// The setting `key` that `m` declares, or why there is none (naming the declared ones).
pub fn declared<'m>(m: &'m Module, key: &str) -> Result<&'m Setting, String> {
    m.setting(key).ok_or_else(|| {
        format!(
            "{} declares no setting {key:?} (declared: {})",
            m.name,
            m.setting_names()
        )
    })
}

/// A value a layer of `m` may hold for `key`: a declared setting, of its type, with no control
/// character anywhere in it (the value is shown as JSON, so one in it shows escaped).
pub fn check_value(m: &Module, key: &str, value: &Value) -> Result<(), String> {
    declared(m, key)?
        .check(value)
        .map_err(|expected| format!("{}: {key} takes {expected}, not {value}", m.name))
}

/// Where the requirement `name` of `m` may be placed: it is a directory the host makes or the
/// operator's data the module is given access to, `path` is a machine's directory (no trailing
/// `/`), and a directory the host makes (and gives to the module's owner) is never one of the
/// system's own or shared ones, nor inside one.
pub fn check_placement(m: &Module, name: &str, path: &str) -> Result<(), String> {
    let placeable = |need: &Need| matches!(need, Need::Directory { .. } | Need::Access { .. });
    let Some(need) = m
        .requires
        .iter()
        .find(|r| r.name == name && placeable(&r.need))
        .map(|r| &r.need)
    else {
        let dirs: Vec<&str> = m
            .requires
            .iter()
            .filter(|r| placeable(&r.need))
            .map(|r| r.name.as_str())
            .collect();
        return Err(format!(
            "{} requires no directory or access {name:?} (its directories and accesses: {})",
            m.name,
            if dirs.is_empty() {
                "none".to_string()
            } else {
                dirs.join(", ")
            }
        ));
    };
    check_place(path)
        .map_err(|e| format!("{name}={path:?} cannot be {}'s directory: {e}", m.name))?;
    if let Need::Directory { owner, group, mode } = need
        && let Some(why) = system_directory(path)
    {
        return Err(format!(
            "{name}={path:?} cannot be {}'s directory: {why}, and the push would give it to \
             {owner}:{group} with mode {mode:04o}; place it where nothing is yet (the host makes \
             it, e.g. /srv/{}/{name})",
            m.name, m.name
        ));
    }
    Ok(())
}

/// The provision a pin of `m`'s requirement `req` answers: `req` must be a module requirement.
pub fn pinned_provision<'m>(m: &'m Module, req: &str) -> Result<&'m str, String> {
    match m.requires.iter().find(|r| r.name == req).map(|r| &r.need) {
        Some(Need::Module { provision, .. }) => Ok(provision),
        _ => Err(format!(
            "{} has no module requirement {req:?} to pin",
            m.name
        )),
    }
}

/// Whether `provider` (`instance@node`, running `module`) provides `provision`.
pub fn check_provides(provider: &str, module: &Module, provision: &str) -> Result<(), String> {
    if module.provides.iter().any(|p| p.name == provision) {
        Ok(())
    } else {
        Err(format!(
            "{provider} ({}) does not provide {provision}",
            module.name
        ))
    }
}

/// Whether `holder` (`instance@node`, running `module`) can hold the seat `seat`.
pub fn check_seat(seat: &str, holder: &str, module: &Module) -> Result<(), String> {
    if module.provides.iter().any(|p| p.name == seat && p.seat) {
        Ok(())
    } else {
        Err(format!(
            "{holder} ({}) cannot hold the seat {seat}: it does not provide {seat} as a seat",
            module.name
        ))
    }
}
