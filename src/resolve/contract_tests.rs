//! Contracts, resolved (issue 14, item 1): a provider missing a field and a consumer widening a
//! contract are refused by name when the catalogue loads; a consumer that narrowed one is
//! refused at resolution when its provider answers less.

use std::path::Path;

use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, Node};

use super::{ResolveError, compose};

const DB: &str = r#"{"description": "A database.", "fields": {
  "host": {"type": "string"},
  "password": {"type": "string", "secret": true, "min-length": 16}}}"#;

fn write(dir: &Path, name: &str, json: &str, files: &[(&str, &str)]) {
    let m = dir.join(name);
    std::fs::create_dir_all(&m).unwrap();
    std::fs::write(m.join("module.json"), json).unwrap();
    for (f, text) in files {
        std::fs::write(m.join(f), text).unwrap();
    }
}

/// A provider of `db` answering `fields`.
fn provider(dir: &Path, name: &str, fields: &str) {
    write(
        dir,
        name,
        &format!(
            r#"{{"name": "{name}", "version": "1", "description": "A store.",
                "requires": [{{"name": "machine", "kind": "host", "fact": {{}}}}],
                "provides": [{{"name": "db", "fields": {{{fields}}}}}],
                "resources": []}}"#
        ),
        &[],
    );
}

/// A consumer of `db` reading `fields`.
fn consumer(dir: &Path, name: &str, fields: &str) {
    write(
        dir,
        name,
        &format!(
            r#"{{"name": "{name}", "version": "1", "description": "An app.",
                "requires": [{{"name": "db", "kind": "module", "provision": "db", "fields": {{{fields}}}}}],
                "resources": [{{"kind": "file", "path": "/etc/{name}", "template": "t",
                                "secret": true, "mode": "0600"}}]}}"#
        ),
        &[("t", "${db.password}\n")],
    );
}

const HOST: &str = r#""host": {"type": "string", "value": "${machine.address}"}"#;
const GENERATED: &str = r#""password": {"type": "string", "secret": true, "generate": true}"#;
const READS: &str = r#""password": {"type": "string", "secret": true"#;

fn catalogue(dir: &Path) -> Catalogue {
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::write(dir.join("contracts/db.json"), DB).unwrap();
    Catalogue::load(&[dir.to_path_buf()]).unwrap()
}

fn broken(cat: &Catalogue, name: &str) -> String {
    cat.module(name).expect_err("refused").to_string()
}

#[test]
fn a_provider_missing_a_field_and_a_consumer_widening_the_contract_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    provider(d, "whole", &format!("{HOST}, {GENERATED}"));
    provider(d, "short", HOST);
    consumer(d, "fits", &format!("{READS}}}"));
    consumer(
        d,
        "extra",
        &format!(r#"{READS}}}, "port": {{"type": "integer"}}"#),
    );
    consumer(d, "less", &format!(r#"{READS}, "min-length": 8}}"#));
    let cat = catalogue(d);
    assert!(cat.module("whole").is_ok() && cat.module("fits").is_ok());
    let contract = format!("the contract db ({}/contracts/db.json)", d.display());
    let short = broken(&cat, "short");
    assert!(
        short.contains("short/module.json: provides[0].fields: misses \"password\"")
            && short.contains(&format!("which {contract} promises")),
        "{short}"
    );
    let extra = broken(&cat, "extra");
    assert!(
        extra.contains("extra/module.json: requires[0].fields.port: widens")
            && extra.contains(&contract),
        "{extra}"
    );
    let less = broken(&cat, "less");
    assert!(
        less.contains("less/module.json: requires[0].fields.password.min-length: 8 widens")
            && less.contains("promises at least 16"),
        "{less}"
    );
}

#[test]
fn a_narrowed_contract_is_refused_when_the_provider_answers_less() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    provider(d, "store", &format!("{HOST}, {GENERATED}"));
    consumer(d, "modest", &format!(r#"{READS}, "min-length": 24}}"#));
    consumer(d, "greedy", &format!(r#"{READS}, "min-length": 40}}"#));
    let cat = catalogue(d);
    let mut inv = Inventory::init(&d.join("inv.db")).unwrap();
    // the operator's key of this test, never the one in the home directory
    inv.use_operator_key(&d.join("operator.key"));
    inv.add_node(&Node::new("n1", "192.0.2.1")).unwrap();
    inv.assign("n1", "store", "store").unwrap();
    inv.assign("n1", "modest", "modest").unwrap();
    let n1 = inv.node("n1").unwrap();
    compose(&inv, &cat, &n1).unwrap();
    inv.assign("n1", "greedy", "greedy").unwrap();
    match compose(&inv, &cat, &n1) {
        Err(ResolveError::Unresolved { problems, .. }) => {
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(
                problems[0].contains(
                    "greedy: requirement \"db\" (provision db): store@n1 answers the field \"password\" with fewer than the 40 characters greedy asks for"
                ),
                "{problems:?}"
            );
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_generated_secret_is_as_long_as_contracts_are_told() {
    let dir = tempfile::tempdir().unwrap();
    let mut inv = Inventory::init(&dir.path().join("inv.db")).unwrap();
    inv.use_operator_key(&dir.path().join("operator.key"));
    inv.add_node(&Node::new("n1", "192.0.2.1")).unwrap();
    inv.assign("n1", "kv", "store").unwrap();
    let secret = inv.secret("n1", "store", "db", "password").unwrap();
    assert_eq!(
        secret.chars().count(),
        crate::catalogue::contract::GENERATED_LENGTH
    );
}
