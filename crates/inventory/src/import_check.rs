//! What an import refuses, found before anything is written: every entry goes through the same
//! check as the command that would store it ([`super::validate`]), and the document is refused
//! naming the entry and field (`nodes[3].root: …`).

use std::collections::{BTreeMap, BTreeSet};

use super::export::{Document, DocumentError, holder, port_key};
use super::nodes::valid_name;
use super::validate::{Invalid, PortError, WordError, check_place, check_port, check_word};
use super::{Node, NodeMachine};

/// Makes the refusal of one entry's field, naming the file.
type Refuse<'a> = dyn Fn(String, String) -> DocumentError + 'a;

impl Document {
    /// Refuses the first entry a command would refuse, or two nodes on one machine.
    pub(super) fn check(
        &self,
        file: &str,
        config: &dyn super::Machines,
    ) -> Result<(), DocumentError> {
        let invalid = |what: String, reason: String| DocumentError::Invalid {
            file: file.to_string(),
            what,
            reason,
        };
        let names = self.check_nodes(config, &invalid)?;
        self.check_assignments(&names, &invalid)?;
        self.check_layers(&names, &invalid)?;
        self.check_seats(&names, &invalid)
    }

    /// Each node as `mesh node add` would take it, each named, reaching a machine and keyed
    /// once; the names of the file's nodes.
    fn check_nodes(
        &self,
        config: &dyn super::Machines,
        invalid: &Refuse<'_>,
    ) -> Result<BTreeSet<&str>, DocumentError> {
        let mut names = BTreeSet::new();
        let mut machines: BTreeMap<NodeMachine, &str> = BTreeMap::new();
        let mut keys: BTreeMap<String, &str> = BTreeMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let at = |field: &str| format!("nodes[{i}].{field}");
            let node = Node::from(n);
            node.validate()
                .map_err(|Invalid { field, reason }| invalid(at(field), reason.to_string()))?;
            if !names.insert(n.name.as_str()) {
                return Err(invalid(at("name"), format!("{} is named twice", n.name)));
            }
            let machine = config.machine_of(&node);
            if let Some(other) = machines.insert(machine.clone(), n.name.as_str()) {
                return Err(invalid(
                    at("address"),
                    format!(
                        "{} reaches {machine}, as the node {other} does; one machine is one node",
                        n.name
                    ),
                ));
            }
            if let Some(fingerprint) = node.host_key_fingerprint()
                && let Some(other) = keys.insert(fingerprint, n.name.as_str())
            {
                return Err(invalid(
                    at("host-key"),
                    format!("{other} has this host key: one machine is one node"),
                ));
            }
            if let Some(tag) = n.tags.iter().find(|t| !valid_name(t)) {
                return Err(invalid(
                    at("tags"),
                    format!(
                        "{tag:?} is not a tag: letters, digits, '-', '_' and '.', starting with a letter"
                    ),
                ));
            }
            generations(n).map_err(|(field, reason)| invalid(at(field), reason))?;
            ports(n).map_err(|reason| invalid(at("ports"), reason.to_string()))?;
        }
        Ok(names)
    }

    /// Each assignment on a node of the file, once, with its pins and placements well formed.
    fn check_assignments(
        &self,
        names: &BTreeSet<&str>,
        invalid: &Refuse<'_>,
    ) -> Result<(), DocumentError> {
        let mut assigned = BTreeSet::new();
        for (i, a) in self.assignments.iter().enumerate() {
            let at = |field: &str| format!("assignments[{i}].{field}");
            if !names.contains(a.node.as_str()) {
                return Err(invalid(
                    at("node"),
                    format!("{:?} is not among the file's nodes", a.node),
                ));
            }
            check_word("an instance", &a.instance)
                .map_err(|e| invalid(at("instance"), e.to_string()))?;
            check_word("a module", &a.module).map_err(|e| invalid(at("module"), e.to_string()))?;
            if !assigned.insert((a.node.as_str(), a.instance.as_str())) {
                return Err(invalid(
                    at("instance"),
                    format!("{} on {} is listed twice", a.instance, a.node),
                ));
            }
            for (requirement, pin) in &a.pins {
                let ok = check_word("a requirement", requirement)
                    .map_err(Fault::from)
                    .and_then(|()| match holder(pin) {
                        Some((instance, node)) if valid_name(node) => {
                            Ok(check_word("an instance", instance)?)
                        }
                        _ => Err(Fault::NotAHolder(pin.clone())),
                    });
                ok.map_err(|e| invalid(at("pins"), e.to_string()))?;
            }
            for (name, path) in &a.placements {
                let ok = check_word("a directory requirement", name)
                    .map_err(Fault::from)
                    .and_then(|()| {
                        check_place(path).map_err(|why| Fault::Place {
                            name: name.clone(),
                            path: path.clone(),
                            why,
                        })
                    });
                ok.map_err(|e| invalid(at("placements"), e.to_string()))?;
            }
        }
        Ok(())
    }

    /// Each layer a module's or an instance's, a node's of the file or a tag's (not both),
    /// naming settings by words.
    fn check_layers(
        &self,
        names: &BTreeSet<&str>,
        invalid: &Refuse<'_>,
    ) -> Result<(), DocumentError> {
        for (i, l) in self.layers.iter().enumerate() {
            let at = |field: &str| format!("layers[{i}].{field}");
            let what = if l.node.is_some() {
                "an instance"
            } else {
                "a module"
            };
            check_word(what, &l.module).map_err(|e| invalid(at("module"), e.to_string()))?;
            if let Some(tag) = &l.tag {
                if l.node.is_some() {
                    return Err(invalid(
                        at("tag"),
                        "a layer is a node's or a tag's, not both".into(),
                    ));
                }
                if !valid_name(tag) {
                    return Err(invalid(at("tag"), format!("{tag:?} cannot be a tag")));
                }
            }
            if let Some(node) = &l.node
                && !names.contains(node.as_str())
            {
                return Err(invalid(
                    at("node"),
                    format!("{node:?} is not among the file's nodes"),
                ));
            }
            if let Some(key) = l
                .values
                .keys()
                .find(|k| check_word("a setting", k).is_err())
            {
                return Err(invalid(
                    at("values"),
                    format!("{key:?} cannot name a setting"),
                ));
            }
        }
        Ok(())
    }

    /// Each seat named by a word, held by an instance on a node of the file.
    fn check_seats(
        &self,
        names: &BTreeSet<&str>,
        invalid: &Refuse<'_>,
    ) -> Result<(), DocumentError> {
        for (i, s) in self.seats.iter().enumerate() {
            let at = |field: &str| format!("seats[{i}].{field}");
            check_word("a seat", &s.seat).map_err(|e| invalid(at("seat"), e.to_string()))?;
            check_word("an instance", &s.instance)
                .map_err(|e| invalid(at("instance"), e.to_string()))?;
            if !names.contains(s.node.as_str()) {
                return Err(invalid(
                    at("node"),
                    format!("{:?} is not among the file's nodes", s.node),
                ));
            }
        }
        Ok(())
    }
}

