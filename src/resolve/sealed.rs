//! Secrets leave the operator sealed: a secret file's rendered content, and the value of a secret
//! environment variable, is encrypted (age) to the
//! pinned `ssh-ed25519` host key of the node that receives it, as agenix does, so only that
//! machine's helper can open it, and neither the wire nor the inventory ever carries it in clear.
//! What a plan compares, and what the inventory keeps of it, is a digest keyed by the operator's
//! key.

use std::str::FromStr;

use crate::inventory::{Inventory, InventoryError, Node};
use crate::wire::{FileSpec, Resource, Sealed};

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
    let recipient = match recipient(node) {
        None => None,
        Some(Ok(to)) => Some(to),
        Some(Err(e)) => {
            problems.push(super::Problem::says(e.to_string()));
            return Ok(());
        }
    };
    let seal_text = |id: &str, text: &str| -> Result<Sealed, InventoryError> {
        let age = match &recipient {
            Some(to) => age::encrypt_and_armor(to, text.as_bytes()).map_err(|e| {
                InventoryError::Storage(crate::inventory::StorageError::Corrupt(format!(
                    "{id}: cannot seal a secret to {name}: {e}"
                )))
            })?,
            None => String::new(),
        };
        let digest = inventory.secret_digest(text.as_bytes())?;
        inventory.note_sealed_content(&digest, text);
        Ok(Sealed {
            age,
            digest,
            lines: Vec::new(),
        })
    };
    for r in resources.iter_mut() {
        if let Some(f) = r.spec.get_mut::<FileSpec>() {
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
        let Some(env) = r.spec.environment_mut() else {
            continue;
        };
        let (environment, sealed) = (env.values, env.sealed);
        // a secret variable's value travels sealed; its place in the environment stays, empty
        for var in env.secret {
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

/// The node's pinned `ssh-ed25519` host key as an age recipient; `None`: none is pinned.
fn recipient(node: &Node) -> Option<Result<age::ssh::Recipient, Unsealable>> {
    node.host_key
        .as_deref()
        .filter(|k| k.starts_with("ssh-ed25519 "))
        .map(|k| {
            age::ssh::Recipient::from_str(k).map_err(|why| Unsealable {
                node: node.name.clone(),
                why,
            })
        })
}

/// A node's pinned host key that age cannot seal to, and what age said of it.
#[derive(Debug, thiserror::Error)]
#[error(
    "{node}'s pinned host key cannot be sealed to ({why:?}): pin it again with `mesh node trust \
     {node}`"
)]
struct Unsealable {
    node: String,
    why: age::ssh::ParseRecipientKeyError,
}

/// Seals every secret content of a kept generation again, to the host key `node` has now (a
/// rollback: the machine may have been rebuilt since, with a new key), from the copy the push
/// that sent it kept; the ids of the resources whose content has no copy (kept before copies
/// were) are given back, left as they were sent. A node with no key pinned is left as it is.
pub fn reseal(
    inventory: &Inventory,
    node: &Node,
    declaration: &mut crate::wire::Declaration,
) -> Result<Vec<String>, InventoryError> {
    let to = match recipient(node) {
        None => return Ok(Vec::new()),
        Some(Ok(to)) => to,
        Some(Err(why)) => {
            return Err(InventoryError::Storage(
                crate::inventory::StorageError::Corrupt(why.to_string()),
            ));
        }
    };
    let mut without_copy = Vec::new();
    for r in &mut declaration.resources {
        let id = r.id.clone();
        for s in r.sealed_mut() {
            let Some(content) = inventory.secret_copy(&s.digest)? else {
                without_copy.push(id.clone());
                continue;
            };
            s.age = age::encrypt_and_armor(&to, content.as_bytes()).map_err(|e| {
                InventoryError::Storage(crate::inventory::StorageError::Corrupt(format!(
                    "{id}: cannot seal a secret to {}: {e}",
                    node.name
                )))
            })?;
        }
    }
    without_copy.dedup();
    Ok(without_copy)
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

    /// A host key made with ssh-keygen in `dir`: its public line, and its private file.
    fn host_key(dir: &std::path::Path, name: &str) -> (String, std::path::PathBuf) {
        let key = dir.join(name);
        let made = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(made.success());
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        (public.trim().to_string(), key)
    }

    fn open_with(key: &std::path::Path, armored: &str) -> Option<String> {
        let file = std::io::BufReader::new(std::fs::File::open(key).unwrap());
        let identity = age::ssh::Identity::from_buffer(file, None).unwrap();
        age::decrypt(&identity, armored.as_bytes())
            .ok()
            .map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn a_kept_generation_is_sealed_again_to_the_key_a_rebuilt_machine_has_now() {
        use crate::inventory::PushRecord;
        use crate::wire::{Declaration, Generation, Mode};
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.use_operator_key(&dir.path().join("operator.key"));
        let (old_public, old_key) = host_key(dir.path(), "old");
        let (new_public, new_key) = host_key(dir.path(), "new");
        let mut node = Node::new("n", "127.0.0.1");
        node.host_key = Some(old_public);
        inv.add_node(&node).unwrap();
        let mut rs = vec![secret_file("requirepass s3cret\n")];
        let mut problems = vec![];
        seal(&inv, &node, &mut rs, &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let sent = Declaration {
            version: crate::wire::VERSION,
            node: "n".into(),
            resources: rs,
            expects_record: true,
            confirm_within: None,
            confirm_removals: vec![],
            keep: vec![],
            planned: None,
        };
        let generation = Generation {
            number: 1,
            pushed_at: 9,
            inventory: inv.inventory_id().unwrap(),
            rolled_back_to: None,
            push: None,
        };
        let report = crate::wire::Report {
            version: 1,
            mode: Mode::Apply,
            hostname: "n".into(),
            host_keys: vec![],
            new_machine: false,
            resources: vec![],
            units: vec![],
            adoption: None,
            awaiting: None,
            reverted: vec![],
            pending: None,
            generation: Some(generation),
            facts: None,
            steps: Vec::new(),
            generation_not_kept: None,
        };
        let id = inv.begin_pushes("t0", &[("n", "d")]).unwrap()[0];
        inv.finish_push(
            id,
            &PushRecord::answered("n", "t0", "d", &report),
            Some(&sent),
        )
        .unwrap();
        // the machine is rebuilt: another host key, pinned again; a new command (nothing in memory)
        drop(inv);
        let mut inv = Inventory::open(&dir.path().join("inv.db")).unwrap();
        inv.use_operator_key(&dir.path().join("operator.key"));
        node.host_key = Some(new_public);
        let mut kept = inv
            .kept_generation("n", 1)
            .unwrap()
            .expect("kept")
            .declaration;
        let sealed = |d: &Declaration| d.resources[0].sealed()[0].clone();
        assert_eq!(
            open_with(&new_key, &sealed(&kept).age),
            None,
            "kept for the old key"
        );
        let without_copy = super::reseal(&inv, &node, &mut kept).unwrap();
        assert!(without_copy.is_empty(), "{without_copy:?}");
        assert_eq!(
            open_with(&new_key, &sealed(&kept).age).as_deref(),
            Some("requirepass s3cret\n")
        );
        assert_eq!(open_with(&old_key, &sealed(&kept).age), None);
        // the digest stays, so a plan compares it equal to what was sent
        assert_eq!(sealed(&kept), sealed(&sent));
        // a generation kept before copies were is left as sent, and named
        let mut older = sent.clone();
        older.resources[0].sealed_mut()[0].digest = "unknown".into();
        assert_eq!(
            super::reseal(&inv, &node, &mut older).unwrap(),
            vec!["kv:file:/srv/auth.conf".to_string()]
        );
        assert_eq!(
            older.resources[0].sealed()[0].age,
            sent.resources[0].sealed()[0].age
        );
    }
}
