//! Secrets leave the operator sealed: a secret file's rendered content, and the value of a secret
//! environment variable, is encrypted (age) to the
//! pinned `ssh-ed25519` host key of the node that receives it, as agenix does, so only that
//! machine's helper can open it, and neither the wire nor the inventory ever carries it in clear.
//! What a plan compares, and what the inventory keeps of it, is a digest keyed by the operator's
//! key.

use std::str::FromStr;

use crate::inventory::{Inventory, InventoryError, Node};
use crate::wire::{Resource, Sealed, Spec};

/// Seals every secret file of `resources` to `node`'s host key. A node with no `ssh-ed25519`
/// key pinned gets only the digest, which is enough to plan: a push refuses to send it
/// (`Declaration::unsealed_secret`). A pinned key the sealing cannot use is a problem named for
/// the operator.
pub(super) fn seal(
    inventory: &Inventory,
    node: &Node,
    resources: &mut [Resource],
    problems: &mut Vec<super::Problem>,
) -> Result<(), InventoryError> {
    let name = &node.name;
    let recipient = match node
        .host_key
        .as_deref()
        .filter(|k| k.starts_with("ssh-ed25519 "))
        .map(age::ssh::Recipient::from_str)
    {
        None => None,
        Some(Ok(to)) => Some(to),
        Some(Err(e)) => {
            problems.push(super::Problem::says(format!(
                "{name}'s pinned host key cannot be sealed to ({e:?}): pin it again with \
                 `mesh node trust {name}`"
            )));
            return Ok(());
        }
    };
    let seal_text = |id: &str, text: &str| -> Result<Sealed, InventoryError> {
        let age = match &recipient {
            Some(to) => age::encrypt_and_armor(to, text.as_bytes()).map_err(|e| {
                InventoryError::Corrupt(format!("{id}: cannot seal a secret to {name}: {e}"))
            })?,
            None => String::new(),
        };
        Ok(Sealed {
            age,
            digest: inventory.secret_digest(text.as_bytes())?,
            lines: Vec::new(),
        })
    };
    for r in resources.iter_mut() {
        let (secret_environment, environment, sealed) = match &mut r.spec {
            Spec::File(f) => {
                if !f.secret || f.sealed.is_some() {
                    continue;
                }
                let mut sealed = seal_text(&r.id, &f.content)?;
                sealed.lines = line_digests(inventory, &f.content)?;
                f.sealed = Some(sealed);
                f.content.clear();
                // what the file reads is compared by digest; a secret's plain digest could be
                // tested against guesses, a keyed one cannot
                for used in f.costing.settings.values_mut() {
                    used.digest = inventory.secret_digest(used.digest.as_bytes())?;
                }
                continue;
            }
            Spec::Process(p) => (
                &p.secret_environment,
                &mut p.environment,
                &mut p.sealed_environment,
            ),
            Spec::Container(c) => (
                &c.secret_environment,
                &mut c.environment,
                &mut c.sealed_environment,
            ),
            _ => continue,
        };
        // a secret variable's value travels sealed; its place in the environment stays, empty
        for var in secret_environment {
            if let Some(value) = environment.get_mut(var)
                && !sealed.contains_key(var)
            {
                sealed.insert(var.clone(), seal_text(&r.id, value)?);
                value.clear();
            }
        }
    }
    Ok(())
}

/// The keyed digest of every line of `text` that is not empty.
pub(super) fn line_digests(
    inventory: &Inventory,
    text: &str,
) -> Result<Vec<String>, InventoryError> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| inventory.secret_digest(l.as_bytes()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::seal;
    use crate::inventory::{Inventory, Node};
    use crate::wire::{Cost, Costing, FileSpec, Resource, Spec};

    fn secret_file(content: &str) -> Resource {
        Resource {
            id: "kv:file:/srv/auth.conf".into(),
            instance: "kv".into(),
            module: "kv@1".into(),
            spec: Spec::File(FileSpec {
                path: "/srv/auth.conf".into(),
                owner: "root".into(),
                group: "root".into(),
                mode: 0o600,
                content: content.into(),
                validate: vec![],
                secret: true,
                sealed: None,
                effective: None,
                costing: Costing {
                    source: "s".into(),
                    settings: Default::default(),
                    cost: Cost::Restart,
                    units: vec![],
                },
            }),
            confirm: false,
        }
    }

    #[test]
    fn a_secret_file_is_sealed_to_the_pinned_host_key_and_compared_by_digest() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.use_operator_key(&dir.path().join("operator.key"));
        let mut node = Node::new("n", "127.0.0.1");
        let mut problems = vec![];
        let mut rs = vec![secret_file("requirepass s3cret\n")];
        // no host key pinned: a digest to plan with, nothing a push would send
        seal(&inv, &node, &mut rs, &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let unsealed = crate::wire::Declaration {
            version: crate::wire::VERSION,
            node: "n".into(),
            resources: rs.clone(),
            expects_record: false,
            confirm_within: None,
            confirm_removals: Vec::new(),
            keep: Vec::new(),
            planned: None,
        };
        assert!(unsealed.unsealed_secret().is_some());
        assert!(!serde_json::to_string(&rs).unwrap().contains("s3cret"));
        let mut rs = vec![secret_file("requirepass s3cret\n")];

        node.host_key = Some(
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsKLqeplhpW+uObz5dvMgjz1OxfM/XXUB+VHtZ6isGN"
                .into(),
        );
        let mut problems = vec![];
        let mut twice = vec![secret_file("requirepass s3cret\n")];
        seal(&inv, &node, &mut rs, &mut problems).unwrap();
        seal(&inv, &node, &mut twice, &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let text = serde_json::to_string(&rs).unwrap();
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("BEGIN AGE ENCRYPTED FILE"));
        // two sealings differ, and are the same resource
        assert_ne!(
            serde_json::to_string(&twice).unwrap(),
            text,
            "sealing is random"
        );
        assert_eq!(rs, twice);
        let mut other = vec![secret_file("requirepass other\n")];
        seal(&inv, &node, &mut other, &mut problems).unwrap();
        assert_ne!(rs, other);
    }
}
