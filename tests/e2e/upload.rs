//! Storing the helper on a machine: what arrives incomplete (a connection dropped halfway) never
//! takes the helper's name, so the next push sends it again rather than failing for ever; sent
//! ahead of its run, it is stored and run in one round trip, or skipped where the machine has it.

use mesh::push::helper::{Helper, STORED};
use mesh::push::transport::Call;
use mesh::wire::{EXIT_NOT_STORED, Mode};

use crate::util::{Mesh, Run, node_result, on, ssh_command};

/// Runs mesh's own upload command on `node` with `input` as what arrived of the helper.
fn upload(node: &str, command: &str, input: &[u8]) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = ssh_command(node, command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh runs");
    // a short write then end of input: what `cat` sees when the operator's connection drops
    let _ = child.stdin.take().expect("stdin").write_all(input);
    Run::from(child.wait_with_output().expect("ssh ends"))
}

/// The embedded helper and its path on `node`, taken off it first (with any part of it).
fn without_helper(node: &str) -> (Helper, String) {
    let helper = Helper::embedded();
    let path = helper.remote_path();
    on(node, &format!("rm -f {path} {path}.part*"));
    (helper, path)
}

/// Neither the helper nor a part of it is on `node` at `path`.
fn assert_nothing_stored(node: &str, path: &str) {
    let found = on(node, &format!("ls {path} {path}.part* 2>/dev/null; true"));
    assert_eq!(found.trim(), "", "nothing of it is stored");
}

#[test]
fn a_helper_that_arrives_incomplete_or_changed_is_not_stored_and_the_next_push_sends_it_whole() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let (helper, path) = without_helper("node3");

    let half = &helper.gzipped()[..helper.gzipped().len() / 2];
    let run = upload("node3", &helper.upload_command(false), half);
    assert_ne!(run.status, 0, "an incomplete helper is refused");
    assert!(run.stderr.contains("incomplete"), "{}", run.stderr);
    assert_nothing_stored("node3", &path);

    // the helper with one byte changed, gzipped whole: `gzip` unpacks it without a complaint,
    // so only the digest the launcher checks can refuse it
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(helper.gzipped()),
        &mut bytes,
    )
    .expect("the embedded helper unpacks");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &bytes).expect("gzip");
    let forged = gz.finish().expect("gzip");
    let run = upload("node3", &helper.upload_command(false), &forged);
    assert_eq!(run.status, EXIT_NOT_STORED as i32, "{}", run.stderr);
    assert!(run.stderr.contains("changed"), "{}", run.stderr);
    assert_nothing_stored("node3", &path);

    mesh.run(&["assign", "motd", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    let stored = on("node3", &format!("sha256sum < {path}"));
    assert!(stored.starts_with(helper.sha256()), "{stored}");
}

/// Puts node3's `b2sum` back when the test ends, passed or failed.
struct B2sumBack;

impl Drop for B2sumBack {
    fn drop(&mut self) {
        on(
            "node3",
            "if [ -e /usr/bin/b2sum.away ]; then mv /usr/bin/b2sum.away /usr/bin/b2sum; fi",
        );
    }
}

#[test]
fn a_machine_without_b2sum_is_told_what_it_lacks_and_nothing_is_stored() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let (helper, path) = without_helper("node3");
    on("node3", "mv /usr/bin/b2sum /usr/bin/b2sum.away");
    let back = B2sumBack;

    mesh.run(&["assign", "motd", "node3"]).ok();
    let push = mesh.run(&["push", "node3"]);
    assert_ne!(push.status, 0, "{}", push.stdout);
    let said = format!("{}{}", push.stdout, push.stderr);
    for words in ["Linux x86_64 without b2sum", "coreutils 8.26 or later"] {
        assert!(said.contains(words), "{said}");
    }
    assert!(!said.contains("arrived incomplete"), "{said}");
    assert_nothing_stored("node3", &path);

    drop(back);
    mesh.run(&["push", "node3"]).ok();
    let stored = on("node3", &format!("sha256sum < {path}"));
    assert!(stored.starts_with(helper.sha256()), "{stored}");
}

const LARGE: &str = r#"{
  "name": "large", "version": "1", "description": "One file of 3 MB: a declaration past sshd's 2 MiB window.",
  "resources": [{"kind": "file", "path": "/srv/mesh-large.txt", "template": "large.txt"}]
}"#;

#[test]
fn a_known_machine_that_lost_its_helper_is_sent_it_though_the_declaration_is_larger_than_sshds_window()
 {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let text: String = (0..100_000)
        .map(|i| format!("line {i:>24} of a large file\n"))
        .collect();
    assert!(text.len() > 3 << 20, "{}", text.len());
    mesh.module("large", LARGE, &[("large.txt", &text)]);
    mesh.run(&["assign", "large", "node3"]).ok();
    mesh.run(&["push", "node3"]).code(0);
    let (helper, path) = without_helper("node3");

    // the first run finds no helper and ends without reading its 3 MB input; the operator
    // hears it end (it waited for a window that never opened, until the timeout) and sends
    // the helper with a second run
    let run = mesh.run(&["push", "--timeout", "60", "node3"]).code(0);
    assert!(run.stdout.contains("helper uploaded"), "{}", run.stdout);
    let stored = on("node3", &format!("sha256sum < {path}"));
    assert!(stored.starts_with(helper.sha256()), "{stored}");
    assert_eq!(
        on("node3", "wc -c < /srv/mesh-large.txt").trim(),
        text.len().to_string()
    );
    mesh.run(&["unassign", "large", "node3"]).ok();
    mesh.run(&["push", "node3"]).code(0);
}

