//! Which host key a machine is asked for: among the kinds known_hosts records for a
//! host, mesh asks in OpenSSH's preference order (ed25519 first), not in the order of the file.
//! So `node trust --fingerprint` pins the machine's ed25519 key (which sealed secrets need) where
//! its ECDSA key is listed first, and a stale line of another kind above the right one is not a
//! changed key.

use crate::openssh::{Openssh, fingerprint, host_key, pushed_motd, unpinned_node3};
use crate::util::{HeldLab, Mesh, address, node_result};

/// A mesh with the lab, and node3 unpinned so that known_hosts (the test's) decides; node3's
/// address; `None` where no lab can boot (the test is skipped).
fn unpinned() -> Option<(Mesh, HeldLab, Openssh, String)> {
    let mesh = Mesh::new();
    let machines = mesh.with_lab()?;
    let ssh = Openssh::new();
    unpinned_node3(&mesh, &ssh, "22");
    Some((mesh, machines, ssh, address("node3")))
}

/// `node trust node3 --fingerprint` with node3's own key of `kind`: pinned, of `algorithm`.
fn trusts_own_key(mesh: &Mesh, ssh: &Openssh, kind: &str, algorithm: &str) {
    let want = fingerprint(&host_key("node3", kind));
    let trusted = ssh.run(
        mesh,
        &["node", "trust", "node3", "--fingerprint", &want, "--json"],
    );
    assert_eq!(
        trusted.status, 0,
        "node3's own {kind} key was refused:\n{}{}",
        trusted.stdout, trusted.stderr
    );
    let answer = trusted.json();
    assert_eq!(answer["done"][0]["fingerprint"], want.as_str(), "{answer}");
    assert_eq!(answer["done"][0]["algorithm"], algorithm, "{answer}");
}

#[test]
fn trust_pins_the_ed25519_key_where_known_hosts_lists_the_ecdsa_key_first() {
    let Some((mesh, _machines, ssh, node3)) = unpinned() else {
        return;
    };
    let (ecdsa, ed25519) = (host_key("node3", "ecdsa"), host_key("node3", "ed25519"));
    ssh.write(
        "known_hosts",
        &format!("{node3} {ecdsa}\n{node3} {ed25519}\n"),
    );
    trusts_own_key(&mesh, &ssh, "ed25519", "ssh-ed25519");
    // pinned, it is what decides: with known_hosts gone the push goes through
    ssh.write("known_hosts", "");
    let pushed = ssh.run(&mesh, &["push", "node3", "--json"]).json();
    pushed_motd(&pushed, "node3", "node3");
}

#[test]
fn a_stale_line_of_another_kind_above_the_right_one_is_not_a_changed_key() {
    let Some((mesh, _machines, ssh, node3)) = unpinned() else {
        return;
    };
    // node1's ECDSA key: a line left from another machine that had this address
    let stale = host_key("node1", "ecdsa");
    let right = host_key("node3", "ed25519");
    ssh.write(
        "known_hosts",
        &format!("{node3} {stale}\n{node3} {right}\n"),
    );
    let run = ssh.run(&mesh, &["push", "node3", "--json"]);
    let pushed = run.json();
    assert_eq!(
        node_result(&pushed, "node3")["outcome"],
        "applied",
        "refused by a stale line of another kind:\n{pushed}"
    );
    pushed_motd(&pushed, "node3", "node3");
    // the right kind recorded wrong is still a changed key, naming that line
    let other = host_key("node2", "ed25519");
    ssh.write(
        "known_hosts",
        &format!("{node3} {stale}\n{node3} {other}\n"),
    );
    let refused = ssh.run(&mesh, &["push", "node3", "--json"]).code(2).json();
    let reason = node_result(&refused, "node3")["reason"].to_string();
    for want in [
        "REMOTE HOST IDENTIFICATION HAS CHANGED",
        &fingerprint(&other),
        &fingerprint(&right),
        "known_hosts:2",
    ] {
        assert!(reason.contains(want), "{want:?} in: {reason}");
    }
}

#[test]
fn trust_finds_the_key_of_the_fingerprint_given_whichever_kind_known_hosts_records() {
    let Some((mesh, _machines, ssh, node3)) = unpinned() else {
        return;
    };
    // only the ECDSA key recorded (`ssh-keyscan -t ecdsa`): the machine is asked for it first
    ssh.write(
        "known_hosts",
        &format!("{node3} {}\n", host_key("node3", "ecdsa")),
    );
    trusts_own_key(&mesh, &ssh, "ed25519", "ssh-ed25519");
    trusts_own_key(&mesh, &ssh, "rsa", "ssh-rsa");
    // a key the machine does not have is still refused, naming what it offers
    let elsewhere = fingerprint(&host_key("node1", "ed25519"));
    let refused = ssh.run(
        &mesh,
        &["node", "trust", "node3", "--fingerprint", &elsewhere],
    );
    assert_ne!(refused.status, 0, "{}", refused.stdout);
    assert!(
        refused.stderr.contains(&format!("not {elsewhere}")),
        "{}",
        refused.stderr
    );
}
