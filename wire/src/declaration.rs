//! What the operator sends: one node's declaration, its resources and the kinds they are.

use serde::{Deserialize, Serialize};

use crate::*;

/// Everything one node should be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declaration {
    /// [`VERSION`] of the sender.
    pub version: u32,
    /// The node's name in the inventory, so the helper's record says whose it is.
    pub node: String,
    /// Every resource, in the order they are applied. An empty list is meaningful: it undoes
    /// everything the mesh did on the machine.
    pub resources: Vec<Resource>,
    /// The operator's inventory holds what this machine's helper confirmed before: a machine
    /// with no record has then lost it, whatever else it shows (its whole state directory may be
    /// gone), and is refused until adopted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expects_record: bool,
    /// Seconds the helper waits for the operator's confirmation over a new connection when the
    /// push changes a resource that asks for it; `None`: [`CONFIRM_WITHIN`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm_within: Option<u64>,
    /// Resources no longer declared whose last declaration asked for confirmation (the operator
    /// knows them from what the node confirmed; a record written by an older helper does not
    /// say): taking them off the machine is confirmed like a change to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confirm_removals: Vec<String>,
    /// Resources of the record that this push leaves exactly as the machine has them, neither
    /// applied, changed nor undone: an assignment held back (a consumer waiting for its
    /// provider, or whose provider is gone) keeps what it has while the rest of its node goes
    /// ahead. They are not among `resources`; naming one that is changes nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<String>,
    /// Which generation of the node this push was planned against: a machine at a newer one
    /// refuses it before changing anything ([`stale`]). `None`: a mesh from before generations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Planned>,
}

/// One thing on a machine, with an id that stays the same from push to push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// Stable id: `<instance>:<kind>:<what>`, e.g. `motd:file:/etc/motd`.
    pub id: String,
    /// The assignment (instance) that declares it.
    pub instance: String,
    /// The module (and its version) that declares it, for reports.
    pub module: String,
    /// A change to it can cut the operator off (sshd, network, firewall): the helper keeps what
    /// it needs to put the machine back, applies, and reverts by itself unless the operator
    /// confirms over a new connection within [`Declaration::confirm_within`] seconds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm: bool,
    /// What kind of resource, and its details.
    #[serde(flatten)]
    pub spec: Spec,
}

impl Declaration {
    /// The declaration as compared and kept: every sealed content reduced to its digest.
    pub fn without_ciphertext(&self) -> Declaration {
        let mut out = self.clone();
        for r in &mut out.resources {
            r.drop_ciphertext();
        }
        out
    }

    /// The first secret file or secret variable that is not sealed to its machine: such a
    /// declaration is never sent.
    pub fn unsealed_secret(&self) -> Option<&Resource> {
        self.resources.iter().find(|r| r.spec.unsealed_secret())
    }
}

impl Resource {
    /// Every sealed content of the resource: a secret file's, a secret variable's.
    pub fn sealed(&self) -> Vec<&Sealed> {
        self.spec.sealed()
    }

    /// Every sealed content of the resource, to seal it again.
    pub fn sealed_mut(&mut self) -> Vec<&mut Sealed> {
        self.spec.sealed_mut()
    }

    /// Drops a sealed content's ciphertext, keeping its digest.
    pub fn drop_ciphertext(&mut self) {
        for s in self.sealed_mut() {
            s.age.clear();
        }
    }
}
