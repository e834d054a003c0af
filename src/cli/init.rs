//! `mesh init`: the inventory file, the operator's key its secrets are sealed to, and the
//! catalogue folders it was set up with (`--catalogue`), remembered so that a push with no
//! environment reads them too.

use anyhow::Result;

use super::answers::commands::Created;
use super::{Context, exit};
use crate::inventory::Inventory;

pub(crate) fn init(ctx: &Context) -> Result<u8> {
    let path = ctx.inventory_path()?;
    // every folder is checked before the file is made: a refused one leaves nothing behind
    let folders = ctx
        .catalogue_given()
        .iter()
        .map(|d| super::catalogue::checked(d))
        .collect::<Result<Vec<_>>>()?;
    let inventory = Inventory::init(&path)?;
    for dir in &folders {
        inventory.remember_catalogue_folder(dir)?;
    }
    let made = inventory.ensure_operator_key()?;
    let key = inventory.operator_key_path();
    let remembered = if folders.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
        format!("; it remembers the catalogue folders {}", list.join(", "))
    };
    ctx.answer(
        Created {
            created: "inventory",
            path: &path,
            operator_key: &key,
            operator_key_made: made,
            catalogue: &folders,
        },
        format_args!(
            "created the inventory {}; its secrets are sealed to the operator's key {} ({}: keep a \
             copy of it apart from the inventory){remembered}",
            path.display(),
            key.display(),
            if made {
                "made now, mode 0600"
            } else {
                "already there"
            }
        ),
    );
    Ok(exit::OK)
}
