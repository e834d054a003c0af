//! The checks of what the inventory stores that only the catalogue can decide: a setting's key
//! and value, a placement, a pin, a seat. One definition of each, for the commands that store
//! them (`settings set`, `place`, `assign --pin`, `seat set`) and for `inventory import` alike,
//! so a document can never store what the command would refuse.

use serde_json::Value;

use super::validate::{SystemDirectory, check_place, system_directory};
use mesh_catalogue::{Module, Need, Setting, ValueError};
use mesh_wire::path::PathError;

/// What the catalogue refuses of what the inventory would store, naming the module, the key,
/// requirement or seat, and the value refused. The callers add where it came from (the command,
/// or the document's entry and field).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    /// A node's layer named by a module that runs there only as other instances.
    #[error(
        "{name} runs on {node} as {}; a node's layer is an instance's: name one, e.g. \
         `mesh settings … {} --node {node}`",
        instances.join(" and "),
        instances.first().map_or("", String::as_str)
    )]
    Ambiguous {
        name: String,
        node: String,
        instances: Vec<String>,
    },
    #[error("{module} declares no setting {key:?} (declared: {declared})")]
    NoSetting {
        module: String,
        key: String,
        declared: String,
    },
    #[error("{module}: {key} takes {why}, not {value}")]
    Value {
        module: String,
        key: String,
        /// Boxed: a JSON value would make every `Result` of these checks large.
        value: Box<Value>,
        why: ValueError,
    },
    #[error(
        "{module} requires no directory or access {name:?} (its directories and accesses: {})",
        if placeable.is_empty() { "none".to_string() } else { placeable.join(", ") }
    )]
    NotPlaceable {
        module: String,
        name: String,
        placeable: Vec<String>,
    },
    #[error("{name}={path:?} cannot be {module}'s directory: {why}")]
    Place {
        module: String,
        name: String,
        path: String,
        why: PathError,
    },
    #[error(
        "{name}={path:?} cannot be {module}'s directory: {why}, and the push would give it to \
         {given}; place it where nothing is yet (the host makes it, e.g. /srv/{module}/{name})"
    )]
    SystemPlace {
        module: String,
        name: String,
        path: String,
        why: SystemDirectory,
        given: Box<Given>,
    },
    #[error("{module} has no module requirement {requirement:?} to pin")]
    NoPin { module: String, requirement: String },
    #[error("{provider} ({module}) does not provide {provision}")]
    NotProvided {
        provider: String,
        module: String,
        provision: String,
    },
    #[error(
        "{holder} ({module}) cannot hold the seat {seat}: it does not provide {seat} as a seat"
    )]
    NoSeat {
        holder: String,
        module: String,
        seat: String,
    },
}

/// Who a directory the host makes is given to, and its mode (boxed in [`CheckError`]: rarely
/// made, and it keeps every `Result` of these checks small).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{owner}:{group} with mode {mode:04o}")]
pub struct Given {
    pub owner: String,
    pub group: String,
    pub mode: u32,
}

/// Whose a node's layer named `name` is, given what runs on `node` (instance, module): the
/// instance's of that name (its module returned); refused when the module of that name runs there
/// only under other names (which one is meant?); else `None`: the module's of that name.
pub fn node_layer<'a>(
    name: &str,
    node: &str,
    here: &'a [(String, String)],
) -> Result<Option<&'a str>, CheckError> {
    if let Some((_, module)) = here.iter().find(|(instance, _)| instance == name) {
        return Ok(Some(module));
    }
    let others: Vec<String> = here
        .iter()
        .filter(|(_, module)| module == name)
        .map(|(instance, _)| instance.clone())
        .collect();
    if others.is_empty() {
        Ok(None)
    } else {
        Err(CheckError::Ambiguous {
            name: name.to_string(),
            node: node.to_string(),
            instances: others,
        })
    }
}

/// The setting `key` that `m` declares, or why there is none (naming the declared ones).
pub fn declared<'m>(m: &'m Module, key: &str) -> Result<&'m Setting, CheckError> {
    m.setting(key).ok_or_else(|| CheckError::NoSetting {
        module: m.name.clone(),
        key: key.to_string(),
        declared: m.setting_names(),
    })
}

