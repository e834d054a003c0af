//! The local user and home as OpenSSH 9.2 takes them: the passwd entry, whatever `$HOME` and
//! `$USER` say; only `Include ~/` follows `$HOME`. Each expected answer was written from running
//! `ssh` here (OpenSSH_9.2p1 Debian-2+deb12u6, as root, passwd home `/root`) with
//! `env HOME=/tmp/elsewhere USER=nobody LOGNAME=nobody`.

use super::*;

/// root's passwd entry on the machine the answers were taken on, `$HOME` elsewhere.
fn root_elsewhere() -> Local {
    Local {
        name: Some("root".into()),
        home: Some("/root".into()),
        uid: 0,
        env_home: Some("/tmp/elsewhere".into()),
    }
}

/// A passwd home and a `$HOME` elsewhere, each with an empty `.ssh/`, and root as their user.
fn two_homes() -> (tempfile::TempDir, tempfile::TempDir, Local) {
    let passwd = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    for dir in [&passwd, &elsewhere] {
        std::fs::create_dir(dir.path().join(".ssh")).unwrap();
    }
    let local = Local {
        home: Some(passwd.path().into()),
        env_home: Some(elsewhere.path().into()),
        ..root_elsewhere()
    };
    (passwd, elsewhere, local)
}

fn tokens() -> Tokens<'static> {
    Tokens {
        alias: "h",
        host: "127.0.0.1",
        user: "root",
        port: 47111,
    }
}

const IDENTITIES: &str = "Host h\n  HostName 127.0.0.1\n  Port 47111\n  IdentityFile ~/.ssh/k1\n  \
     IdentityFile %d/k2\n  IdentityFile %u-k3\n  IdentityFile ~root/k4\n  \
     IdentityFile ~daemon/k5-%u\n";

#[test]
fn identity_files_take_the_passwd_home_and_name_not_home_and_user() {
    // `ssh -v -F cfg h` against a listening port: "debug1: identity file /root/.ssh/k1 type -1" …
    let openssh = [
        "/root/.ssh/k1",
        "/root/k2",
        "root-k3",
        "/root/k4",
        "/usr/sbin/k5-root",
    ];
    let mut c = SshConfig::for_user(root_elsewhere());
    c.add(Path::new("cfg"), IDENTITIES).unwrap();
    let found = c.lookup("h").unwrap().identities(tokens()).unwrap();
    // ~daemon is daemon's passwd home, /usr/sbin on Debian
    assert_eq!(found, openssh.map(PathBuf::from));
}

#[test]
fn a_fake_passwd_entry_is_what_the_tokens_and_tilde_stand_for() {
    let ops = Local {
        name: Some("ops".into()),
        home: Some("/home/ops".into()),
        uid: 1000,
        env_home: Some("/tmp/elsewhere".into()),
    };
    let mut c = SshConfig::for_user(ops);
    c.add(
        Path::new("cfg"),
        "Host *\n  IdentityFile ~/.ssh/a\n  IdentityFile %d/%u-%i\n  IdentityFile ~ops/b\n",
    )
    .unwrap();
    let found = c.lookup("h").unwrap().identities(tokens()).unwrap();
    assert_eq!(
        found,
        ["/home/ops/.ssh/a", "/home/ops/ops-1000", "/home/ops/b"].map(PathBuf::from)
    );
}

#[test]
fn a_user_with_no_passwd_entry_is_refused_naming_the_line() {
    let mut c = SshConfig::for_user(root_elsewhere());
    c.add(
        Path::new("cfg"),
        "Host *\n  IdentityFile ~mesh-no-such-user/k\n",
    )
    .unwrap();
    let e = c
        .lookup("h")
        .unwrap()
        .identities(tokens())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cfg:2") && e.contains("~mesh-no-such-user"),
        "{e}"
    );
}

#[test]
fn the_users_own_file_is_in_the_passwd_home_not_home() {
    // HOME=/tmp/elsewhere with /tmp/elsewhere/.ssh/config saying `Host h / Port 2999`:
    // `ssh -G h` answers "port 22", reading /root/.ssh/config (which has none)
    let (passwd, elsewhere, local) = two_homes();
    for (dir, port) in [(&passwd, 2111), (&elsewhere, 2999)] {
        let text = format!("Host h\n  Port {port}\n");
        std::fs::write(dir.path().join(".ssh/config"), text).unwrap();
    }
    let c = SshConfig::load_as(local).unwrap();
    assert_eq!(c.lookup("h").unwrap().port, Some(2111));
}

#[test]
fn include_follows_home_as_openssh_glob_does_else_the_passwd_home() {
    // `Include ~/inc` with /tmp/elsewhere/inc saying Port 2777: `ssh -G -F cfg2 h` answers
    // "port 2777"; `Include inc2` with /tmp/elsewhere/.ssh/inc2 saying Port 2666: "port 2666";
    // with HOME unset (`env -u HOME`) `~/inc` is /root/inc
    let (passwd, elsewhere, local) = two_homes();
    std::fs::write(elsewhere.path().join("inc"), "Host h\n  Port 2777\n").unwrap();
    std::fs::write(elsewhere.path().join(".ssh/inc2"), "Host h\n  Port 2666\n").unwrap();
    std::fs::write(passwd.path().join("inc"), "Host h\n  Port 2555\n").unwrap();
    let port = |local: &Local, text: &str| {
        let mut c = SshConfig::for_user(local.clone());
        c.add(Path::new("cfg"), text).unwrap();
        c.lookup("h").unwrap().port
    };
    assert_eq!(port(&local, "Include ~/inc\n"), Some(2777));
    assert_eq!(port(&local, "Include inc2\n"), Some(2666));
    let unset = Local {
        env_home: None,
        ..local
    };
    assert_eq!(port(&unset, "Include ~/inc\n"), Some(2555));
}
