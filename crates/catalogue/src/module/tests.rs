use super::*;
use mesh_wire::Cost;

fn parse_str(json: &str) -> Result<Module, CatalogueError> {
    let mut shipped = BTreeMap::new();
    shipped.insert("t.txt".to_string(), b"hello ${greeting}\n".to_vec());
    parse(
        "demo/module.json",
        "demo",
        json.as_bytes(),
        &shipped,
        "test",
    )
}

fn err(json: &str) -> String {
    match parse_str(json) {
        Ok(_) => panic!("accepted: {json}"),
        Err(e) => e.to_string(),
    }
}

const GOOD: &str = r#"{"name":"demo","version":"1","description":"A demo.",
    "settings":[{"name":"greeting","type":"string","meaning":"What to say.","default":"hi","cost":"reload"}],
    "resources":[{"kind":"file","path":"/etc/demo","template":"t.txt","units":["demo.service"]}]}"#;

#[test]
fn a_good_module_parses() {
    let m = parse_str(GOOD).unwrap();
    assert_eq!(m.settings[0].cost, Cost::Reload);
    assert_eq!(m.resources.len(), 1);
}

#[test]
fn a_setting_without_a_type_is_refused_naming_file_and_field() {
    let e = err(&GOOD.replace(r#""type":"string","#, ""));
    assert!(
        e.starts_with("demo/module.json: settings[0] (greeting).type: missing"),
        "{e}"
    );
}

#[test]
fn a_setting_without_a_meaning_is_refused() {
    let e = err(&GOOD.replace(r#""meaning":"What to say.","#, ""));
    assert!(e.contains("settings[0] (greeting).meaning: missing"), "{e}");
}

#[test]
fn a_default_of_the_wrong_type_is_refused() {
    let e = err(&GOOD.replace(r#""default":"hi""#, r#""default":3"#));
    assert!(e.contains("(greeting).default: 3 is not a string"), "{e}");
}

#[test]
fn a_default_fact_names_a_fact_of_the_setting_s_type_and_stands_alone() {
    let with =
        |fact: &str| GOOD.replace(r#""default":"hi""#, &format!(r#""default-fact":"{fact}""#));
    assert!(parse_str(&with("os.codename")).is_ok());
    let e = err(&with("os.nickname"));
    assert!(
        e.contains("(greeting).default-fact: \"os.nickname\" is no fact"),
        "{e}"
    );
    let e = err(&with("cpus"));
    assert!(e.contains("is not of the setting's type string"), "{e}");
    let e = err(&GOOD.replace(
        r#""default":"hi""#,
        r#""default":"hi","default-fact":"os.id""#,
    ));
    assert!(e.contains("one default"), "{e}");
}

#[test]
fn an_unknown_field_is_refused_by_name() {
    let e = err(&GOOD.replace(r#""version":"1","#, r#""version":"1","colour":"red","#));
    assert!(
        e.contains("demo/module.json") && e.contains("colour"),
        "{e}"
    );
}

#[test]
fn a_template_reading_an_undeclared_setting_is_refused() {
    let e = err(&GOOD.replace(r#""name":"greeting""#, r#""name":"salute""#));
    assert!(
        e.contains("resources[0].template: t.txt reads ${greeting}"),
        "{e}"
    );
}

#[test]
fn bad_paths_modes_kinds_and_costs_are_refused() {
    assert!(err(&GOOD.replace("/etc/demo", "etc/demo")).contains("resources[0].path"));
    assert!(err(&GOOD.replace("/etc/demo", "/etc/../x")).contains("resources[0].path"));
    assert!(
        err(&GOOD.replace(
            r#""template":"t.txt""#,
            r#""template":"t.txt","mode":"999""#
        ))
        .contains("resources[0].mode")
    );
    assert!(
        err(&GOOD.replace(r#""kind":"file""#, r#""kind":"hardlink""#))
            .contains("resources[0].kind")
    );
    assert!(
        err(&GOOD.replace(r#""cost":"reload""#, r#""cost":"reboot""#)).contains("(greeting).cost")
    );
    assert!(
        err(&GOOD.replace(r#""name":"demo""#, r#""name":"other""#))
            .contains("name: \"other\" differs")
    );
}

#[test]
fn keys_and_services_are_checked_when_loaded() {
    let with = |resource: &str| {
        GOOD.replace(
            r#"{"kind":"file","path":"/etc/demo","template":"t.txt","units":["demo.service"]}"#,
            resource,
        )
    };
    let keys = parse_str(&with(
        r#"{"kind":"keys","path":"/etc/d.json","keys":{"a":{"b":"${greeting}","c":1},"d":[]}}"#,
    ))
    .unwrap();
    let ResourceDef::Keys(k) = &keys.resources[0] else {
        panic!("not keys")
    };
    let owned: Vec<String> = k.keys.iter().map(|(p, _)| p.join(".")).collect();
    assert_eq!(owned, vec!["a.b", "a.c", "d"]);
    assert!(
        err(&with(
            r#"{"kind":"keys","path":"/etc/d.json","keys":{"a":"${nope}"}}"#
        ))
        .contains("resources[0].keys: a reads ${nope}, which the module does not declare")
    );
    assert!(
        err(&with(r#"{"kind":"keys","path":"/etc/d.json","keys":{}}"#))
            .contains("resources[0].keys: missing")
    );
    assert!(
        err(&with(
            r#"{"kind":"service","unit":"docker.service","state":"paused"}"#
        ))
        .contains("resources[0].state: \"paused\" is not a state")
    );
    assert!(
        err(&with(r#"{"kind":"service","unit":"docker"}"#))
            .contains("resources[0].unit: \"docker\" is not a systemd unit name")
    );
}

#[test]
fn invalid_json_names_the_file() {
    let e = err("{ not json");
    assert!(e.starts_with("demo/module.json: not valid JSON"), "{e}");
}
