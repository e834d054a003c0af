//! What a resource puts on a machine, as text a plan's diff can show (never a secret). Each kind
//! says it in its own wire file (`wire::SpecKind::plan_text`).

use crate::wire::Spec;

/// What a resource puts on the machine, as text a diff can show: a file's content, the keys a
/// keys resource owns (`key = value`, one a line), a service's wanted state.
pub fn content(spec: &Spec) -> String {
    spec.plan_text()
}
