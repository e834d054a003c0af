//! Storing the helper on a machine: what arrives incomplete (a connection dropped halfway) never
//! takes the helper's name, so the next push sends it again rather than failing for ever.

use mesh::push::helper::Helper;

use crate::util::{Mesh, Run, on, ssh_command};

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

#[test]
fn a_helper_that_arrives_incomplete_is_not_stored_and_the_next_push_sends_it_whole() {
    let mesh = Mesh::new();
    let Some(_lab) = mesh.with_lab() else {
        return;
    };
    let helper = Helper::embedded();
    let path = helper.remote_path();
    on("node3", &format!("rm -f {path} {path}.part"));

    let half = &helper.gzipped()[..helper.gzipped().len() / 2];
    let run = upload("node3", &helper.upload_command(false), half);
    assert_ne!(run.status, 0, "an incomplete helper is refused");
    assert!(run.stderr.contains("incomplete"), "{}", run.stderr);
    assert_eq!(
        on("node3", &format!("ls {path} {path}.part 2>/dev/null; true")).trim(),
        "",
        "nothing of it is stored"
    );

    mesh.run(&["assign", "motd", "node3"]).ok();
    mesh.run(&["push", "node3"]).ok();
    let stored = on("node3", &format!("sha256sum < {path}"));
    assert!(stored.starts_with(helper.sha256()), "{stored}");
}
