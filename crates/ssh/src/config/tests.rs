//! The configuration read against what `ssh` makes of the same files.

use super::*;
use std::collections::BTreeMap;

fn config(user: &str, system: &str) -> SshConfig {
    let mut c = SshConfig::default();
    c.add(Path::new("user"), user).unwrap();
    c.add(Path::new("system"), system).unwrap();
    c
}

#[test]
fn first_value_wins_user_file_before_system_and_identities_add_up() {
    let c = config(
        "# mine\nHost web web2\n  HostName 192.0.2.7\n  Port=2222\n  IdentityFile ~/.ssh/web\n\
         Host *\n  User deploy\n  Port 22\n  IdentityFile \"/keys/all %r\"\n",
        "Host *\n  User admin\n  IdentitiesOnly yes\n  ConnectTimeout 7\n",
    );
    let home = std::env::var("HOME").unwrap();
    let web = c.lookup("web").unwrap();
    assert_eq!(web.host_name.as_deref(), Some("192.0.2.7"));
    assert_eq!(web.port, Some(2222));
    assert_eq!(web.user.as_deref(), Some("deploy"));
    assert_eq!(web.identities_only, Some(true));
    assert_eq!(web.connect_timeout, Some(Duration::from_secs(7)));
    let tokens = Tokens {
        alias: "web",
        host: "192.0.2.7",
        user: "deploy",
        port: 2222,
    };
    assert_eq!(
        web.identities(tokens).unwrap(),
        vec![
            PathBuf::from(format!("{home}/.ssh/web")),
            PathBuf::from("/keys/all deploy")
        ]
    );
    let other = c.lookup("db").unwrap();
    assert_eq!(other.host_name, None);
    assert_eq!(other.port, Some(22));
}

#[test]
fn patterns_wildcards_and_negation() {
    let c = config(
        "Host *.internal !secret.internal\n  ProxyJump bastion,admin@gw:2200\n\
         Host bastion\n  ProxyJump none\n  HostName %h.example.org\n",
        "",
    );
    assert_eq!(
        c.lookup("db.internal").unwrap().proxy_jump,
        Some(vec!["bastion".into(), "admin@gw:2200".into()])
    );
    assert_eq!(c.lookup("secret.internal").unwrap().proxy_jump, None);
    // case counts, as in OpenSSH (`ssh -G DB.Internal` does not take `Host *.internal`)
    assert_eq!(c.lookup("DB.Internal").unwrap().proxy_jump, None);
    let bastion = c.lookup("bastion").unwrap();
    assert_eq!(bastion.proxy_jump, Some(vec![]));
    assert_eq!(bastion.host_name.as_deref(), Some("bastion.example.org"));
    assert!(wildcard("web-?", "web-1") && !wildcard("web-?", "web-12"));
    assert!(wildcard("*", "") && wildcard("a*b*c", "axxbyyc") && !wildcard("a*b", "ac"));
}

#[test]
fn a_match_exec_ssh_would_run_is_refused_naming_its_line_and_one_it_skips_is_not() {
    let c = config(
        "User early\nSendEnv\nMatch host web exec \"true\"\n  Port 1\nMatch all\n  Port 2\n",
        "",
    );
    let e = c.lookup("web").unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.to_string().contains("Match host !web exec"), "{e}");
    let other = c.lookup("db").unwrap();
    assert_eq!(other.user.as_deref(), Some("early"));
    assert_eq!(other.port, Some(2));
}

#[test]
fn a_bad_value_names_the_file_and_line() {
    let c = config("Host web\n  Port many\n", "");
    let e = c.lookup("web").unwrap_err().to_string();
    assert_eq!(
        e,
        "user:2: Bad port \"many\": 1 to 65535, or a service name of /etc/services"
    );
    let mut bad = SshConfig::default();
    let e = bad.add(Path::new("f"), "Host\n").unwrap_err().to_string();
    assert!(e.starts_with("f:1:"), "{e}");
    assert!(bad.add(Path::new("f"), "User \"x\n").is_err());
}

