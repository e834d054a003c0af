//! A machine cannot exhaust the operator's memory: every read from a machine is
//! bounded, and a machine that sends more fails alone, named with the bound, while the others
//! are applied. The helper on node2 is replaced by a program that prints endlessly on stdout,
//! node3's by one that does so on stderr; `push --all` and `check --all` run with their peak
//! memory read from `/proc` (and the address space capped, so a mesh that did hold it all would
//! die rather than take the host's memory).

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::{Mesh, Run, fed, node_result, on, ssh_command};

/// Reads its declaration, then answers on stdout for ever.
const ON_STDOUT: &str =
    "#!/bin/sh\ncat >/dev/null\nexec yes 'a machine that answers with far too much'\n";
/// The same on stderr.
const ON_STDERR: &str = "#!/bin/sh\ncat >/dev/null\nexec yes 'far too much' >&2\n";

/// Puts `program` in place of every helper on `node`, as its root could.
fn replace_helper(node: &str, program: &str) {
    let put = fed(
        ssh_command(
            node,
            "cat >/tmp/flood && for h in /var/lib/mesh/bin/mesh-host-*; do \
             cp /tmp/flood \"$h\" && chmod 0755 \"$h\"; done",
        ),
        program,
    );
    assert_eq!(put.status, 0, "{}", put.stderr);
}

/// Takes the stand-ins away again (even when the test fails): the next push uploads the helper.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        for node in ["node2", "node3"] {
            let _ = crate::util::ssh(node, "rm -f /var/lib/mesh/bin/mesh-host-* /tmp/flood");
        }
    }
}

/// Runs `cmd` with its address space capped at 4 GiB, and its peak resident memory (VmHWM, in
/// KiB) as last read from `/proc` before it ended.
fn peak(cmd: Command) -> (Run, u64) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut capped = Command::new("prlimit");
    capped
        .arg("--as=4294967296")
        .arg("--")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"));
    let mut child = capped.spawn().expect("mesh runs");
    let status_file = format!("/proc/{}/status", child.id());
    let mut most = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        // prlimit execs mesh in place: the same process
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            most = most.max(kib);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run {
        status: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(&out).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
    };
    (run, most)
}

/// node's failure in `results`: kind `helper`, naming the node, the stream and the bound.
fn refused_for_too_much(results: &serde_json::Value, node: &str, stream: &str, bound: &str) {
    let failed = node_result(results, node);
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["kind"], "helper", "{failed}");
    let reason = failed["reason"].as_str().unwrap_or_default();
    for want in [
        format!("{node}: "),
        format!("more than {bound}"),
        format!(" on {stream}, the most mesh reads"),
    ] {
        assert!(reason.contains(want.as_str()), "{want:?} in: {reason}");
    }
}

/// Peak memory allowed: the bound read from one machine (64 MiB and what a buffer grows to)
/// with the operator's own, far below what the machines sent.
const MOST_KIB: u64 = 400 * 1024;

#[test]
fn a_helper_that_answers_with_far_too_much_fails_alone_and_the_operators_memory_stays_bounded() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    for node in ["node1", "node2", "node3"] {
        mesh.run(&["assign", "motd", node]).ok();
    }
    // every machine has this helper now, so it is run, not uploaded
    mesh.run(&["push", "--all"]).ok();
    let _restore = Restore;
    replace_helper("node2", ON_STDOUT);
    replace_helper("node3", ON_STDERR);

    let (run, kib) = peak(mesh.command(&["push", "--all", "--json", "--timeout", "120"]));
    let pushed = serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "push --all gave no JSON ({e}), exit {}, peak {kib} KiB:\n{}\n{}",
            run.status, run.stdout, run.stderr
        )
    });
    assert_eq!(run.status, 2, "{pushed}");
    assert_eq!(
        node_result(&pushed, "node1")["outcome"],
        "applied",
        "{pushed}"
    );
    assert!(on("node1", "cat /etc/motd").contains("managed by mesh"));
    refused_for_too_much(&pushed, "node2", "stdout", "64.0 MiB (");
    refused_for_too_much(&pushed, "node3", "stderr", "1 MiB");
    eprintln!("push --all: peak resident memory {kib} KiB");
    assert!(
        kib < MOST_KIB,
        "push --all peaked at {kib} KiB of memory (at most {MOST_KIB})"
    );

    // the dry run reads through the same bounds
    let (run, kib) = peak(mesh.command(&["check", "--all", "--json", "--timeout", "120"]));
    let checked: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("check gave no JSON ({e}): {}{}", run.stdout, run.stderr));
    assert_eq!(
        node_result(&checked, "node1")["outcome"],
        "checked",
        "{checked}"
    );
    refused_for_too_much(&checked, "node2", "stdout", "64.0 MiB (");
    refused_for_too_much(&checked, "node3", "stderr", "1 MiB");
    eprintln!("check --all: peak resident memory {kib} KiB");
    assert!(kib < MOST_KIB, "check --all peaked at {kib} KiB");

    // the real helper back: the next push uploads it and every node is applied
    drop(_restore);
    let again = mesh.run(&["push", "--all", "--json"]).ok().json();
    for node in ["node2", "node3"] {
        assert_eq!(node_result(&again, node)["outcome"], "applied", "{again}");
    }
}
