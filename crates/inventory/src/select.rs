//! Selectors: which nodes a command is about. A selector is a node's name, a glob over names
//! (`web*`, `node?`, `db[12]`, `[!x]*`) or `@tag`; `--exclude` takes the same forms.

use std::collections::BTreeMap;

use super::{Inventory, InventoryError, Node};

/// The nodes a command starts from, before exclusions.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Every node in the inventory (none is not an error).
    All,
    /// What these selectors match, in the order they are given.
    Only(&'a [String]),
}

impl Inventory {
    /// The nodes `scope` selects, less those `exclude` matches, each once, in the order first
    /// selected. A selector (excluding ones too) that matches nothing is refused, naming it.
    pub fn select(
        &self,
        scope: Scope<'_>,
        exclude: &[String],
    ) -> Result<Vec<Node>, InventoryError> {
        let nodes = self.nodes()?;
        let tags = self.tags()?;
        let matching = |selector: &str, is_exclude: bool| -> Result<Vec<&Node>, InventoryError> {
            let found: Vec<&Node> = match selector.strip_prefix('@') {
                Some(tag) => nodes
                    .iter()
                    .filter(|n| {
                        tags.get(&n.name)
                            .is_some_and(|t| t.iter().any(|x| x == tag))
                    })
                    .collect(),
                None => nodes
                    .iter()
                    .filter(|n| glob_match(selector, &n.name))
                    .collect(),
            };
            if !found.is_empty() {
                return Ok(found);
            }
            if !is_exclude && !selector.starts_with('@') && !is_glob(selector) {
                // a plain name: the same refusal as everywhere else a node is named
                return Err(self.node(selector).err().unwrap_or(InventoryError::Refused(
                    crate::Refusal::NoMatch {
                        selector: selector.to_string(),
                        known: String::new(),
                        exclude: false,
                    },
                )));
            }
            Err(InventoryError::Refused(crate::Refusal::NoMatch {
                selector: selector.to_string(),
                known: known(selector, &nodes, &tags),
                exclude: is_exclude,
            }))
        };
        let mut chosen: Vec<&Node> = Vec::new();
        match scope {
            Scope::All => chosen.extend(nodes.iter()),
            Scope::Only(selectors) => {
                for s in selectors {
                    for n in matching(s, false)? {
                        if !chosen.iter().any(|c| c.name == n.name) {
                            chosen.push(n);
                        }
                    }
                }
            }
        }
        let mut excluded: Vec<&Node> = Vec::new();
        for s in exclude {
            excluded.extend(matching(s, true)?);
        }
        chosen.retain(|n| !excluded.iter().any(|x| x.name == n.name));
        if chosen.is_empty()
            && !exclude.is_empty()
            && let Scope::Only(selectors) = scope
        {
            return Err(InventoryError::Refused(crate::Refusal::NoneLeft {
                selectors: selectors.join(" "),
                excluded: exclude.join(" "),
            }));
        }
        Ok(chosen.into_iter().cloned().collect())
    }
}

/// What there is to select from, said when a selector matches nothing: the tags for `@tag`, the
/// nodes' names for a name or glob.
fn known(selector: &str, nodes: &[Node], tags: &BTreeMap<String, Vec<String>>) -> String {
    if selector.starts_with('@') {
        let mut all: Vec<&str> = tags.values().flatten().map(String::as_str).collect();
        all.sort_unstable();
        all.dedup();
        if all.is_empty() {
            "no node has a tag yet; `mesh node tag NODE TAG`".to_string()
        } else {
            format!("tags: {}", all.join(", "))
        }
    } else if nodes.is_empty() {
        "no nodes yet; `mesh node add`".to_string()
    } else {
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        format!("nodes: {}", names.join(", "))
    }
}

fn is_glob(selector: &str) -> bool {
    selector.contains(['*', '?', '['])
}

/// Whether `name` matches the glob `pattern`: `*` any run of characters, `?` one character,
/// `[abc]`, `[a-z]`, `[!a]` or `[^a]` one character of (or not of) a set; anything else itself.
/// A `[` with no closing `]` stands for itself.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // iterative matching with one backtrack point: the last `*` and where it started matching
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => match class(&p[pi..], n[ni]) {
                Some((true, len)) => Some(pi + len),
                Some((false, _)) => None,
                None => (n[ni] == '[').then_some(pi + 1),
            },
            Some(c) => (*c == n[ni]).then_some(pi + 1),
            None => None,
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                ni += 1;
            }
            (None, Some((sp, sn))) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Reads the class at the start of `p` (which begins with `[`): whether `c` is in it and how