/// A value a layer of `m` may hold for `key`: a declared setting, of its type, with no control
/// character anywhere in it (the value is shown as JSON, so one in it shows escaped).
pub fn check_value(m: &Module, key: &str, value: &Value) -> Result<(), CheckError> {
    declared(m, key)?
        .check(value)
        .map_err(|why| CheckError::Value {
            module: m.name.clone(),
            key: key.to_string(),
            value: Box::new(value.clone()),
            why,
        })
}

/// Where the requirement `name` of `m` may be placed: it is a directory the host makes or the
/// operator's data the module is given access to, `path` is a machine's directory (no trailing
/// `/`), and a directory the host makes (and gives to the module's owner) is never one of the
/// system's own or shared ones, nor inside one.
pub fn check_placement(m: &Module, name: &str, path: &str) -> Result<(), CheckError> {
    let placeable = |need: &Need| matches!(need, Need::Directory { .. } | Need::Access { .. });
    let Some(need) = m
        .requires
        .iter()
        .find(|r| r.name == name && placeable(&r.need))
        .map(|r| &r.need)
    else {
        return Err(CheckError::NotPlaceable {
            module: m.name.clone(),
            name: name.to_string(),
            placeable: m
                .requires
                .iter()
                .filter(|r| placeable(&r.need))
                .map(|r| r.name.clone())
                .collect(),
        });
    };
    check_place(path).map_err(|why| CheckError::Place {
        module: m.name.clone(),
        name: name.to_string(),
        path: path.to_string(),
        why,
    })?;
    if let Need::Directory { owner, group, mode } = need
        && let Some(why) = system_directory(path)
    {
        return Err(CheckError::SystemPlace {
            module: m.name.clone(),
            name: name.to_string(),
            path: path.to_string(),
            why,
            given: Box::new(Given {
                owner: owner.to_string(),
                group: group.to_string(),
                mode: *mode,
            }),
        });
    }
    Ok(())
}

/// The provision a pin of `m`'s requirement `req` answers: `req` must be a module requirement.
pub fn pinned_provision<'m>(m: &'m Module, req: &str) -> Result<&'m str, CheckError> {
    match m.requires.iter().find(|r| r.name == req).map(|r| &r.need) {
        Some(Need::Module { provision, .. }) => Ok(provision),
        _ => Err(CheckError::NoPin {
            module: m.name.clone(),
            requirement: req.to_string(),
        }),
    }
}

/// Whether `provider` (`instance@node`, running `module`) provides `provision`.
pub fn check_provides(provider: &str, module: &Module, provision: &str) -> Result<(), CheckError> {
    if module.provides.iter().any(|p| p.name == provision) {
        Ok(())
    } else {
        Err(CheckError::NotProvided {
            provider: provider.to_string(),
            module: module.name.clone(),
            provision: provision.to_string(),
        })
    }
}

/// Whether `holder` (`instance@node`, running `module`) can hold the seat `seat`.
pub fn check_seat(seat: &str, holder: &str, module: &Module) -> Result<(), CheckError> {
    if module.provides.iter().any(|p| p.name == seat && p.seat) {
        Ok(())
    } else {
        Err(CheckError::NoSeat {
            holder: holder.to_string(),
            module: module.name.clone(),
            seat: seat.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layer_named_by_a_module_running_as_other_instances_names_them() {
        let here = [
            ("web-a".to_string(), "web".to_string()),
            ("web-b".to_string(), "web".to_string()),
        ];
        assert_eq!(node_layer("web-a", "n1", &here), Ok(Some("web")));
        assert_eq!(node_layer("db", "n1", &here), Ok(None));
        let e = node_layer("web", "n1", &here).unwrap_err();
        assert!(matches!(&e, CheckError::Ambiguous { instances, .. } if instances.len() == 2));
        assert_eq!(
            e.to_string(),
            "web runs on n1 as web-a and web-b; a node's layer is an instance's: name one, e.g. \
             `mesh settings … web-a --node n1`"
        );
    }
}
