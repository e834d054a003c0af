//! What a module's resources may say, checked as `mesh module check` checks them.

use super::Definition;
use std::collections::BTreeMap;

fn refused(resource: &str) -> String {
    let json = format!(
        r#"{{"name":"demo","version":"1","description":"A demo.",
           "settings":[{{"name":"word","type":"string","meaning":"A word.","default":"hi","cost":"restart"}}],
           "resources":[{resource}]}}"#
    );
    match crate::module::parse(
        "demo/module.json",
        "demo",
        json.as_bytes(),
        &BTreeMap::new(),
        "test",
    ) {
        Ok(_) => panic!("accepted: {resource}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn confirm_is_taken_on_files_keys_and_services_and_sshd_asks_for_it() {
    let said =
        refused(r#"{"kind":"process","description":"d","command":["/bin/true"],"confirm":true}"#);
    assert!(
        said.contains("resources[0]") && said.contains("confirm"),
        "{said}"
    );
    let catalogue = crate::Catalogue::load(&[]).unwrap();
    let sshd = catalogue.module("sshd").unwrap();
    assert!(sshd.resources.iter().all(super::ResourceDef::confirm));
    let motd = catalogue.module("motd").unwrap();
    assert!(!motd.resources.iter().any(super::ResourceDef::confirm));
}

#[test]
fn what_would_break_a_unit_file_is_refused_when_loaded_naming_the_field() {
    let process = |fields: &str| {
        format!(r#"{{"kind":"process","description":"d","command":["/bin/true"],{fields}}}"#)
    };
    for (resource, said) in [
        (
            r#"{"kind":"process","description":"x\nExecStartPre=/bin/evil","command":["/bin/true"]}"#.to_string(),
            "resources[0].description: description holds a control character (\\u{a})",
        ),
        (
            process(r#""user":"daemon\nUser=root""#),
            "resources[0].user: user holds a control character",
        ),
        (
            process(r#""user":"dae mon""#),
            "resources[0].user: user \"dae mon\" is not a user name or uid",
        ),
        (
            r#"{"kind":"process","description":"d","command":["/bin/echo","a\u0000b"]}"#.to_string(),
            "resources[0].command[1]: command[1] holds a control character (\\u{0})",
        ),
        (
            process(r#""environment":{"BAD-NAME":"${word}"}"#),
            "resources[0].environment.BAD-NAME: environment variable name \"BAD-NAME\" is not a name",
        ),
        (
            process(r#""environment":{"K":"a\u001bb"}"#),
            "resources[0].environment.K: environment.K holds a control character (\\u{1b})",
        ),
        (
            process(r#""restart":"sometimes""#),
            "resources[0].restart: restart \"sometimes\" is not a policy; use no, on-failure, always",
        ),
        (
            r#"{"kind":"container","image":"x","environment":{"K":"two\nlines"}}"#.to_string(),
            "resources[0].environment.K: environment.K spans several lines: Docker's env-file cannot carry",
        ),
    ] {
        let e = refused(&resource);
        assert!(e.contains(said), "{resource}\n{e}");
    }
}

#[test]
fn module_show_says_the_sshd_drop_in_is_checked_in_force() {
    let catalogue = crate::Catalogue::load(&[]).unwrap();
    let sshd = catalogue.module("sshd").unwrap();
    let said: Vec<String> = sshd
        .resources
        .iter()
        .map(super::ResourceDef::describe)
        .collect();
    assert!(
        said.iter()
            .any(|d| d.contains("checked in force with `sshd -T`")),
        "{said:?}"
    );
}

fn accepted(resource: &str) -> super::ResourceDef {
    let json = format!(
        r#"{{"name":"demo","version":"1","description":"A demo.",
           "settings":[{{"name":"word","type":"string","meaning":"A word.","default":"hi"}}],
           "resources":[{resource}]}}"#
    );
    let module = crate::module::parse(
        "demo/module.json",
        "demo",
        json.as_bytes(),
        &BTreeMap::new(),
        "test",
    )
    .unwrap();
    module.resources[0].clone()
}

#[test]
fn a_symlink_names_its_path_and_target_each_held_to_the_path_rule() {
    let link = accepted(r#"{"kind":"symlink","path":"/etc/demo/current","target":"/srv/${word}"}"#);
    assert_eq!(link.kind(), "symlink");
    assert_eq!(
        link.describe(),
        "/etc/demo/current -> /srv/${word} (what was there is given back when undeclared)"
    );
    for (resource, said) in [
        (
            r#"{"kind":"symlink","path":"/etc/x"}"#,
            "resources[0].target: missing",
        ),
        (
            r#"{"kind":"symlink","path":"/etc/x","target":"/proc/self/root/etc/shadow"}"#,
            "resources[0].target",
        ),
        (
            r#"{"kind":"symlink","path":"/var/lib/mesh/x","target":"/srv/a"}"#,
            "resources[0].path",
        ),
        (
            r#"{"kind":"symlink","path":"/etc/x","target":"/srv/${nope}"}"#,
            "resources[0].target",
        ),
        (
            r#"{"kind":"symlink","path":"/etc/x","target":"/srv/a","mode":"0644"}"#,
            "mode",
        ),
    ] {
        let got = refused(resource);
        assert!(got.contains(said), "{resource}: {got}");
    }
}

#[test]
fn a_sysctl_names_a_kernel_setting_and_its_value_reads_settings() {
    let s = accepted(r#"{"kind":"sysctl","name":"net.ipv4.ip_forward","value":"${word}"}"#);
    assert_eq!(s.kind(), "sysctl");
    assert!(
        s.describe()
            .starts_with("net.ipv4.ip_forward = ${word} (applied at once"),
        "{}",
        s.describe()
    );
    assert_eq!(
        accepted(r#"{"kind":"sysctl","name":"vm.swappiness","value":10}"#).describe()[..18],
        *"vm.swappiness = 10"
    );
    for (resource, said) in [
        (
            r#"{"kind":"sysctl","name":"../../etc/shadow","value":"1"}"#,
            "resources[0].name: \"../../etc/shadow\" is not a sysctl name",
        ),
        (
            r#"{"kind":"sysctl","name":"net.ipv4.ip_forward"}"#,
            "resources[0].value: missing",
        ),
        (
            r#"{"kind":"sysctl","name":"net.ipv4.ip_forward","value":[1]}"#,
            "resources[0].value: [1] is neither a number nor a string",
        ),
    ] {
        let got = refused(resource);
        assert!(got.contains(said), "{resource}: {got}");
    }
}

#[test]
fn a_timer_names_its_command_user_and_schedule_and_shares_no_name_with_a_process() {
    let t = accepted(
        r#"{"kind":"timer","name":"nightly","description":"Backs up","command":["/usr/bin/backup","${word}"],"user":"backup","schedule":"daily"}"#,
    );
    assert_eq!(t.kind(), "timer");
    assert_eq!(
        t.describe(),
        "<instance>-nightly.timer: runs \"/usr/bin/backup ${word}\" as backup at daily; \
         undeclared: stopped and its units removed"
    );
    for (resource, said) in [
        (
            r#"{"kind":"timer","description":"d","command":["/bin/true"]}"#,
            "resources[0].schedule: missing",
        ),
        (
            r#"{"kind":"timer","description":"d","command":["/bin/true"],"schedule":"daily\nExecStart=/bin/evil"}"#,
            "resources[0].schedule: schedule holds a control character",
        ),
        (
            r#"{"kind":"timer","description":"d","command":["/bin/true"],"schedule":"daily","user":"a b"}"#,
            "resources[0].user",
        ),
        (
            r#"{"kind":"timer","description":"d","schedule":"daily"}"#,
            "resources[0].command: missing",
        ),
    ] {
        let got = refused(resource);
        assert!(got.contains(said), "{resource}: {got}");
    }
    let both = refused(
        r#"{"kind":"timer","name":"x","description":"d","command":["/bin/true"],"schedule":"daily"},
           {"kind":"process","name":"x","description":"d","command":["/bin/true"]}"#,
    );
    assert!(both.contains("resources[1].name"), "{both}");
}

#[test]
fn a_user_and_a_group_are_named_by_the_account_rule_and_root_is_refused() {
    let user = accepted(
        r#"{"kind":"user","name":"${word}","shell":"/bin/bash","groups":["ops"],
            "authorized-keys":"${word}"}"#,
    );
    assert_eq!(user.kind(), "user");
    assert!(
        user.describe()
            .starts_with("user ${word}, shell /bin/bash, groups [ops], authorized_keys from"),
        "{}",
        user.describe()
    );
    assert_eq!(
        accepted(r#"{"kind":"group","name":"ops","system":true}"#).kind(),
        "group"
    );
    for (resource, said) in [
        (
            r#"{"kind":"user","name":"root"}"#,
            "resources[0].name: root is the machine's own",
        ),
        (
            r#"{"kind":"group","name":"Ops"}"#,
            "resources[0].name: \"Ops\" is not an account name",
        ),
        (
            r#"{"kind":"user","name":"alice","uid":0}"#,
            "resources[0].uid: uid 0 is root's",
        ),
        (
            r#"{"kind":"user","name":"alice","uid":4294967295}"#,
            "resources[0].uid: uid 4294967295 is (uid_t) -1",
        ),
        (
            r#"{"kind":"group","name":"ops","gid":65535}"#,
            "resources[0].gid: gid 65535 is (uid_t) -1",
        ),
        (
            r#"{"kind":"sysctl","name":"net.ipv4.ip_forward","value":"1\nkernel.x = 2"}"#,
            "resources[0].value: \"1\\nkernel.x = 2\"",
        ),
        (
            r#"{"kind":"apt-repository","name":"r","uri":"https://a b","suite":"s","components":"main","key":"k"}"#,
            "resources[0].uri: \"https://a b\"",
        ),
        (
            r#"{"kind":"apt-repository","name":"r","uri":"https://a","suite":"s","components":"main","key":"not a key"}"#,
            "resources[0].key: \"not a key\"",
        ),
        (
            r#"{"kind":"user","name":"alice","groups":["a b"]}"#,
            "resources[0].groups: \"a b\" is not an account name",
        ),
        (
            r#"{"kind":"user","name":"alice","shell":"bash"}"#,
            "resources[0].shell: \"bash\" is not an absolute path",
        ),
        (
            r#"{"kind":"user","name":"alice","home":"/var/lib/mesh/alice"}"#,
            "resources[0].home",
        ),
        (
            r#"{"kind":"user","name":"alice","password":"x"}"#,
            "unknown field `password`",
        ),
        (
            &format!(r#"{{"kind":"user","name":"{}"}}"#, "a".repeat(33)),
            "at most 32 characters",
        ),
    ] {
        let got = refused(resource);
        assert!(got.contains(said), "{resource}: {got}");
    }
}

#[test]
fn the_users_module_is_one_login_account_with_keys_and_sudo() {
    let catalogue = crate::Catalogue::load(&[]).unwrap();
    let users = catalogue.module("users").unwrap();
    let [super::ResourceDef::User(user)] = users.resources.as_slice() else {
        panic!("{:?}", users.resources);
    };
    assert_eq!(user.groups.as_deref(), Some(&["sudo".to_string()][..]));
    assert!(user.authorized_keys.is_some() && !user.system);
}

#[test]
fn a_package_has_an_optional_version_and_state_absent_each_checked() {
    let super::ResourceDef::Package(p) =
        accepted(r#"{"kind":"package","name":"nginx","version":"1:1.22.1-9+deb12u1"}"#)
    else {
        panic!("not a package");
    };
    assert_eq!(
        (p.version.as_deref(), p.absent),
        (Some("1:1.22.1-9+deb12u1"), false)
    );
    let super::ResourceDef::Package(p) =
        accepted(r#"{"kind":"package","name":"telnet","state":"absent"}"#)
    else {
        panic!("not a package");
    };
    assert!(p.absent && p.version.is_none());
    assert!(p.describe().starts_with("telnet absent"));
    for (resource, said) in [
        (
            r#"{"kind":"package","name":"nginx","version":"1.2 --purge"}"#,
            "resources[0].version: \"1.2 --purge\" is not a Debian version",
        ),
        (
            r#"{"kind":"package","name":"nginx","version":"-1"}"#,
            "is not a Debian version",
        ),
        (
            r#"{"kind":"package","name":"nginx","state":"purged"}"#,
            "resources[0].state: \"purged\" is neither",
        ),
        (
            r#"{"kind":"package","name":"nginx","state":"absent","version":"1.2"}"#,
            "resources[0].version: an absent package has no version",
        ),
    ] {
        let got = refused(resource);
        assert!(got.contains(said), "{resource}: {got}");
    }
}

#[test]
fn an_apt_repository_reads_settings_and_takes_its_key_once_from_module_json_or_a_file() {
    let repo = accepted(
        r#"{"kind":"apt-repository","name":"local","uri":"file:/srv/${word}","suite":"./",
            "key":"${word}"}"#,
    );
    assert_eq!(repo.kind(), "apt-repository");
    assert!(
        repo.describe()
            .starts_with("repository local at file:/srv/${word} ./ signed by the key ${word}"),
        "{}",
        repo.describe()
    );
    let shipped = BTreeMap::from([(
        "repo.asc".to_string(),
        b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n-----END PGP PUBLIC KEY BLOCK-----\n".to_vec(),
    )]);
    let json = r#"{"name":"demo","version":"1","description":"A demo.",
        "resources":[{"kind":"apt-repository","name":"r","uri":"https://x.example/debian",
                      "suite":"bookworm","components":"main contrib","key-file":"repo.asc"}]}"#;
    let module =
        crate::module::parse("demo/module.json", "demo", json.as_bytes(), &shipped, "t").unwrap();
    assert!(
        module.resources[0]
            .describe()
            .contains("bookworm main contrib signed by the key in repo.asc"),
        "{}",
        module.resources[0].describe()
    );
    let repo = |fields: &str| {
        format!(r#"{{"kind":"apt-repository","uri":"file:/r","suite":"./",{fields}}}"#)
    };
    for (resource, said) in [
        (
            repo(r#""name":"../etc","key":"k""#),
            "resources[0].name: \"../etc\" is not a repository name",
        ),
        (repo(r#""key":"k""#), "resources[0].name: missing"),
        (
            repo(r#""name":"r""#),
            "resources[0].key: missing: the armored key",
        ),
        (
            repo(r#""name":"r","key":"k","key-file":"k.asc""#),
            "resources[0].key: give the key once",
        ),
        (
            repo(r#""name":"r","key-file":"k.asc""#),
            "resources[0].key-file: \"k.asc\" is not a file in the module's folder",
        ),
        (repo(r#""name":"r","key":"${nope}""#), "nope"),
    ] {
        let got = refused(&resource);
        assert!(got.contains(said), "{resource}: {got}");
    }
}

/// The author's guide has a row for every kind module.json may name, and the kinds an operator
/// writes first a section each: a kind added and not described fails here.
#[test]
fn the_guide_describes_every_resource_kind() {
    let guide = include_str!("../../../../catalogue/README.md");
    for kind in super::kinds().split(',').map(str::trim) {
        let row = format!("| `{kind}` | ");
        assert!(
            guide.lines().any(|l| l.starts_with(&row)),
            "the guide's table of resources lacks {kind}"
        );
    }
    for (kind, heading) in [
        ("package", "### Packages"),
        ("timer", "### Timers"),
        ("symlink", "### Symlinks"),
        ("sysctl", "### Kernel settings"),
        ("apt-repository", "### Apt repositories"),
        ("user", "### Users and groups"),
        ("group", "### Users and groups"),
    ] {
        let section = guide
            .split("\n### ")
            .find(|s| format!("### {s}").starts_with(heading))
            .unwrap_or_else(|| panic!("the guide has no section {heading} for {kind}"));
        assert!(
            section.contains(&format!("`{kind}`")),
            "{heading} does not name {kind}"
        );
    }
}
