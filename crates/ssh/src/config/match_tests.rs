//! `Match` read as OpenSSH 9.2 reads it: each case is put to this machine's `ssh -G` as well as
//! to mesh, and its answer (port and user, or the line refused) is written down from `ssh -G`.

use super::tests::openssh_g;
use super::*;

/// A configuration, the host (and `-l` user) looked up, and what `ssh -G` answered.
struct Case {
    text: &'static str,
    host: &'static str,
    user: Option<&'static str>,
    /// `port user hostname` as `ssh -G` printed them, or the line it refused.
    answer: Result<&'static str, usize>,
}

const fn case(text: &'static str, host: &'static str, answer: &'static str) -> Case {
    Case {
        text,
        host,
        user: None,
        answer: Ok(answer),
    }
}

const fn refused(text: &'static str, line: usize) -> Case {
    Case {
        text,
        host: "a",
        user: None,
        answer: Err(line),
    }
}

const CASES: &[Case] = &[
    // host: the HostName set so far, in lower case; read in its place, before and after Host
    case(
        "Match host real.example\n  Port 2201\nHost web\n  HostName Real.Example\nMatch host REAL.example\n  Port 2200\n",
        "web",
        "2200 root real.example",
    ),
    case(
        "Host A\n  HostName B\nMatch host b\n  Port 2200\n",
        "A",
        "2200 root b",
    ),
    case("Match host a\n  Port 2200\n", "A", "2200 root a"),
    case("Match host A\n  Port 2200\n", "a", "2200 root a"),
    case(
        "Match originalhost WEB\n  Port 2200\n",
        "web",
        "2200 root web",
    ),
    // user: the User set so far (or the local one); case counts
    case(
        "Match user bob\n  Port 2200\nHost *\n  User bob\nMatch user bob\n  Port 2201\n",
        "web",
        "2201 bob web",
    ),
    case(
        "Match user Bob\n  Port 2200\nHost *\n User bob\n",
        "web",
        "22 bob web",
    ),
    Case {
        text: "Match user bob\n  Port 2200\n",
        host: "web",
        user: Some("bob"),
        answer: Ok("2200 bob web"),
    },
    case("Match user root\n  Port 2200\n", "web", "2200 root web"),
    case(
        "Match localuser root\n  Port 2200\n",
        "web",
        "2200 root web",
    ),
    case("Match localuser Root\n  Port 2200\n", "web", "22 root web"),
    // comma lists, `!`, attribute names in any case, `=` and a trailing comment
    case("Match host a,!b*,c\n  Port 2200\n", "a", "2200 root a"),
    case("Match host a,!b*,c\n  Port 2200\n", "bx", "22 root bx"),
    case("Match !host a\n  Port 2200\n", "b", "2200 root b"),
    case("MATCH HOST a\n  Port 2200\n", "a", "2200 root a"),
    case("Match host=a\n  Port 2200\n", "a", "2200 root a"),
    case("Match host a # comment\n  Port 2200\n", "a", "2200 root a"),
    // all: alone, or after one criterion
    case("Match host a all\n  Port 2200\n", "a", "2200 root a"),
    case("Match host a !all\n  Port 2200\n", "a", "22 root a"),
    case("Match !all\n  Port 2200\n", "a", "22 root a"),
    refused("Match host a user b all\n  Port 2200\n", 1),
    refused("Match all host a\n  Port 2200\n", 1),
    refused("Match\n  Port 2200\n", 1),
    refused("Match host\n  Port 2200\n", 1),
    refused("Match foo x\n  Port 2200\n", 1),
    refused("Host a\n  Port 1\nMatch host a exec\n", 3),
    // canonical and final: only in the second pass, which only `final` asks for
    case("Match canonical\n  Port 2200\n", "web", "22 root web"),
    case("Match canonical all\n  Port 2200\n", "a", "22 root a"),
    case("Match final all\n  Port 2200\n", "a", "2200 root a"),
    case("Match !canonical\n  Port 2200\n", "a", "2200 root a"),
    case(
        "Match canonical\n  Port 2200\nMatch final\n  User x\n",
        "web",
        "2200 x web",
    ),
    case(
        "Match !final\n  Port 2200\nMatch final\n  Port 2201\n",
        "web",
        "2200 root web",
    ),
    case(
        "Match !canonical\n  User u\nMatch final\n Port 2200\nMatch canonical\n User v\n Port 2201\n",
        "a",
        "2200 u a",
    ),
    // in the final pass Host patterns take the host name, what the first pass set stays
    case(
        "Host web\n  HostName Real.Example\nMatch final\nHost real.example\n  Port 2200\n",
        "web",
        "2200 root real.example",
    ),
    case(
        "Host web\n  HostName Real.Example\nHost real.example\n  Port 2200\n",
        "web",
        "22 root real.example",
    ),
    case(
        "Match final host real.example\n  Port 2200\nHost web\n  HostName Real.Example\n",
        "web",
        "2200 root real.example",
    ),
    case(
        "Match host web\n  HostName other\nHost other\n  Port 2201\nMatch final\n",
        "web",
        "2201 root other",
    ),
    case(
        "Host nope\nMatch final\nHost real\n  Port 2200\nHost a\n  HostName Real\n",
        "a",
        "2200 root real",
    ),
    // CanonicalizeHostname yes/always asks for the second pass too (wherever it applies)
    case(
        "CanonicalizeHostname yes\nMatch canonical\n  Port 2200\n",
        "a",
        "2200 root a",
    ),
    case(
        "CanonicalizeHostname always\nMatch canonical\n  Port 2200\n",
        "a",
        "2200 root a",
    ),
    case(
        "CanonicalizeHostname no\nMatch canonical\n  Port 2200\n",
        "a",
        "22 root a",
    ),
    case(
        "Host b\n CanonicalizeHostname yes\nMatch canonical\n  Port 2200\n",
        "a",
        "22 root a",
    ),
    case(
        "Match canonical\n  Port 2200\nMatch all\n CanonicalizeHostname yes\n",
        "a",
        "2200 root a",
    ),
    refused("CanonicalizeHostname none\n", 1),
    // an exec ssh skips (a criterion before it failed) is no refusal
    case(
        "Match host other exec \"false\"\n  Port 2200\n",
        "a",
        "22 root a",
    ),
];

