//! Renders a user, its name filled in and held to the helper's rule, its groups in order.

use crate::catalogue::{Template, UserDef};
use crate::wire::{Spec, UserSpec};

use super::{Filling, Render, RenderError};

/// The resource's id and what the node is sent.
impl Render for UserDef {
    fn render(&self, fill: &Filling<'_>) -> Result<(String, Spec), RenderError> {
        let u = self;
        let name = fill.account(&fill.text(&u.name))?;
        let mut groups = u.groups.clone();
        if let Some(g) = groups.as_mut() {
            g.sort();
            g.dedup();
        }
        let text = |t: &Template| fill.text(t);
        Ok((
            format!("{}:user:{name}", fill.instance),
            Spec::from(UserSpec {
                name,
                system: u.system,
                uid: u.uid,
                home: u.home.as_ref().map(text),
                shell: u.shell.as_ref().map(text),
                groups,
                authorized_keys: u.authorized_keys.as_ref().map(text),
                remove_home: u.remove_home,
            }),
        ))
    }
}
