//! Names the machine's tools are handed (an address to connect to, a login name): one rule
//! each, checked where the inventory stores them, where a module names an owner, where a jump
//! host is parsed, and by the helper.

/// Whether `address` can be connected to: a host name (letters, digits, `-`, `.`, `_`), an IPv4
/// address, or an IPv6 address (hex digits, `:`, `.`, optionally in brackets). Never empty, never
/// starting with `-` (a tool that is handed it must not read it as an option), never any space
/// or control character.
pub fn valid_address(address: &str) -> bool {
    let bare = address
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(address);
    let host = bare
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
    let ipv6 = bare.contains(':')
        && bare
            .chars()
            .all(|c| c.is_ascii_hexdigit() || ":.".contains(c));
    !bare.is_empty() && bare.len() <= 253 && !bare.starts_with('-') && (host || ipv6)
}

/// Whether `user` is a login name as the machine's tools accept it (the account rule,
/// [`crate::valid_account_name`]): lower-case letters, digits,
/// `_`, `-` (not first), at most 32 characters.
pub fn valid_user(user: &str) -> bool {
    crate::valid_account_name(user)
}