/// What `ssh -G` prints for the case, as `port user hostname`, or `Err` with its stderr.
fn ssh_says(file: &Path, case: &Case) -> Result<String, String> {
    let mut ssh = std::process::Command::new("ssh");
    ssh.args(["-G", "-F"]).arg(file);
    if let Some(user) = case.user {
        ssh.args(["-l", user]);
    }
    let out = ssh.arg(case.host).output().unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let g = String::from_utf8_lossy(&out.stdout).into_owned();
    let get = |k: &str| {
        g.lines()
            .find_map(|l| l.strip_prefix(&format!("{k} ")))
            .unwrap_or_default()
            .to_string()
    };
    Ok(format!(
        "{} {} {}",
        get("port"),
        get("user"),
        get("hostname")
    ))
}

/// The answers were written from `ssh -G` run as root (the user they name, and `Match user` and
/// `localuser` lines that must or must not match): run as another user they do not hold, so the
/// test says so and checks nothing.
fn written_as_this_user() -> bool {
    let me = crate::local_user();
    if me.as_deref() == Some("root") {
        return true;
    }
    eprintln!(
        "skipped: the Match cases were written from `ssh -G` as root, and this runs as {}",
        me.unwrap_or_default()
    );
    false
}

/// The same as mesh reads it, with OpenSSH's defaults where it says nothing.
fn mesh_says(c: &SshConfig, case: &Case) -> Result<String, ConfigError> {
    let h = c.lookup_as(case.host, case.user)?;
    let user = case
        .user
        .map(str::to_string)
        .or(h.user)
        .or_else(crate::local_user)
        .unwrap_or_default();
    let host = h.host_name.unwrap_or(case.host.to_ascii_lowercase());
    Ok(format!("{} {user} {host}", h.port.unwrap_or(22)))
}