/// The identity files OpenSSH would offer for `host` (`-l user` if given): `ssh -v` says
/// each before it connects (through a ProxyCommand that ends at once, so offline).
fn openssh_identities(file: &Path, host: &str, user: Option<&str>) -> Vec<PathBuf> {
    let mut ssh = std::process::Command::new("ssh");
    ssh.args(["-v", "-o", "ProxyCommand=true", "-o", "BatchMode=yes", "-F"])
        .arg(file);
    if let Some(user) = user {
        ssh.args(["-l", user]);
    }
    let out = ssh.args([host, "true"]).output().unwrap();
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("debug1: identity file "))
        .filter_map(|l| l.strip_suffix(" type -1"))
        .filter(|l| !l.ends_with("-cert"))
        .map(PathBuf::from)
        .collect()
}

#[test]
fn identity_file_tokens_expand_as_openssh_expands_them() {
    let text = "Host web\n  HostName %h.example.org\n  User deploy\n  Port 2200\n\
                IdentityFile /k/%h-%r-%%-%n-%p\n  IdentityFile /k/none\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config");
    std::fs::write(&file, text).unwrap();
    let mut c = SshConfig::default();
    c.add(&file, text).unwrap();
    let web = c.lookup("web").unwrap();
    let host = web.host_name.clone().unwrap();
    for (given, user) in [(None, "deploy"), (Some("other"), "other")] {
        let ours = web
            .identities(Tokens {
                alias: "web",
                host: &host,
                user,
                port: 2200,
            })
            .unwrap();
        assert_eq!(ours, openssh_identities(&file, "web", given), "{given:?}");
        assert_eq!(
            ours[0],
            PathBuf::from(format!("/k/web.example.org-{user}-%-web-2200"))
        );
    }
    let odd = config("Host q\n  IdentityFile /k/%x\n", "");
    let tokens = Tokens {
        alias: "q",
        host: "q",
        user: "root",
        port: 22,
    };
    let e = odd
        .lookup("q")
        .unwrap()
        .identities(tokens)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("user:2: IdentityFile \"/k/%x\": %x"), "{e}");
    let q5 = config("Host q5\n  Hostname %h.example.%%\n", "");
    assert_eq!(
        q5.lookup("q5").unwrap().host_name.as_deref(),
        Some("q5.example.%")
    );
}

/// What `ssh -G` says of these ServerAliveInterval values: seconds, or refused.
#[test]
fn time_values_are_read_and_bounded_as_openssh_does() {
    for (value, seconds) in [
        ("2147483647", Some(2147483647)),
        ("1h30m", Some(5400)),
        ("1M", Some(60)),
        ("0", Some(0)),
        ("9223372036854775807", None),
        ("2147483648", None),
        ("5x", None),
        ("-1", None),
        ("1w1w", Some(1209600)),
    ] {
        let c = config(&format!("Host x\n  ServerAliveInterval {value}\n"), "");
        let got = c.lookup("x").map(|h| h.server_alive_interval);
        match seconds {
            Some(s) => assert_eq!(got.unwrap(), Some(Duration::from_secs(s)), "{value}"),
            None => {
                let e = got.unwrap_err().to_string();
                assert!(e.starts_with("user:2: ") && e.contains("at most"), "{e}");
            }
        }
    }
    let c = config("Host x\n  ConnectTimeout 0\n", "");
    assert_eq!(c.lookup("x").unwrap().connect_timeout, None);
}

/// What `ssh -G -F file host` prints for the keywords mesh acts on.
pub(super) fn openssh_g(file: &Path, host: &str) -> BTreeMap<String, String> {
    let out = std::process::Command::new("ssh")
        .args(["-G", "-F"])
        .arg(file)
        .arg(host)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(k, _)| ["user", "port", "hostname", "proxyjump", "proxycommand"].contains(k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The same keywords as mesh reads them, with OpenSSH's defaults where it says nothing.
pub(super) fn ours(c: &SshConfig, host: &str) -> BTreeMap<String, String> {
    let h = c.lookup(host).unwrap();
    let local = crate::local_user().unwrap();
    let mut out = BTreeMap::from([
        ("user".to_string(), h.user.unwrap_or(local)),
        ("port".to_string(), h.port.unwrap_or(22).to_string()),
        (
            "hostname".to_string(),
            h.host_name.unwrap_or(host.to_ascii_lowercase()),
        ),
    ]);
    if let Some(jump) = h.proxy_jump.filter(|j| !j.is_empty()) {
        out.insert("proxyjump".into(), jump.join(","));
    }
    if let Some(command) = h.proxy_command {
        out.insert("proxycommand".into(), command.value);
    }
    out
}

/// `files` written under a temp dir (`{dir}` in their text stands for it), the first read.
fn written(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf, SshConfig) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = text.replace("{dir}", dir.path().to_str().unwrap());
        std::fs::write(path, text).unwrap();
    }
    let main = dir.path().join(files[0].0);
    let mut c = SshConfig::default();
    c.add_from(&main, &std::fs::read_to_string(&main).unwrap(), dir.path())
        .unwrap();
    (dir, main, c)
}

