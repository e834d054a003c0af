//! What an import refuses that only the catalogue can tell: an assignment of a module there is
//! none of, a pin, a placement, a seat or a settings value the command that stores it would
//! refuse ([`super::catalogued`], the same checks), named by entry and field
//! (`layers[0].values: …`).

use std::collections::HashMap;

use super::catalogued::{
    CheckError, check_placement, check_provides, check_seat, check_value, node_layer,
    pinned_provision,
};
use super::export::{Document, DocumentError, holder};
use mesh_catalogue::{Catalogue, Module};

/// Why an entry of the file is refused: it names a provider the file does not have, or the
/// catalogue refuses it.
#[derive(Debug, thiserror::Error)]
enum EntryError {
    #[error("{0:?} is not INSTANCE@NODE")]
    NotAHolder(String),
    #[error(
        "nothing runs on {node} as {instance:?} in the file; a requirement is answered by an assignment"
    )]
    NothingRuns { node: String, instance: String },
    #[error(transparent)]
    Check(#[from] CheckError),
}

impl Document {
    /// Refuses the first entry the catalogue says a command would refuse.
    pub fn check_catalogue(&self, file: &str, cat: &Catalogue) -> Result<(), DocumentError> {
        let invalid = |what: String, reason: String| DocumentError::Invalid {
            file: file.to_string(),
            what,
            reason,
        };
        // what runs where, as the file says: (node, instance) → its module
        let mut runs: HashMap<(&str, &str), &Module> = HashMap::new();
        for (i, a) in self.assignments.iter().enumerate() {
            let m = cat
                .module(&a.module)
                .map_err(|e| invalid(format!("assignments[{i}].module"), e.to_string()))?;
            runs.insert((a.node.as_str(), a.instance.as_str()), m);
        }
        let mut here: HashMap<&str, Vec<(String, String)>> = HashMap::new();
        for a in &self.assignments {
            here.entry(a.node.as_str())
                .or_default()
                .push((a.instance.clone(), a.module.clone()));
        }
        let provider = |text: &str| -> Result<&Module, EntryError> {
            let (instance, node) =
                holder(text).ok_or_else(|| EntryError::NotAHolder(text.to_string()))?;
            runs.get(&(node, instance))
                .copied()
                .ok_or_else(|| EntryError::NothingRuns {
                    node: node.to_string(),
                    instance: instance.to_string(),
                })
        };
        for (i, a) in self.assignments.iter().enumerate() {
            let at = |field: &str| format!("assignments[{i}].{field}");
            let m = runs[&(a.node.as_str(), a.instance.as_str())];
            for (req, pin) in &a.pins {
                let ok = pinned_provision(m, req)
                    .map_err(EntryError::from)
                    .and_then(|provision| Ok(check_provides(pin, provider(pin)?, provision)?));
                ok.map_err(|e| invalid(at("pins"), e.to_string()))?;
            }
            for (name, path) in &a.placements {
                check_placement(m, name, path)
                    .map_err(|e| invalid(at("placements"), e.to_string()))?;
            }
        }
        for (i, l) in self.layers.iter().enumerate() {
            let at = |field: &str| format!("layers[{i}].{field}");
            // a node's layer is an instance's there (else the module's of that name), as
            // `settings set --node` reads it
            let module = match &l.node {
                Some(node) => node_layer(
                    &l.module,
                    node,
                    here.get(node.as_str()).map_or(&[], Vec::as_slice),
                )
                .map_err(|e| invalid(at("module"), e.to_string()))?,
                None => None,
            };
            let m = cat
                .module(module.unwrap_or(&l.module))
                .map_err(|e| invalid(at("module"), e.to_string()))?;
            for (key, value) in &l.values {
                check_value(m, key, value).map_err(|e| invalid(at("values"), e.to_string()))?;
            }
        }
        for (i, s) in self.seats.iter().enumerate() {
            let label = format!("{}@{}", s.instance, s.node);
            let ok = provider(&label).and_then(|m| Ok(check_seat(&s.seat, &label, m)?));
            ok.map_err(|e| invalid(format!("seats[{i}].instance"), e.to_string()))?;
        }
        Ok(())
    }
}
