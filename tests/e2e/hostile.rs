//! A local user cannot turn the helper against the machine: a service account owns the
//! directory the mesh writes a file and keys into, and while the mesh pushes, changes a setting and
//! undeclares, it plants symbolic and hard links under every name it can think of (the file's own
//! names, guesses of temp names) pointing at `/etc/shadow`, `/etc/passwd` and canaries in `/etc`,
//! and edits the managed file. Nothing under `/etc` may change: digest, owner and mode of every file.

use crate::util::{Mesh, on, ssh};

const ACCOUNT: &str = "mesh-racer";
const DATA: &str = "/srv/mesh/hostile/data";

const HOSTILE: &str = r#"{
  "name": "hostile", "version": "1", "description": "Writes into a directory a service account owns.",
  "settings": [{"name": "word", "type": "string", "meaning": "What the file says.", "default": "one", "cost": "none"}],
  "requires": [{"name": "data", "kind": "host", "directory": {"owner": "mesh-racer", "group": "mesh-racer", "mode": "0755"}}],
  "resources": [
    {"kind": "file", "path": "${data.path}/app.conf", "owner": "mesh-racer", "group": "mesh-racer", "mode": "0640", "template": "app.conf"},
    {"kind": "keys", "path": "/srv/mesh/hostile/data/app.json", "owner": "mesh-racer", "group": "mesh-racer", "mode": "0640", "keys": {"word": "${word}"}}
  ]
}"#;

/// The racer: one process (no fork per link, so the helper's pid stays guessable), as the service
/// account, forever: symbolic links at guesses of temp names for the next pids, the managed names
/// swapped for links, hard links to a canary it may link (world-writable, as careless files are),
/// and edits of the managed file.
const RACER: &str = r#"
my $d = "/srv/mesh/hostile/data";
my @targets = ("/etc/shadow", "/etc/passwd", "/etc/mesh-canary", "/etc/mesh-canary-rw");
my $round = 0;
while (1) {
    $round++;
    my $last = 0;
    if (open(my $f, "<", "/proc/sys/kernel/ns_last_pid")) { $last = <$f>; chomp $last; close $f; }
    for my $pid ($last - 2 .. $last + 60) {
        for my $n ("app.conf", "app.json") {
            symlink($targets[$pid % 4], "$d/.$n.mesh-$pid");
        }
    }
    my $t = $targets[$round % 4];
    if ($round % 3 == 0) {
        # swap the managed file for a hard link to the canary the account can link
        link("/etc/mesh-canary-rw", "$d/.swap"); rename("$d/.swap", "$d/app.conf");
        link("/etc/mesh-canary-rw", "$d/.swap"); rename("$d/.swap", "$d/app.json");
    } elsif ($round % 3 == 1) {
        symlink($t, "$d/.swap"); rename("$d/.swap", "$d/app.conf");
        symlink($t, "$d/.swap"); rename("$d/.swap", "$d/app.json");
        link("/etc/shadow", "$d/shadow-$round"); link("/etc/passwd", "$d/passwd-$round");
    } else {
        # an edit of the managed file, when it is the file and not one of its own links
        my @st = lstat("$d/app.conf");
        if (-f _ && $st[3] == 1 && open(my $w, ">>", "$d/app.conf")) { print $w "edited\n"; close $w; }
    }
    select(undef, undef, undef, 0.002);
}
"#;

/// Digest, owner and mode of every file under /etc, one line each, sorted.
const ETC: &str = "find /etc -xdev -type f -printf '%p %U %G %m ' -exec sha256sum {} \\; \
    | awk '{print $1, $2, $3, $4, $5}' | sort";

#[test]
fn a_service_account_racing_the_helper_changes_nothing_outside_its_directory() {
    let mesh = Mesh::new();
    let Some(_machines) = mesh.with_lab() else {
        return;
    };
    mesh.module("hostile", HOSTILE, &[("app.conf", "word=${word}\n")]);
    // whatever earlier tests left declared on the machine is given back before the count
    mesh.run(&["push", "node1"]).ok();
    on(
        "node1",
        &format!(
            "pkill -u {ACCOUNT} 2>/dev/null; id {ACCOUNT} >/dev/null 2>&1 || useradd --system --no-create-home {ACCOUNT}; \
             rm -rf /srv/mesh/hostile; \
             printf 'canary\\n' >/etc/mesh-canary; chmod 0644 /etc/mesh-canary; \
             printf 'word=one\\n' >/etc/mesh-canary-rw; chmod 0666 /etc/mesh-canary-rw"
        ),
    );
    let before = on("node1", ETC);
    assert!(before.contains("/etc/shadow "), "{before}");

    mesh.run(&["assign", "hostile", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", &format!("cat {DATA}/app.conf")), "word=one\n");

    on(
        "node1",
        &format!(
            "cat >/run/mesh-racer.pl <<'EOF'\n{RACER}\nEOF\n\
             setsid runuser -u {ACCOUNT} -- perl /run/mesh-racer.pl </dev/null >/dev/null 2>&1 & \
             echo $! >/run/mesh-racer.pid"
        ),
    );
    // pushes while it races: each does its job or refuses, and nothing outside may move
    let mut said = String::new();
    let mut push = || {
        let run = mesh.run(&["push", "node1"]);
        said.push_str(&run.stdout);
        said.push_str(&run.stderr);
    };
    for _ in 0..4 {
        push();
    }
    mesh.run(&["settings", "set", "hostile", "word=two"]).ok();
    for _ in 0..3 {
        push();
    }
    mesh.run(&["unassign", "hostile", "node1"]).ok();
    push();
    eprintln!("{said}");
    assert!(
        said.contains("hard link") || said.contains("not a regular file"),
        "no push met the racer's links:\n{said}"
    );
    let racing = on(
        "node1",
        &format!("kill -- -$(cat /run/mesh-racer.pid); ls -la {DATA} | wc -l"),
    );

    let after = on("node1", ETC);
    let changed: Vec<String> = diff(&before, &after);
    assert!(
        changed.is_empty(),
        "files under /etc changed while {ACCOUNT} raced the helper:\n{}",
        changed.join("\n")
    );
    // the racer did race: its directory is full of its links
    assert!(
        racing.trim().parse::<usize>().unwrap_or(0) > 20,
        "the racer planted nothing: {racing}"
    );
    // with the racer gone and its links cleared, the mesh puts the module back as declared
    on("node1", &format!("find {DATA} -mindepth 1 -delete"));
    mesh.run(&["assign", "hostile", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    assert_eq!(on("node1", &format!("cat {DATA}/app.conf")), "word=two\n");
    assert_eq!(
        on("node1", &format!("stat -c '%U %a' {DATA}/app.conf")).trim(),
        format!("{ACCOUNT} 640")
    );
    mesh.run(&["unassign", "hostile", "node1"]).ok();
    mesh.run(&["push", "node1"]).ok();
    let _ = ssh(
        "node1",
        "rm -f /etc/mesh-canary /etc/mesh-canary-rw /run/mesh-racer.pl /run/mesh-racer.pid",
    );
}

/// The lines of `before` that are not in `after`, and the other way round.
fn diff(before: &str, after: &str) -> Vec<String> {
    let old: std::collections::BTreeSet<&str> = before.lines().collect();
    let new: std::collections::BTreeSet<&str> = after.lines().collect();
    old.symmetric_difference(&new)
        .map(|line| {
            let sign = if old.contains(line) { "-" } else { "+" };
            format!("{sign} {line}")
        })
        .collect()
}