#[test]
fn include_reads_globbed_files_in_order_only_where_its_block_applies_as_ssh_does() {
    let (_dir, main, c) = written(&[
        (
            "config",
            "Include {dir}/conf.d/*.conf\nHost inner\n  Include {dir}/in?ide/*\n  Port 9\n\
             Host *\n  User nobody\n",
        ),
        ("conf.d/b.conf", "Host web\n  Port 2202\n  ProxyJump gw\n"),
        (
            "conf.d/a.conf",
            "Host web\n  User alice\n  Port 2201\nHost db\n  HostName 192.0.2.4\n",
        ),
        ("conf.d/.hidden.conf", "Port 1\n"),
        ("conf.d/skip.txt", "Port 2\n"),
        ("inside/x", "User inner-user\nHost other\n  Port 7\n"),
    ]);
    for host in ["web", "db", "inner", "other", "elsewhere"] {
        assert_eq!(ours(&c, host), openssh_g(&main, host), "{host}");
    }
    assert_eq!(c.lookup("web").unwrap().port, Some(2201));
    assert_eq!(
        c.lookup("inner").unwrap().user.as_deref(),
        Some("inner-user")
    );
    assert_eq!(c.lookup("other").unwrap().port, None);
}

#[test]
fn a_relative_include_is_read_from_the_files_folder_and_nesting_is_bounded() {
    let (dir, _, c) = written(&[
        ("config", "Include conf.d/*.conf\n"),
        (
            "conf.d/jump.conf",
            "Host 192.0.2.13\n  ProxyJump 192.0.2.11\n",
        ),
    ]);
    assert_eq!(
        c.lookup("192.0.2.13").unwrap().proxy_jump,
        Some(vec!["192.0.2.11".to_string()])
    );
    let own = dir.path().join("self");
    std::fs::write(&own, format!("Include {}\n", own.display())).unwrap();
    let mut looped = SshConfig::default();
    let e = looped
        .add_from(&own, &std::fs::read_to_string(&own).unwrap(), dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("self:1: Include nested more than 16 deep"),
        "{e}"
    );
    let fifo = dir.path().join("fifo.conf");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let mut trapped = SshConfig::default();
    let e = trapped
        .add_from(Path::new("main"), "Include fifo.conf\n", dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("main:1: Include fifo.conf: ") && e.contains("FIFO"),
        "{e}"
    );
}

#[test]
fn the_first_of_proxycommand_and_proxyjump_wins_as_in_ssh() {
    let (_dir, main, c) = written(&[(
        "config",
        "Host a\n  ProxyCommand nc %h %p\n  ProxyJump gw\nHost b\n  ProxyJump gw\n  ProxyCommand nc\n\
         Host c\n  ProxyCommand none\n  ProxyJump gw\n",
    )]);
    for host in ["a", "b", "c"] {
        assert_eq!(ours(&c, host), openssh_g(&main, host), "{host}");
    }
    let a = c.lookup("a").unwrap();
    assert_eq!(
        (a.proxy_jump, a.proxy_command.map(|p| p.at)),
        (None, Some(format!("{}:2", main.display())))
    );
}

#[test]
fn every_value_found_knows_the_file_and_line_it_was_first_written_on() {
    let c = config(
        "Host web\n  Port 2222\n  ProxyCommand nc %h %p\nHost *\n  Port 22\n  User deploy\n",
        "Host *\n  User admin\n  IdentitiesOnly yes\n  ServerAliveInterval 0\n  ProxyJump gw\n",
    );
    let web = c.lookup("web").unwrap();
    let at: Vec<(&str, &str)> = web
        .at
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        at,
        vec![
            ("identitiesonly", "system:3"),
            ("port", "user:2"),
            // ProxyCommand came first: the slot's line is its, not the ProxyJump's
            ("proxyjump", "user:3"),
            ("serveraliveinterval", "system:4"),
            ("user", "user:6"),
        ]
    );
}
