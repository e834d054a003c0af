use super::*;

fn host<'a>(hosts: &'a [AnsibleHost], name: &str) -> &'a AnsibleHost {
    hosts
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("no {name} in {hosts:?}"))
}

#[test]
fn ranges_children_and_vars_come_out_as_ansible_reads_them() {
    let text = "\
# the fleet
bastion ansible_host=198.51.100.7

[web]
web[01:03].example.org ansible_user=deploy
[db]
db-[a:b] ansible_port=2222 ansible_become=true

[prod:children]
web
db

[prod:vars]
ansible_user=admin
ntp=\"pool.example.org\"

[web:vars]
http_port=8080
";
    let hosts = parse_ini(text, "hosts.ini").unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "bastion",
            "db-a",
            "db-b",
            "web01.example.org",
            "web02.example.org",
            "web03.example.org"
        ]
    );
    let web = host(&hosts, "web02.example.org");
    // the host's own over its group's over its parent's
    assert_eq!(web.vars["ansible_user"], "deploy");
    assert_eq!(web.vars["http_port"], "8080");
    assert_eq!(web.vars["ntp"], "pool.example.org");
    assert_eq!(web.groups, BTreeSet::from(["prod".into(), "web".into()]));
    let db = host(&hosts, "db-b");
    assert_eq!(db.vars["ansible_user"], "admin");
    assert_eq!(db.vars["ansible_port"], "2222");
    assert!(host(&hosts, "bastion").groups.is_empty());
}

#[test]
fn a_malformed_line_is_refused_with_the_file_line_and_why() {
    let e = parse_ini("[web]\nweb[01:03.example.org\n", "bad.ini").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("bad.ini", 2));
    assert!(e.why.contains("not closed"), "{e}");
    let e = parse_ini("[web:vras]\n", "bad.ini").unwrap_err();
    assert!(e.to_string().starts_with("bad.ini:1: "), "{e}");
    let e = parse_ini("[web]\nweb1 port\n", "bad.ini").unwrap_err();
    assert!(e.why.contains("KEY=VALUE"), "{e}");
    let e = parse_ini("[web]\nweb1 a='x\n", "bad.ini").unwrap_err();
    assert!(e.why.contains("quote"), "{e}");
}

#[test]
fn alphabetic_and_stepped_ranges_expand() {
    assert_eq!(expand("db-[a:c]").unwrap(), ["db-a", "db-b", "db-c"]);
    assert_eq!(expand("n[1:5:2]").unwrap(), ["n1", "n3", "n5"]);
    assert_eq!(
        expand("r[1:2]-[a:b]").unwrap(),
        ["r1-a", "r2-a", "r1-b", "r2-b"]
    );
    assert!(expand("n[3:1]").is_err());
}
