//! Contracts, resolved: a provider missing a field and a consumer widening a
//! contract are refused by name when the catalogue loads; a consumer that narrowed one is
//! refused at resolution when its provider answers less.

use std::path::Path;

use crate::catalogue::Catalogue;
use crate::inventory::{Inventory, Node};

// composed as a push composes them: allocating what the inventories built here never did
use super::ResolveError;
use super::allocation::compose;

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

/// An inventory of one node, n1, with the test's own operator key (never the one in the home
/// directory).
fn one_node(d: &Path) -> Inventory {
    let mut inv = Inventory::init(&d.join("inv.db")).unwrap();
    inv.use_operator_key(&d.join("operator.key"));
    inv.add_node(&Node::new("n1", "192.0.2.1")).unwrap();
    inv
}

/// What stops n1 being composed.
fn problems(inv: &Inventory, cat: &Catalogue) -> Vec<String> {
    match compose(inv, cat, &inv.node("n1").unwrap()) {
        Err(ResolveError::Unresolved { problems, .. }) => {
            problems.iter().map(ToString::to_string).collect()
        }
        other => panic!("not refused: {other:?}"),
    }
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
    let inv = one_node(d);
    inv.assign("n1", "store", "store").unwrap();
    inv.assign("n1", "modest", "modest").unwrap();
    compose(&inv, &cat, &inv.node("n1").unwrap()).unwrap();
    inv.assign("n1", "greedy", "greedy").unwrap();
    let problems = problems(&inv, &cat);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains(
            "greedy: requirement \"db\" (provision db): store@n1 answers the field \"password\" with fewer than the 40 characters greedy asks for"
        ),
        "{problems:?}"
    );
}

#[test]
fn a_generated_secret_is_as_long_as_contracts_are_told() {
    let dir = tempfile::tempdir().unwrap();
    let inv = one_node(dir.path());
    inv.assign("n1", "kv", "store").unwrap();
    let wanted = crate::inventory::Unallocated::secret("n1", "store", "db", "password");
    inv.allocate(&[wanted]).unwrap();
    let secret = inv
        .kept_secret("n1", "store", "db", "password")
        .unwrap()
        .unwrap();
    assert_eq!(
        secret.chars().count(),
        crate::catalogue::contract::GENERATED_LENGTH
    );
}

/// A share: a directory, its owner left to the provider unless a consumer narrows it.
const SHARE: &str = r#"{"description": "A directory to write into.", "fields": {
  "dir": {"type": "string", "directory": {}}}}"#;
/// The same, promising a directory owned by www-data.
const WWW_SHARE: &str = r#"{"description": "A directory the web server reads.", "fields": {
  "dir": {"type": "string", "directory": {"owner": "www-data"}}}}"#;

/// A provider of `provision` answering with its own directory, owned by `owner`.
fn sharer(dir: &Path, name: &str, provision: &str, owner: &str, field: &str) {
    write(
        dir,
        name,
        &format!(
            r#"{{"name": "{name}", "version": "1", "description": "Shares a directory.",
                "requires": [{{"name": "data", "kind": "host", "directory": {{"owner": "{owner}"}}}}],
                "provides": [{{"name": "{provision}", "fields": {{"dir": {{"type": "string", "value": "${{data.path}}"{field}}}}}}}],
                "resources": []}}"#
        ),
        &[],
    );
}

/// A consumer of `provision` asking for a directory owned by `owner` (none: any).
fn sharee(dir: &Path, name: &str, provision: &str, owner: Option<&str>) {
    let owner = owner
        .map(|o| format!(r#", "directory": {{"owner": "{o}"}}"#))
        .unwrap_or_default();
    write(
        dir,
        name,
        &format!(
            r#"{{"name": "{name}", "version": "1", "description": "Writes into a share.",
                "requires": [{{"name": "share", "kind": "module", "provision": "{provision}",
                               "fields": {{"dir": {{"type": "string"{owner}}}}}}}],
                "resources": [{{"kind": "file", "path": "/etc/{name}", "template": "t"}}]}}"#
        ),
        &[("t", "${share.dir}\n")],
    );
}

