//! What OpenSSH refuses, mesh refuses, at the same line; what it accepts, mesh reads as it does.
//! Each case is put to the `ssh` of this machine (`ssh -G`, OpenSSH 9.2) as well as written down,
//! so the table cannot drift from what ssh really answers.

use super::tests::{openssh_g, ours};
use super::*;

/// A configuration and the host looked up, with OpenSSH 9.2's answer as `ssh -G` gave it: the
/// line it refuses, or the port and user it reads.
struct Case {
    text: &'static str,
    refused_at: Option<usize>,
    port: &'static str,
}

const CASES: &[Case] = &[
    // a misspelt keyword: refused wherever it is, not a silent port 22
    Case {
        text: "Host *\n  Prot 2200\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host other\n  Prot 2200\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host web\n  HostName h\nMatch host x\n  Prot 1\n",
        refused_at: Some(4),
        port: "",
    },
    // IgnoreUnknown before it, in a block that applies, lets it pass; after it or elsewhere not
    Case {
        text: "IgnoreUnknown Prot,Foo*\nHost *\n  Prot 2200\n  FooBar x\n",
        refused_at: None,
        port: "22",
    },
    Case {
        text: "Host *\n  Prot 2200\n  IgnoreUnknown Prot\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host other\n  IgnoreUnknown Prot\nHost *\n  Prot 2200\n",
        refused_at: Some(4),
        port: "",
    },
    // ports as a2port reads them
    Case {
        text: "Host *\n  Port 0\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host other\n  Port 0\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  Port 65536\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  Port nosuchservice\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  Port ssh\n",
        refused_at: None,
        port: "22",
    },
    Case {
        text: "Host *\n  Port http\n",
        refused_at: None,
        port: "80",
    },
    Case {
        text: "Host *\n  PORT=2200\n",
        refused_at: None,
        port: "2200",
    },
    // one value where one is taken
    Case {
        text: "Host *\n  Port 22 23\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  User a b\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host other\n  User a b\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  HostName a b\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  IdentityFile a b\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  IdentitiesOnly yes no\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  ConnectTimeout 1 2\n",
        refused_at: Some(2),
        port: "",
    },
    Case {
        text: "Host *\n  ServerAliveInterval 1 2\n",
        refused_at: Some(2),
        port: "",
    },
    // ProxyJump reads its first word only; keywords mesh does not use are accepted
    Case {
        text: "Host *\n  ProxyJump a b\n",
        refused_at: None,
        port: "22",
    },
    Case {
        text: "Host *\n  SendEnv LANG LC_*\n  HashKnownHosts yes\n  GSSAPIAuthentication yes\n  Protocol 2\n",
        refused_at: None,
        port: "22",
    },
];

#[test]
fn what_openssh_refuses_mesh_refuses_at_the_same_line_and_what_it_accepts_mesh_reads_alike() {
    let dir = tempfile::tempdir().unwrap();
    for (i, case) in CASES.iter().enumerate() {
        let file = dir.path().join(format!("case{i}"));
        std::fs::write(&file, case.text).unwrap();
        let ssh = std::process::Command::new("ssh")
            .args(["-G", "-F"])
            .arg(&file)
            .arg("web")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&ssh.stderr);
        let mut c = SshConfig::default();
        c.add(&file, case.text).unwrap();
        match case.refused_at {
            Some(line) => {
                assert!(!ssh.status.success(), "ssh accepts case {i}: {}", case.text);
                assert!(said.contains(&format!("line {line}")), "ssh: {said}");
                let e = c.lookup("web").unwrap_err();
                assert_eq!(e.line, Some(line), "case {i}: {e}\n{}", case.text);
            }
            None => {
                assert!(ssh.status.success(), "ssh refuses case {i}: {said}");
                let ours = ours(&c, "web");
                assert_eq!(ours, openssh_g(&file, "web"), "case {i}:\n{}", case.text);
                assert_eq!(ours["port"], case.port, "case {i}");
            }
        }
    }
}

#[test]
fn a_refusal_says_what_openssh_says() {
    let mut c = SshConfig::default();
    c.add(Path::new("f"), "Host *\n  Prot 2200\n").unwrap();
    let refused = c.lookup("web").unwrap_err();
    assert!(
        matches!(&*refused.reason, Reason::BadOption(k) if k == "prot"),
        "{refused:?}"
    );
    assert_eq!(refused.to_string(), "f:2: Bad configuration option: prot");
    let mut c = SshConfig::default();
    c.add(Path::new("f"), "Host *\n  IdentityFile a b\n")
        .unwrap();
    assert_eq!(
        c.lookup("web").unwrap_err().to_string(),
        "f:2: keyword identityfile extra arguments at end of line"
    );
}

#[test]
fn an_identity_file_written_twice_is_offered_once() {
    let mut c = SshConfig::default();
    c.add(
        Path::new("f"),
        "Host web\n  IdentityFile ~/.ssh/a\nHost *\n  IdentityFile ~/.ssh/a\n  IdentityFile ~/.ssh/b\n",
    )
    .unwrap();
    let files: Vec<_> = c
        .lookup("web")
        .unwrap()
        .identity_files
        .into_iter()
        .map(|w| w.value)
        .collect();
    assert_eq!(files, ["~/.ssh/a", "~/.ssh/b"]);
}

#[test]
fn an_identity_file_reads_the_environment_as_openssh_does() {
    let mut c = SshConfig::default();
    c.add(Path::new("f"), "Host *\n  IdentityFile ${HOME}/k\n")
        .unwrap();
    let tokens = Tokens {
        alias: "web",
        host: "web",
        user: "root",
        port: 22,
    };
    let home = std::env::var("HOME").unwrap();
    let found = c.lookup("web").unwrap().identities(tokens).unwrap();
    assert_eq!(found, [PathBuf::from(format!("{home}/k"))]);
    let mut c = SshConfig::default();
    c.add(
        Path::new("f"),
        "Host *\n  IdentityFile ${MESH_NOT_SET_ANYWHERE}/k\n",
    )
    .unwrap();
    let e = c
        .lookup("web")
        .unwrap()
        .identities(tokens)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("f:2") && e.contains("MESH_NOT_SET_ANYWHERE"),
        "{e}"
    );
}

#[test]
fn host_patterns_match_the_name_as_given_and_the_host_name_is_lowered_as_in_openssh() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("Host Web\n  Port 2\n", "web"),
        ("Host Web\n  Port 2\n", "Web"),
        ("Host web\n  Port 2\n", "WEB"),
        ("Host *\n  HostName MyHost.Example\n", "web"),
        ("Host *\n  HostName %h.Example\n", "MiXed"),
        ("Host !Web,*\n  Port 3\n", "Web"),
        ("Host !Web,*\n  Port 3\n", "web"),
    ];
    for (i, (text, host)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("case{i}"));
        std::fs::write(&file, text).unwrap();
        let mut c = SshConfig::default();
        c.add(&file, text).unwrap();
        assert_eq!(ours(&c, host), openssh_g(&file, host), "{host}:\n{text}");
    }
}
