//! The releases the built-in modules are proven on: Debian 12 (bookworm) and 13 (trixie), every
//! built-in module pushed, checked clean and undeclared on each by the project's own lab tests.
//! A built-in module assigned to a machine whose facts say another system is refused at plan,
//! naming what the machine runs, rather than pushed to fail half-way there. A module from the
//! operator's own catalogue folder (a copy of a built-in one too) goes wherever it is assigned:
//! its author vouches for it.

use crate::catalogue::Module;
use crate::inventory::{Assignment, Inventory, InventoryError, Node};

use super::Problem;

/// `(ID, VERSION_ID)` of os-release, as the machine's facts say them, and the release's name.
pub const PROVEN: [(&str, &str, &str); 2] = [
    ("debian", "12", "Debian 12 (bookworm)"),
    ("debian", "13", "Debian 13 (trixie)"),
];

/// Why `module` is not planned on `node`: a built-in module, and the machine said it runs a
/// system it is not proven on. A machine that has said nothing yet is not refused: its first
/// check or push says it, and the next plan knows.
pub(super) fn refusal(
    inventory: &Inventory,
    module: &Module,
    node: &Node,
    a: &Assignment,
) -> Result<Option<Problem>, InventoryError> {
    if module.origin != "built-in" {
        return Ok(None);
    }
    let Some(known) = inventory.facts(&node.name)? else {
        return Ok(None);
    };
    let os = &known.facts.os;
    if PROVEN
        .iter()
        .any(|(id, version, _)| os.id == *id && os.version == *version)
    {
        return Ok(None);
    }
    let runs = match (os.id.as_str(), os.version.as_str()) {
        ("", _) => "a system whose os-release names no ID".to_string(),
        (id, "") => format!("{id} with no VERSION_ID"),
        (id, version) => format!("{id} {version}"),
    };
    let proven: Vec<&str> = PROVEN.iter().map(|(_, _, name)| *name).collect();
    Ok(Some(
        Problem::of(
            a,
            format!(
                "{}: {} runs {runs} (its facts say so), and the built-in module {} is proven on {} \
                 only; copy it into a catalogue folder of your own (`--catalogue DIR`) to take \
                 it there on your word, or take it off {}",
                a.instance,
                node.name,
                module.name,
                proven.join(" and "),
                node.name
            ),
        )
        .file(module.file()),
    ))
}
