//! Which fields of a resource differ between two sends, as a plan's line names them (`~ ...
//! (content, mode)`): each kind compares its own (`wire::SpecKind::fields_differing`), then what
//! every kind with units shares.

use crate::wire::Resource;

/// The fields that differ between `old` and `new`, in the order a plan shows them; `source`
/// alone when nothing on the machine moves but what the resource is made from does.
pub(super) fn differing_fields(old: &Resource, new: &Resource) -> Vec<String> {
    let mut out = new.spec.differing_from(&old.spec);
    if let (Some(a), Some(b)) = (old.spec.costing(), new.spec.costing())
        && (a.units != b.units || a.cost != b.cost)
    {
        out.push("units".to_string());
    }
    if out.is_empty() && (old.spec.costing() != new.spec.costing() || old.module != new.module) {
        // nothing on the machine moves, but what it is made from does: it is sent again
        out.push("source".to_string());
    }
    out
}
