use super::*;

fn spec() -> UserSpec {
    UserSpec {
        name: "alice".into(),
        system: false,
        uid: None,
        home: None,
        shell: Some("/bin/bash".into()),
        groups: Some(vec!["ops".into(), "adm".into()]),
        authorized_keys: None,
        remove_home: false,
    }
}

#[test]
fn useradd_makes_a_login_home_and_its_own_group_from_an_argv() {
    assert_eq!(
        useradd_args(&spec(), false).join(" "),
        "--user-group --home-dir /home/alice --create-home --shell /bin/bash --groups ops,adm"
    );
    let mut system = spec();
    system.system = true;
    system.groups = None;
    system.shell = None;
    assert_eq!(
        useradd_args(&system, true).join(" "),
        "--system --gid alice --no-create-home"
    );
}

#[test]
fn a_found_user_differs_in_the_shell_and_groups_it_declares_only() {
    let p = Passwd {
        uid: 1001,
        gid: 1001,
        home: "/home/alice".into(),
        shell: "/bin/sh".into(),
    };
    let found = vec!["adm".to_string(), "ops".to_string()];
    let c = changes(&spec(), &p, &found);
    assert_eq!(c, vec![("shell", "/bin/sh".into(), "/bin/bash".into())]);
    assert_eq!(usermod_args(&spec(), &c).join(" "), "--shell /bin/bash");
    let mut none = spec();
    none.shell = None;
    none.groups = None;
    assert!(changes(&none, &p, &[]).is_empty());
    assert!(
        refuse_found(
            &spec(),
            &Passwd {
                uid: 33,
                ..p.clone()
            },
            false
        )
        .is_err()
    );
    assert!(
        refuse_found(
            &spec(),
            &Passwd {
                uid: 33,
                ..p.clone()
            },
            true
        )
        .is_ok()
    );
    assert!(refuse_found(&spec(), &Passwd { uid: 0, ..p }, true).is_err());
}