#[test]
fn a_helper_sent_ahead_of_its_run_that_arrives_incomplete_is_not_stored_and_nothing_runs() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let (helper, path) = without_helper("node3");
    let command = helper.run_storing_command(Call::Run(Mode::DryRun), false);

    // half the helper, then what would be the helper's input: the launcher must not take the
    // input for the rest of the helper, store a part, or run anything
    let mut input = helper.gzipped()[..helper.gzipped().len() / 2].to_vec();
    input.extend_from_slice(br#"{"version":1,"node":"node3","resources":[]}"#);
    let run = upload("node3", &command, &input);
    assert_eq!(run.status, EXIT_NOT_STORED as i32, "{}", run.stderr);
    assert!(run.stderr.contains("incomplete"), "{}", run.stderr);
    assert!(!run.stderr.contains(STORED), "{}", run.stderr);
    assert_eq!(run.stdout, "", "nothing ran");
    assert_nothing_stored("node3", &path);

    // the whole helper then the input: stored, said, and run on exactly that input (a dry run
    // of nothing answers a report)
    let mut input = helper.gzipped().to_vec();
    input.extend_from_slice(br#"{"version":1,"node":"node3","resources":[]}"#);
    let run = upload("node3", &command, &input);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.starts_with(STORED), "{}", run.stderr);
    assert!(run.stdout.contains("\"hostname\""), "{}", run.stdout);
    let stored = on("node3", &format!("sha256sum < {path}"));
    assert!(stored.starts_with(helper.sha256()), "{stored}");

    // a machine that has it skips the bytes sent ahead, says nothing of storing, and runs
    let run = upload("node3", &command, &input);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(!run.stderr.contains(STORED), "{}", run.stderr);
    assert!(run.stdout.contains("\"hostname\""), "{}", run.stdout);
}

#[test]
fn a_node_the_inventory_knows_is_sent_the_helper_only_when_it_says_it_lacks_it() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let helper = Helper::embedded();
    let path = helper.remote_path();
    mesh.run(&["assign", "motd", "node2"]).ok();
    // the inventory has never heard from node2: the helper goes with the first run, and is said
    // stored only where it was not there
    let had = ssh_command("node2", &format!("test -x {path}"))
        .status()
        .expect("ssh runs")
        .success();
    let first = mesh.run(&["push", "node2", "--json"]).ok().json();
    assert_eq!(node_result(&first, "node2")["uploaded"], !had, "{first}");

    // now it knows node2: a push runs the helper first, and only a machine that lacks it gets it
    on("node2", &format!("rm -f {path}"));
    let again = mesh.run(&["push", "-v", "node2"]).ok();
    assert!(
        again.stderr.contains("node2: uploading the helper")
            || again.stdout.contains("node2: uploading the helper"),
        "{}{}",
        again.stdout,
        again.stderr
    );
    assert!(
        again.stdout.contains("(helper uploaded)"),
        "{}",
        again.stdout
    );
    let stored = on("node2", &format!("sha256sum < {path}"));
    assert!(stored.starts_with(helper.sha256()), "{stored}");
    let third = mesh.run(&["push", "node2", "--json"]).ok().json();
    assert_eq!(node_result(&third, "node2")["uploaded"], false, "{third}");
}

