//! The module parser on anything: module.json is the input up to its first NUL byte, the rest is
//! the template `t` shipped beside it. It must never panic; a module it accepts must parse the
//! same way again.
#![no_main]

use std::collections::BTreeMap;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (json, template) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &b"x ${level}\n"[..]),
    };
    let mut files = BTreeMap::new();
    files.insert("t".to_string(), template.to_vec());
    let first = mesh::catalogue::parse_module("fuzzed", json, &files);
    let again = mesh::catalogue::parse_module("fuzzed", json, &files);
    assert_eq!(first.is_ok(), again.is_ok(), "the parser is not deterministic");
});