/// A node's ports as a document says them: each key INSTANCE.NAME, each port one the host can
/// give, and each given once (two services would fight over it). Else why.
fn ports(n: &super::export::NodeEntry) -> Result<(), Fault> {
    let mut given: BTreeMap<u16, &str> = BTreeMap::new();
    for (key, port) in &n.ports {
        if let Some(other) = given.insert(*port, key) {
            return Err(Fault::PortTwice {
                port: *port,
                other: other.to_string(),
                key: key.clone(),
            });
        }
        let (instance, name) = port_key(key).ok_or_else(|| Fault::NotAPortKey(key.clone()))?;
        check_word("an instance", instance)?;
        check_word("a requirement", name)?;
        check_port(*port)?;
    }
    Ok(())
}

/// Why an entry's pin, placement or port is refused, beside the checks a command makes.
#[derive(Debug, thiserror::Error)]
enum Fault {
    #[error(transparent)]
    Word(#[from] WordError),
    #[error(transparent)]
    Port(#[from] PortError),
    #[error("{0:?} is not INSTANCE@NODE")]
    NotAHolder(String),
    #[error("{name}={path:?} cannot be a directory: {why}")]
    Place {
        name: String,
        path: String,
        why: mesh_wire::path::PathError,
    },
    #[error("{port} is given to both {other} and {key}: the host gives a port once")]
    PortTwice {
        port: u16,
        other: String,
        key: String,
    },
    #[error("{0:?} is not INSTANCE.NAME")]
    NotAPortKey(String),
}

/// A node's generations as a document says them: one a push could have made, and a hold at one
/// (never 0, the generation of no push). Else the field and why.
fn generations(n: &super::export::NodeEntry) -> Result<(), (&'static str, String)> {
    let possible = mesh_wire::Generation::possible;
    if let Some(g) = n.generation.as_ref().filter(|g| !possible(g.number)) {
        return Err((
            "generation.number",
            format!(
                "{} is no generation a push makes (at most {})",
                g.number,
                mesh_wire::MAX_GENERATION
            ),
        ));
    }
    match n.held_at.as_ref().map(|h| h.generation) {
        Some(0) => Err((
            "held-at.generation",
            "0 is no generation a rollback holds at (they are numbered from 1)".into(),
        )),
        Some(g) if !possible(g) => Err((
            "held-at.generation",
            format!(
                "{g} is no generation a rollback holds at (at most {})",
                mesh_wire::MAX_GENERATION
            ),
        )),
        _ => Ok(()),
    }
}