fn shares(dir: &Path) -> Catalogue {
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::write(dir.join("contracts/share.json"), SHARE).unwrap();
    std::fs::write(dir.join("contracts/www.json"), WWW_SHARE).unwrap();
    Catalogue::load(&[dir.to_path_buf()]).unwrap()
}

#[test]
fn a_directory_narrowed_to_its_owner_is_honoured_or_refused_at_resolution() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sharer(d, "store", "share", "www-data", "");
    sharee(d, "web", "share", Some("www-data"));
    sharee(d, "mine", "share", Some("consumer"));
    sharee(d, "other", "share", Some("backup"));
    let cat = shares(d);
    let inv = one_node(d);
    inv.assign("n1", "store", "store").unwrap();
    inv.assign("n1", "web", "web").unwrap();
    // the provider's directory is owned by www-data (its requirement says so): honoured
    compose(&inv, &cat, &inv.node("n1").unwrap()).unwrap();
    inv.assign("n1", "mine", "mine").unwrap();
    inv.assign("n1", "other", "other").unwrap();
    let problems = problems(&inv, &cat);
    assert_eq!(problems.len(), 2, "{problems:?}");
    let mine = super::requirements::login("mine", "n1");
    for (consumer, owner) in [("mine", mine.as_str()), ("other", "backup")] {
        let said = format!(
            "{consumer}: requirement \"share\" (provision share): store@n1 answers the field \"dir\" with a directory owned by www-data, not by {owner} as {consumer} asks"
        );
        assert!(problems.iter().any(|p| p.contains(&said)), "{problems:?}");
    }
}

#[test]
fn a_directory_owner_is_never_widened_and_a_provider_honours_the_one_promised() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sharer(d, "web-store", "www", "www-data", "");
    sharer(d, "root-store", "www", "root", "");
    sharer(
        d,
        "says-other",
        "www",
        "www-data",
        r#", "directory": {"owner": "backup"}"#,
    );
    sharee(d, "narrow", "www", Some("www-data"));
    sharee(d, "wider", "www", Some("consumer"));
    sharee(d, "elsewhere", "www", Some("backup"));
    // asking for an owner of a field that names no directory
    consumer(
        d,
        "owned-host",
        &format!(r#"{READS}}}, "host": {{"type": "string", "directory": {{"owner": "root"}}}}"#),
    );
    std::fs::create_dir_all(d.join("contracts")).unwrap();
    std::fs::write(d.join("contracts/db.json"), DB).unwrap();
    let cat = shares(d);
    assert!(cat.module("web-store").is_ok() && cat.module("narrow").is_ok());
    let www = format!("the contract www, {}/contracts/www.json", d.display());
    // each refused by its file and field, and the contract's file where one is broken
    for (module, said, contract) in [
        (
            "wider",
            "requires[0].fields.dir.directory: asks for a directory owned by the consumer's own login, which widens a contract that promises one owned by user www-data",
            true,
        ),
        (
            "elsewhere",
            "requires[0].fields.dir.directory: asks for a directory owned by user backup, which widens",
            true,
        ),
        (
            "owned-host",
            "requires[0].fields.host.directory: names a directory, which the contract's field is not",
            false,
        ),
        (
            "root-store",
            "provides[0].fields.dir.directory: answers with a directory owned by user root, the contract promises one owned by user www-data",
            true,
        ),
        (
            "says-other",
            "provides[0].fields.dir.directory.owner: says user backup, but the value is the directory data, which the module requires owned by www-data",
            false,
        ),
    ] {
        let refused = broken(&cat, module);
        assert!(
            refused.contains(&format!("{module}/module.json: {said}"))
                && (!contract || refused.contains(&www)),
            "{refused}"
        );
    }
}