#[test]
fn two_inventories_pushing_to_one_fresh_machine_at_once_both_run_and_neither_says_it_arrived_broken()
 {
    let first = Mesh::new();
    let Some(_lab) = first.with_lab() else {
        return;
    };
    let helper = Helper::embedded();
    let path = helper.remote_path();
    for round in 0..6 {
        // two operators who never heard from node3, and a node3 that has nothing of the mesh
        let (a, b) = (Mesh::new(), Mesh::new());
        for mesh in [&a, &b] {
            mesh.run(&["lab", "up", "3"]).ok();
            mesh.run(&["assign", "motd", "node3"]).ok();
        }
        // and one part a store cut short left there hours ago, which an apply sweeps while the
        // other's store is going on
        on(
            "node3",
            &format!(
                "rm -rf /var/lib/mesh /etc/motd && mkdir -p /var/lib/mesh/bin && \
                 head -c 4096 /dev/urandom > {path}.part.1 && touch -d '2 hours ago' {path}.part.1"
            ),
        );
        let pushes: Vec<_> = [&a, &b]
            .iter()
            .map(|mesh| {
                mesh.command(&["push", "node3", "--json"])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("mesh runs")
            })
            .collect();
        let results: Vec<serde_json::Value> = pushes
            .into_iter()
            .map(|p| {
                let run = Run::from(p.wait_with_output().expect("mesh ends"));
                node_result(&run.json(), "node3").clone()
            })
            .collect();
        for r in &results {
            // the whole helper was sent both times: neither may say it arrived broken, nor fail
            // to start it (another's store still writing the file it runs)
            let said = r.to_string();
            assert!(
                !said.contains("arrive") && !said.contains("Text file busy"),
                "round {round}: {said}"
            );
            assert!(
                r["outcome"] == "applied" || said.contains("another mesh-host is applying"),
                "round {round}: {said}"
            );
        }
        // both may have stored it (each found it missing), but not neither: node3 had none
        let uploaded = results.iter().filter(|r| r["uploaded"] == true).count();
        if results.iter().all(|r| r["outcome"] == "applied") {
            assert!(uploaded >= 1, "round {round}: {results:?}");
        }
        let stored = on("node3", &format!("sha256sum < {path}"));
        assert!(
            stored.starts_with(helper.sha256()),
            "round {round}: {stored}"
        );
        // the stale part went, and neither store left its own behind
        if results.iter().any(|r| r["outcome"] == "applied") {
            let parts = on("node3", &format!("ls {path}.part* 2>/dev/null; true"));
            assert_eq!(parts.trim(), "", "round {round}");
        }
    }
}

#[test]
fn a_machine_whose_login_shell_says_a_line_on_stderr_is_still_said_to_have_been_sent_the_helper() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let helper = Helper::embedded();
    let path = helper.remote_path();
    // bash run by sshd reads ~/.bashrc for a command too: a banner there comes before anything
    // the launcher says (as would sudo's "unable to resolve host" warning)
    on(
        "node1",
        "cp /root/.bashrc /root/.bashrc.attack36 && \
         sed -i '1i echo \"welcome to node1\" >&2' /root/.bashrc",
    );
    on("node1", "rm -rf /var/lib/mesh /etc/motd");
    mesh.run(&["assign", "motd", "node1"]).ok();
    let pushed = mesh.run(&["push", "node1", "--json"]);
    let was_stored = on("node1", &format!("sha256sum < {path}"));
    on("node1", "mv /root/.bashrc.attack36 /root/.bashrc");
    let pushed = pushed.ok().json();
    assert!(was_stored.starts_with(helper.sha256()), "{was_stored}");
    assert_eq!(
        node_result(&pushed, "node1")["uploaded"],
        true,
        "this push stored the helper: {pushed}"
    );
}

#[test]
fn the_helper_sent_ahead_reads_exactly_the_declaration_whatever_its_size() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let helper = Helper::embedded();
    let path = helper.remote_path();
    let command = helper.run_storing_command(Call::Run(Mode::DryRun), false);
    for size in [
        0usize,
        1,
        4095,
        65_535,
        65_536,
        65_537,
        (2 << 20) + 1,
        5 << 20,
    ] {
        for present in [false, true] {
            if !present {
                on("node3", &format!("rm -f {path}"));
            }
            // whitespace before the closing brace: a byte of the helper or a cut anywhere
            // makes it unreadable
            let mut input = helper.gzipped().to_vec();
            input.extend_from_slice(br#"{"version":1,"node":"node3","resources":[]"#);
            input.extend(std::iter::repeat_n(b' ', size));
            input.push(b'}');
            let run = upload("node3", &command, &input);
            assert_eq!(
                run.status, 0,
                "size {size}, present {present}: {}",
                run.stderr
            );
            assert_eq!(run.stderr.starts_with(STORED), !present, "{}", run.stderr);
            assert!(run.stdout.contains("\"hostname\""), "{}", run.stdout);
        }
    }
}

#[test]
fn a_part_that_a_store_cut_short_left_is_removed_by_a_later_apply_once_it_is_an_hour_old() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let path = Helper::embedded().remote_path();
    // what launchers killed mid-store left: one two hours ago, one a moment ago (a store that
    // may still be going on)
    on(
        "node1",
        &format!(
            "mkdir -p /var/lib/mesh/bin && head -c 4096 /dev/urandom > {path}.part.11 && \
             touch -d '2 hours ago' {path}.part.11 && head -c 4096 /dev/urandom > {path}.part.12"
        ),
    );
    mesh.run(&["assign", "motd", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let left = on("node1", &format!("ls {path}.part.* 2>/dev/null; true"));
    assert_eq!(left.trim(), format!("{path}.part.12"), "{left}");
    // a check changes nothing, the helper's own leftovers included
    on("node1", &format!("touch -d '2 hours ago' {path}.part.12"));
    mesh.run(&["check", "node1"]).ok();
    let left = on("node1", &format!("ls {path}.part.* 2>/dev/null; true"));
    assert_eq!(left.trim(), format!("{path}.part.12"), "{left}");
    on("node1", &format!("rm -f {path}.part.12"));
}
