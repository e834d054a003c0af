//! The mesh's identity of an instance: the login every party derives alike (ADR 0049).
//!
//! A login is unique across the mesh by construction, not by looking at who else exists (which
//! would change a login when a neighbour arrives):
//!
//! - `<instance>_<node>` when the node's name is already lower-case letters, digits and `-` and
//!   the whole fits [`LOGIN_MAX`]. An instance name never holds `_`, nor does such a node name,
//!   so the `_` tells where one ends: two such logins differ whenever their names do.
//! - otherwise the instance's first letters, `-`, and a digest of both names: never a `_`, so it
//!   never meets a login of the first form.
//!
//! Either form is a valid Linux user name: it starts with the instance's first letter (an
//! instance name starts with a letter) and holds only `[a-z0-9_-]`.

/// The longest login a backend takes (ADR 0049).
pub const LOGIN_MAX: usize = 20;

/// Hex digits of the digest in a login's short form (40 bits).
const DIGEST_LEN: usize = 10;

/// The login of `instance` on `node`.
pub fn login(instance: &str, node: &str) -> String {
    let plain = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    let full = format!("{instance}_{node}");
    if plain(instance) && plain(node) && full.len() <= LOGIN_MAX {
        return full;
    }
    let digest = crate::catalogue::digest(&[instance.as_bytes(), node.as_bytes()]);
    let mut short: String = instance
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(LOGIN_MAX - DIGEST_LEN - 1)
        .collect();
    if !short.starts_with(|c: char| c.is_ascii_lowercase()) {
        short.insert(0, 'm');
        short.truncate(LOGIN_MAX - DIGEST_LEN - 1);
    }
    format!("{short}-{}", &digest[..DIGEST_LEN])
}

#[cfg(test)]
mod tests {
    use super::{LOGIN_MAX, login};
    use crate::inventory::valid_user;

    #[test]
    fn a_login_fits_twenty_characters_and_differs_per_instance() {
        assert_eq!(login("kv", "node1"), "kv_node1");
        let long = login("analytics-warehouse", "storage-node-17");
        assert_eq!(long.len(), LOGIN_MAX, "{long}");
        assert!(long.starts_with("analytics-"), "{long}");
        assert_ne!(long, login("analytics-warehouse", "storage-node-18"));
    }

    #[test]
    fn names_that_read_alike_never_share_a_login_and_every_login_is_a_user_name() {
        let long = "a-very-long-instance-name-indeed";
        let pairs = [
            ("web", "web_1"),
            ("web", "web-1"),
            ("web", "Web.1"),
            ("web", "web.1"),
            ("web", "WEB-1"),
            ("web-1", "a"),
            ("web", "1-a"),
            ("web", "1_a"),
            ("web-1-a", "n"),
            ("web", "a-n"),
            ("kv", "node1"),
            ("kv-node1", "x"),
            ("analytics-warehouse", "storage-node-17"),
            ("analytics-warehouse", "storage-node-18"),
            ("analytics-warehouses", "storage-node-17"),
            (long, "n1"),
            (long, "n2"),
            ("a-very-long-instance-name-indeeds", "n1"),
            ("n", &"x".repeat(63)),
            ("n", &format!("{}y", "x".repeat(62))),
        ];
        let mut seen = std::collections::BTreeMap::new();
        for (instance, node) in pairs {
            let l = login(instance, node);
            assert!(l.len() <= LOGIN_MAX, "{instance}@{node}: {l}");
            assert!(valid_user(&l), "{instance}@{node}: {l:?} is no user name");
            if let Some(other) = seen.insert(l.clone(), (instance, node)) {
                panic!("{instance}@{node} and {other:?} share the login {l}");
            }
        }
        // the same names always give the same login
        assert_eq!(login("web", "Web.1"), login("web", "Web.1"));
    }
}
