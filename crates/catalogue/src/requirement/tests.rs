//! What a requirement and a provision may say, checked as module.json is read.

use super::*;

fn req(json: &str) -> Result<Requirement, Refusal> {
    requirement(0, serde_json::from_str(json).unwrap())
}

#[test]
fn every_requirement_has_one_of_the_four_provider_kinds() {
    assert_eq!(
        req(r#"{"name":"me","kind":"mesh"}"#).unwrap().need.kind(),
        "mesh"
    );
    assert_eq!(
        req(r#"{"name":"data","kind":"host","directory":{}}"#)
            .unwrap()
            .need
            .kind(),
        "host"
    );
    let (field, why) = req(r#"{"name":"x","kind":"vault"}"#).err().unwrap();
    assert_eq!(field, "requires[0].kind");
    assert!(why.contains("\"vault\" is not a provider"), "{why}");
    let (_, why) = req(r#"{"name":"x","kind":"operator"}"#).err().unwrap();
    assert!(why.contains("declare it under \"settings\""), "{why}");
    let (_, why) = req(r#"{"name":"x","kind":"host","port":{},"fact":{}}"#)
        .err()
        .unwrap();
    assert!(why.contains("exactly one of"), "{why}");
}

#[test]
fn a_module_requirement_names_its_contract_and_only_providers_give_values() {
    let r = req(r#"{"name":"store","kind":"module","provision":"kv",
            "fields":{"host":{"type":"string"},"password":{"type":"string","secret":true}}}"#)
    .unwrap();
    assert_eq!(r.need.fields().len(), 2);
    assert!(
        r.need
            .fields()
            .iter()
            .any(|f| f.name == "password" && f.secret)
    );
    assert!(
        req(r#"{"name":"s","kind":"module","provision":"kv","fields":{"h":{"type":"string","value":"x"}}}"#)
            .is_err()
    );
}

#[test]
fn the_operators_data_is_read_or_read_write_access() {
    let r = req(r#"{"name":"media","kind":"operator","access":"read"}"#).unwrap();
    assert!(matches!(r.need, Need::Access { write: false }));
    assert_eq!(r.need.kind(), "operator");
    assert_eq!(r.need.fields()[0].name, "path");
    let r = req(r#"{"name":"up","kind":"operator","access":"read-write"}"#).unwrap();
    assert!(matches!(r.need, Need::Access { write: true }));
    let (field, why) = req(r#"{"name":"m","kind":"operator","access":"rw"}"#)
        .err()
        .unwrap();
    assert_eq!(field, "requires[0].access");
    assert!(why.contains("\"read\" or \"read-write\""), "{why}");
}

#[test]
fn an_operator_secret_is_a_secret_string_with_no_value() {
    let parse = |field: &str| {
        let raw = format!(r#"{{"name":"api","fields":{{"token":{field}}}}}"#);
        provision(0, serde_json::from_str(&raw).unwrap())
    };
    let p = parse(r#"{"type":"string","secret":true,"from":"operator"}"#).unwrap();
    assert!(p.fields[0].from_operator && p.fields[0].value.is_none());
    for wrong in [
        r#"{"type":"string","from":"operator"}"#,
        r#"{"type":"integer","secret":true,"from":"operator"}"#,
        r#"{"type":"string","secret":true,"from":"operator","generate":true}"#,
        r#"{"type":"string","secret":true,"from":"operator","value":"x"}"#,
    ] {
        let (field, why) = parse(wrong).err().unwrap();
        assert_eq!(field, "provides[0].fields.token", "{wrong}");
        assert!(why.contains("`mesh secret set`"), "{wrong}: {why}");
    }
    let (_, why) = parse(r#"{"type":"string","secret":true,"from":"vault"}"#)
        .err()
        .unwrap();
    assert!(why.contains("the only one is \"operator\""), "{why}");
}