#[test]
fn match_is_evaluated_in_its_place_as_openssh_evaluates_it() {
    if !written_as_this_user() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (i, case) in CASES.iter().enumerate() {
        let file = dir.path().join(format!("case{i}"));
        std::fs::write(&file, case.text).unwrap();
        let ssh = ssh_says(&file, case);
        let mut c = SshConfig::default();
        let mesh = c.add(&file, case.text).and_then(|()| mesh_says(&c, case));
        match case.answer {
            Ok(answer) => {
                assert_eq!(ssh.as_deref(), Ok(answer), "ssh, case {i}:\n{}", case.text);
                let mesh = mesh.unwrap_or_else(|e| panic!("case {i}: {e}\n{}", case.text));
                assert_eq!(mesh, answer, "mesh, case {i}:\n{}", case.text);
            }
            Err(line) => {
                let said = ssh.expect_err("ssh accepts it");
                assert!(said.contains(&format!("line {line}")), "case {i}: {said}");
                let e = mesh.expect_err("mesh accepts it");
                assert_eq!(e.line, Some(line), "case {i}: {e}");
            }
        }
    }
}

#[test]
fn the_final_pass_adds_identity_files_once_each_in_ssh_order() {
    let text = "Match final\nHost a\n  IdentityFile /k1\nHost real\n  IdentityFile /k2\n\
                Host *\n  IdentityFile /k3\n  HostName real\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config");
    std::fs::write(&file, text).unwrap();
    let out = std::process::Command::new("ssh")
        .args(["-G", "-F"])
        .arg(&file)
        .arg("a")
        .output()
        .unwrap();
    let ssh: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("identityfile /"))
        .map(|f| format!("/{f}"))
        .collect();
    assert_eq!(ssh, ["/k1", "/k3", "/k2"]);
    let mut c = SshConfig::default();
    c.add(&file, text).unwrap();
    let mesh: Vec<String> = c
        .lookup("a")
        .unwrap()
        .identity_files
        .into_iter()
        .map(|w| w.value)
        .collect();
    assert_eq!(mesh, ssh);
    assert_eq!(openssh_g(&file, "a")["hostname"], "real");
}

#[test]
fn a_match_exec_names_its_line_and_the_fix() {
    let mut c = SshConfig::default();
    c.add(
        Path::new("f"),
        "Host *\n  User u\nMatch user u exec \"test -e /x\"\n  Port 2\n",
    )
    .unwrap();
    let e = c.lookup("web").unwrap_err().to_string();
    assert!(
        e.starts_with("f:3: Match exec \"test -e /x\": mesh does not run"),
        "{e}"
    );
    assert!(e.contains("`Match host !web exec …`"), "{e}");
    assert_eq!(c.lookup_as("web", Some("other")).unwrap().port, None);
}

#[test]
fn an_include_inside_a_match_block_applies_where_the_match_does() {
    if !written_as_this_user() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("part");
    std::fs::write(&part, "Host *\n  Port 2200\n").unwrap();
    let cases = [
        // `ssh -G -F FILE a`: user bob, port 2200; then user root, port 22
        (
            format!(
                "Match user nobody\n  Include {0}\nMatch localuser root\n  Include {0}\n  User bob\n",
                part.display()
            ),
            "2200 bob a",
        ),
        (
            format!("Match user nobody\n  Include {}\n", part.display()),
            "22 root a",
        ),
    ];
    for (i, (text, answer)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("config{i}"));
        std::fs::write(&file, text).unwrap();
        let case = Case {
            text: "",
            host: "a",
            user: None,
            answer: Ok(answer),
        };
        assert_eq!(
            ssh_says(&file, &case).as_deref(),
            Ok(*answer),
            "ssh:\n{text}"
        );
        let mut c = SshConfig::default();
        c.add(&file, text).unwrap();
        assert_eq!(mesh_says(&c, &case).unwrap(), *answer, "mesh:\n{text}");
    }
}
