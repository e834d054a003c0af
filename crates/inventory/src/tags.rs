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
        self.forget_tags();
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
    /// Inside a transaction the last node's are kept ([`Last`]), so a node's are read once.
    pub fn tags_of(&self, node: &str) -> Result<Vec<String>, InventoryError> {
        if let Some(Last(Some((n, tags)))) = &*self.last_tags.borrow()
            && n == node
        {
            return Ok(tags.clone());
        }
        let tags: Vec<String> = self
            .conn
            .prepare_cached("SELECT tag FROM tags WHERE node = ?1 ORDER BY tag")?
            .query_map([node], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if let Some(last) = self.last_tags.borrow_mut().as_mut() {
            last.0 = Some((node.to_string(), tags.clone()));
        }
        Ok(tags)
    }

    /// Forgets the tags kept ([`Last`]): every write of a node's tags calls it first.
    pub(super) fn forget_tags(&self) {
        if let Some(last) = self.last_tags.borrow_mut().as_mut() {
            last.0 = None;
        }
    }
}

/// The tags of the node last read in a transaction (`None` before any, or once a write of tags
/// forgot them): one node's assignments are resolved one after another, each asking for them.
#[derive(Debug, Default)]
pub(super) struct Last(Option<(String, Vec<String>)>);

/// A tag is spelt like a node name, so `@tag` reads the same wherever a selector is taken.
fn check(tags: &[String]) -> Result<(), InventoryError> {
    match tags.iter().find(|t| !nodes::valid_name(t)) {
        Some(tag) => Err(InventoryError::Refused(crate::Refusal::BadTag {
            tag: tag.clone(),
        })),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::{Inventory, Node};

    /// The tags kept in a transaction are the file's: tagging, untagging and removing the node
    /// forget them, and outside a transaction nothing is kept.
    #[test]
    fn a_nodes_tags_kept_in_a_transaction_follow_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        inv.add_node(&Node::new("n1", "192.0.2.1")).unwrap();
        inv.add_node(&Node::new("n2", "192.0.2.2")).unwrap();
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        inv.tag("n1", &t(&["web"])).unwrap();
        inv.trial(|inv| {
            assert_eq!(inv.tags_of("n1")?, t(&["web"]));
            inv.tag("n1", &t(&["eu"]))?;
            assert_eq!(inv.tags_of("n1")?, t(&["eu", "web"]));
            assert_eq!(inv.tags_of("n2")?, t(&[]));
            inv.tag("n2", &t(&["db"]))?;
            assert_eq!(inv.tags_of("n2")?, t(&["db"]));
            inv.untag("n1", &t(&["web"]))?;
            assert_eq!(inv.tags_of("n1")?, t(&["eu"]));
            inv.remove_node("n1")?;
            inv.add_node(&Node::new("n1", "192.0.2.1"))?;
            assert_eq!(inv.tags_of("n1")?, t(&[]));
            Ok::<_, crate::InventoryError>(())
        })
        .unwrap();
        // rolled back: the file's tags again, read afresh
        assert_eq!(inv.tags_of("n1").unwrap(), t(&["web"]));
        inv.tag("n1", &t(&["eu"])).unwrap();
        assert_eq!(inv.tags_of("n1").unwrap(), t(&["eu", "web"]));
    }
}
