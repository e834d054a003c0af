//! Tags: the groups a node belongs to, selected as `@tag`.

use std::collections::BTreeMap;

use rusqlite::params;

use super::{Inventory, InventoryError, nodes};

impl Inventory {
    /// Gives `node` each of `tags` (one it carries already is kept); returns those it did not
    /// carry before. Every tag is checked before any is stored.
    pub fn tag(&self, node: &str, tags: &[String]) -> Result<Vec<String>, InventoryError> {
        self.each_tag(
            node,
            tags,
            "INSERT OR IGNORE INTO tags (node, tag) VALUES (?1, ?2)",
        )
    }

    /// Takes each of `tags` off `node`; returns those it carried.
    pub fn untag(&self, node: &str, tags: &[String]) -> Result<Vec<String>, InventoryError> {
        self.each_tag(node, tags, "DELETE FROM tags WHERE node = ?1 AND tag = ?2")
    }

    /// Runs `sql` for `node` and each of `tags` (all checked first); returns the tags it changed.
    fn each_tag(
        &self,
        node: &str,
        tags: &[String],
        sql: &str,
    ) -> Result<Vec<String>, InventoryError> {
        self.node(node)?;
        check(tags)?;
        let mut changed = Vec::new();
        for tag in tags {
            if self.conn.execute(sql, params![node, tag])? > 0 {
                changed.push(tag.clone());
            }
        }
        Ok(changed)
    }

    /// Every node's tags, by node name then tag (a node without tags is absent).
    pub fn tags(&self) -> Result<BTreeMap<String, Vec<String>>, InventoryError> {
        let mut stmt = self
            .conn
            .prepare("SELECT node, tag FROM tags ORDER BY node, tag")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))?;
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for row in rows {
            let (node, tag) = row?;
            out.entry(node).or_default().push(tag);
        }
        Ok(out)
    }

    /// The tags of one node, sorted. Read from the node's own rows (the table's key): a plan asks
    /// this once per assignment, and reading every node's tags each time made it quadratic.
    pub fn tags_of(&self, node: &str) -> Result<Vec<String>, InventoryError> {
        Ok(self
            .conn
            .prepare_cached("SELECT tag FROM tags WHERE node = ?1 ORDER BY tag")?
            .query_map([node], |r| r.get(0))?
            .collect::<Result<_, _>>()?)
    }
}

/// A tag is spelt like a node name, so `@tag` reads the same wherever a selector is taken.
fn check(tags: &[String]) -> Result<(), InventoryError> {
    match tags.iter().find(|t| !nodes::valid_name(t)) {
        Some(tag) => Err(InventoryError::Refused(crate::Refusal::BadTag {
            tag: tag.clone(),
        })),
        None => Ok(()),
    }
}