/// many pattern characters it takes; `None` when it is not closed.
fn class(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut found = false;
    let start = i;
    // a `]` first in the set is a member, as in the shell
    while i < p.len() && (p[i] != ']' || i == start) {
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            found |= (p[i]..=p[i + 2]).contains(&c);
            i += 3;
        } else {
            found |= p[i] == c;
            i += 1;
        }
    }
    (i < p.len()).then_some((found != negated, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_the_shell_does() {
        for (pattern, name) in [
            ("web*", "web1"),
            ("web*", "web"),
            ("*", "anything"),
            ("node?", "node1"),
            ("node[12]", "node2"),
            ("node[1-3]", "node3"),
            ("node[!1]", "node2"),
            ("node[^1]", "node2"),
            ("*-eu-*", "web-eu-1"),
            ("a*b*c", "aXXbYYbc"),
            ("db[", "db["),
            ("[]x]y", "]y"),
            ("web1", "web1"),
        ] {
            assert!(glob_match(pattern, name), "{pattern} should match {name}");
        }
        for (pattern, name) in [
            ("web*", "db1"),
            ("node?", "node10"),
            ("node[12]", "node3"),
            ("node[1-3]", "node4"),
            ("node[!1]", "node1"),
            ("a*b*c", "aXXbYYbd"),
            ("web1", "web10"),
            ("?", ""),
            ("x*", ""),
        ] {
            assert!(
                !glob_match(pattern, name),
                "{pattern} should not match {name}"
            );
        }
    }

    fn fleet() -> (tempfile::TempDir, Inventory) {
        let dir = tempfile::tempdir().unwrap();
        let inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
        for (i, name) in ["web1", "web2", "web3", "db1"].iter().enumerate() {
            inv.add_node(&Node::new(name, &format!("192.0.2.{}", i + 1)))
                .unwrap();
        }
        inv.tag("web1", &["eu".into()]).unwrap();
        inv.tag("db1", &["eu".into(), "data".into()]).unwrap();
        (dir, inv)
    }

    fn names(nodes: Vec<Node>) -> Vec<String> {
        nodes.into_iter().map(|n| n.name).collect()
    }

    fn only(selectors: &[&str], exclude: &[&str]) -> Result<Vec<String>, InventoryError> {
        let (_dir, inv) = fleet();
        let s: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
        let x: Vec<String> = exclude.iter().map(|s| s.to_string()).collect();
        inv.select(Scope::Only(&s), &x).map(names)
    }

    #[test]
    fn names_globs_and_tags_select_each_node_once_in_order() {
        assert_eq!(
            only(&["db1", "web*"], &[]).unwrap(),
            ["db1", "web1", "web2", "web3"]
        );
        assert_eq!(only(&["@eu"], &[]).unwrap(), ["db1", "web1"]);
        assert_eq!(
            only(&["@eu", "web[12]"], &[]).unwrap(),
            ["db1", "web1", "web2"]
        );
        assert_eq!(only(&["*"], &["@eu"]).unwrap(), ["web2", "web3"]);
        assert_eq!(only(&["web*"], &["web2"]).unwrap(), ["web1", "web3"]);
        let (_dir, inv) = fleet();
        assert_eq!(
            names(inv.select(Scope::All, &["@data".into()]).unwrap()),
            ["web1", "web2", "web3"]
        );
    }

    #[test]
    fn a_selector_that_matches_nothing_is_refused_naming_it() {
        let e = only(&["web*", "mail*"], &[]).unwrap_err().to_string();
        assert!(e.contains("\"mail*\"") && e.contains("web1"), "{e}");
        let e = only(&["@us"], &[]).unwrap_err().to_string();
        assert!(e.contains("\"@us\"") && e.contains("data, eu"), "{e}");
        let e = only(&["web9"], &[]).unwrap_err().to_string();
        assert!(e.contains("web9"), "{e}");
        let e = only(&["web*"], &["wbe2"]).unwrap_err().to_string();
        assert!(e.contains("\"wbe2\"") && e.contains("typo"), "{e}");
        let e = only(&["web1"], &["@eu"]).unwrap_err().to_string();
        assert!(e.contains("no node") && e.contains("@eu"), "{e}");
    }
}
