//! Facts as the inventory knows them: the latest each node's helper answered, with
//! when, and the facts the last push was rendered against, so a plan can say what moved since.

use rusqlite::{OptionalExtension, Transaction, params};

use super::{Inventory, InventoryError};
use mesh_wire::{Facts, Report};

/// What the inventory knows of one node's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFacts {
    pub facts: Facts,
    /// Seconds since the epoch (the operator's clock) when the machine said them.
    pub seen_at: i64,
    /// What the last push was rendered against; `None`: no push since facts were known.
    pub pushed: Option<Facts>,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn text(facts: &Facts) -> Result<String, InventoryError> {
    serde_json::to_string(facts)
        .map_err(|e| InventoryError::Storage(crate::StorageError::Corrupt(format!("facts: {e}"))))
}

fn parse(node: &str, text: &str) -> Result<Facts, InventoryError> {
    serde_json::from_str(text).map_err(|e| {
        InventoryError::Storage(crate::StorageError::Corrupt(format!(
            "the facts kept of {node}: {e}"
        )))
    })
}

/// Keeps what a push's answer said of the machine: the facts known before it become what that
/// push was rendered against.
pub(super) fn store_pushed(
    tx: &Transaction,
    node: &str,
    report: &Report,
) -> Result<(), InventoryError> {
    let Some(facts) = &report.facts else {
        return Ok(());
    };
    tx.execute(
        "INSERT INTO facts (node, latest, seen_at, pushed) VALUES (?1, ?2, ?3, NULL)
         ON CONFLICT (node) DO UPDATE SET pushed = latest, latest = excluded.latest,
             seen_at = excluded.seen_at",
        params![node, text(facts)?, now()],
    )?;
    Ok(())
}

impl Inventory {
    /// What `node`'s machine last said it is; `None`: it never answered with facts.
    pub fn facts(&self, node: &str) -> Result<Option<KnownFacts>, InventoryError> {
        let row: Option<(String, i64, Option<String>)> = self
            .conn
            .prepare_cached("SELECT latest, seen_at, pushed FROM facts WHERE node = ?1")?
            .query_row([node], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        let Some((latest, seen_at, pushed)) = row else {
            return Ok(None);
        };
        Ok(Some(KnownFacts {
            facts: parse(node, &latest)?,
            seen_at,
            pushed: pushed.map(|p| parse(node, &p)).transpose()?,
        }))
    }

    /// Keeps what a check's (or any answer but a push's) report said of the machine.
    pub fn note_facts(&mut self, node: &str, report: &Report) -> Result<(), InventoryError> {
        let Some(facts) = &report.facts else {
            return Ok(());
        };
        self.conn.execute(
            "INSERT INTO facts (node, latest, seen_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (node) DO UPDATE SET latest = excluded.latest, seen_at = excluded.seen_at",
            params![node, text(facts)?, now()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mesh_wire::{Memory, Mode};

    fn answered(mib: u64) -> Report {
        let mut r = crate::generations::tests::report(
            Mode::DryRun,
            mesh_wire::Generation {
                number: 1,
                inventory: "a".into(),
                pushed_at: 1,
                rolled_back_to: None,
                push: None,
            },
        );
        r.facts = Some(Facts {
            memory: Memory { mib },
            ..Facts::default()
        });
        r
    }

    fn mib(f: &Option<Facts>) -> Option<u64> {
        f.as_ref().map(|f| f.memory.mib)
    }

    #[test]
    fn a_push_keeps_the_facts_it_was_rendered_against_and_a_check_only_the_latest() {
        let dir = tempfile::tempdir().unwrap();
        let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&crate::Node::new("n", "192.0.2.1")).unwrap();
        assert_eq!(inv.facts("n").unwrap(), None);
        inv.note_facts("n", &answered(1024)).unwrap();
        let known = inv.facts("n").unwrap().unwrap();
        assert_eq!((known.facts.memory.mib, mib(&known.pushed)), (1024, None));

        let tx = inv.conn.transaction().unwrap();
        store_pushed(&tx, "n", &answered(1024)).unwrap();
        tx.commit().unwrap();
        inv.note_facts("n", &answered(2048)).unwrap();
        let known = inv.facts("n").unwrap().unwrap();
        assert_eq!(
            (known.facts.memory.mib, mib(&known.pushed)),
            (2048, Some(1024))
        );

        let tx = inv.conn.transaction().unwrap();
        store_pushed(&tx, "n", &answered(2048)).unwrap();
        tx.commit().unwrap();
        let known = inv.facts("n").unwrap().unwrap();
        assert_eq!(
            (known.facts.memory.mib, mib(&known.pushed)),
            (2048, Some(2048))
        );
    }
}
