//! Copies of the secret contents confirmed pushes sent, sealed to the operator's key and found by
//! their keyed digest. What a machine is sent is sealed to its host key of that day, and a
//! generation keeps it so; once the machine is rebuilt (a new host key) that generation could no
//! longer be opened there. A rollback seals each content again, from its copy, to the key the
//! node has now (`resolve::reseal`).

use rusqlite::{OptionalExtension, Transaction, params};

use mesh_wire::Declaration;

use super::{Inventory, InventoryError};

impl Inventory {
    /// Notes `content`, a secret this command sealed to a machine, by its keyed digest: a
    /// confirmed push of it keeps a copy. Not in a trial, which nothing it composed outlives.
    pub fn note_sealed_content(&self, digest: &str, content: &str) {
        if self.in_trial.get() {
            return;
        }
        self.rendered
            .borrow_mut()
            .entry(digest.to_string())
            .or_insert_with(|| content.to_string());
    }

    /// The copies a confirmed push of `sent` adds: each secret content this command sealed that
    /// the inventory does not keep yet, sealed to the operator's key.
    pub(super) fn copies_to_keep(
        &self,
        sent: &Declaration,
    ) -> Result<Vec<(String, String)>, InventoryError> {
        let rendered = self.rendered.borrow();
        let mut out: Vec<(String, String)> = Vec::new();
        for s in sent.resources.iter().flat_map(|r| r.sealed()) {
            let Some(content) = rendered.get(&s.digest) else {
                continue;
            };
            if out.iter().any(|(d, _)| *d == s.digest) || self.copy_of(&s.digest)?.is_some() {
                continue;
            }
            out.push((s.digest.clone(), self.seal(content)?));
        }
        Ok(out)
    }

    /// The secret content of keyed digest `digest`, opened; `None` where no confirmed push of
    /// this inventory kept it (a generation kept before copies were).
    pub fn secret_copy(&self, digest: &str) -> Result<Option<String>, InventoryError> {
        self.copy_of(digest)?.map(|s| self.unseal(&s)).transpose()
    }

    fn copy_of(&self, digest: &str) -> Result<Option<String>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached("SELECT sealed FROM secret_copies WHERE digest = ?1")?
            .query_row(params![digest], |r| r.get(0))
            .optional()?)
    }
}

/// Keeps `copies` inside the caller's transaction (the push's record).
pub(super) fn keep(
    tx: &Transaction<'_>,
    copies: &[(String, String)],
) -> Result<(), InventoryError> {
    for (digest, sealed) in copies {
        tx.execute(
            "INSERT OR IGNORE INTO secret_copies (digest, sealed) VALUES (?1, ?2)",
            params![digest, sealed],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Inventory;

    #[test]
    fn a_secret_sealed_in_a_trial_is_not_noted_for_a_copy_and_one_sealed_in_a_batch_is() {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.trial(|inv| {
            inv.note_sealed_content("shown", "only shown");
            Ok::<_, crate::InventoryError>(())
        })
        .unwrap();
        inv.batch(|inv| {
            inv.note_sealed_content("sent", "sent to be confirmed");
            Ok::<_, crate::InventoryError>(())
        })
        .unwrap();
        inv.note_sealed_content("outside", "outside a transaction");
        let noted = inv.rendered.borrow();
        let mut keys: Vec<&str> = noted.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["outside", "sent"]);
    }
}
