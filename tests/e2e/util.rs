//! What every end-to-end test needs: the real `mesh` binary in a temp folder with its own
//! inventory, and a lab's machines (booted once, shared, held by one test at a time: the pool of
//! labs is `crate::pool`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use crate::pool::{HeldLab, lab_id};
pub const NODES: [&str; 3] = ["node1", "node2", "node3"];

/// One test's mesh: its own inventory (and catalogue folder) in a temp dir.
pub struct Mesh {
    pub dir: tempfile::TempDir,
}

/// A finished command.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Run {
    pub fn ok(self) -> Run {
        assert_eq!(
            self.status, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
    pub fn code(self, want: i32) -> Run {
        assert_eq!(
            self.status, want,
            "expected exit {want}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

impl Mesh {
    /// A mesh with an initialised inventory.
    pub fn new() -> Mesh {
        let mesh = Mesh {
            dir: tempfile::tempdir().expect("a temp dir"),
        };
        mesh.run(&["init"]).ok();
        mesh
    }

    /// A mesh with no inventory yet.
    pub fn bare() -> Mesh {
        Mesh {
            dir: tempfile::tempdir().expect("a temp dir"),
        }
    }

    pub fn inventory(&self) -> PathBuf {
        self.dir.path().join("inventory.db")
    }

    /// This mesh's operator key (outside the inventory, as an operator's is).
    pub fn operator_key(&self) -> PathBuf {
        self.dir.path().join("keys").join("operator.key")
    }

    /// A secret the inventory keeps sealed, opened with this mesh's operator key.
    pub fn unseal(&self, sealed: &str) -> String {
        use std::str::FromStr;
        let key = std::fs::read_to_string(self.operator_key()).expect("the operator's key");
        let identity = age::x25519::Identity::from_str(key.trim()).expect("an age identity");
        let plain = age::decrypt(&identity, sealed.as_bytes()).expect("sealed to this key");
        String::from_utf8(plain).expect("text")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mesh"));
        // a test that wrote modules (see `module`) gets them as its catalogue
        let catalogue = self.dir.path().join("catalogue");
        if catalogue.is_dir() {
            cmd.env("MESH_CATALOGUE", catalogue);
        }
        cmd.args(args)
            .env("MESH_INVENTORY", self.inventory())
            .env("MESH_OPERATOR_KEY", self.operator_key())
            .env("MESH_LAB_ID", lab_id())
            .env_remove("SSH_AUTH_SOCK")
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().expect("mesh runs"))
    }

    /// Writes a module folder into this mesh's own catalogue folder, which every later command
    /// of this mesh is given (MESH_CATALOGUE); returns that folder.
    pub fn module(&self, name: &str, json: &str, files: &[(&str, &str)]) -> PathBuf {
        let cat = self.dir.path().join("catalogue");
        let dir = cat.join(name);
        std::fs::create_dir_all(&dir).expect("module dir");
        std::fs::write(dir.join("module.json"), json).expect("module.json");
        for (f, text) in files {
            std::fs::write(dir.join(f), text).expect("module file");
        }
        cat
    }

    /// Adds n1, n2 and n3 at documentation addresses (192.0.2.x): for tests that only plan,
    /// which never reach a machine.
    pub fn add_offline_nodes(&self) {
        for (n, address) in [
            ("n1", "192.0.2.1"),
            ("n2", "192.0.2.2"),
            ("n3", "192.0.2.3"),
        ] {
            self.run(&["node", "add", n, "--address", address]).ok();
        }
    }

    /// Takes a lab of the pool for this test (one test at a time pushes to its machines; it
    /// waits for one to be free), boots it if it is not up, and puts its machines into this
    /// inventory with their host keys pinned; until the guard is dropped, this thread's helpers
    /// (`on`, `address`, this mesh's commands, ...) reach that lab. `None` where no lab can boot
    /// here (not root, no systemd-nspawn): the test is skipped, saying so, unless
    /// `MESH_LAB=require` (as in CI), which makes that a failure.
    pub fn with_lab(&self) -> Option<HeldLab> {
        self.with_lab_of(3)
    }

    /// As [`Mesh::with_lab_of`], each machine of the Debian release `release` gives it, in node
    /// order (`bookworm:1,trixie:1`: node1 Debian 12, node2 Debian 13).
    pub fn with_lab_release(&self, n: u32, release: &str) -> Option<HeldLab> {
        self.booted(n, Some(release))
    }

    /// As [`Mesh::with_lab`], with `n` machines (node1..nodeN) in this inventory.
    pub fn with_lab_of(&self, n: u32) -> Option<HeldLab> {
        self.booted(n, None)
    }

    fn booted(&self, n: u32, release: Option<&str>) -> Option<HeldLab> {
        if let Some(why) = lab_unavailable() {
            assert!(
                std::env::var("MESH_LAB").as_deref() != Ok("require"),
                "MESH_LAB=require, but no lab can boot here: {why}"
            );
            skipped(&why);
            return None;
        }
        let held = crate::pool::hold(n);
        crate::pool::down_when_the_tests_end();
        let n = n.to_string();
        let mut up = vec!["lab", "up", &n];
        up.extend(release.iter().flat_map(|r| ["--release", r]));
        self.run(&up).ok();
        Some(held)
    }
}

/// Why lab machines cannot boot on this host, if they cannot.
fn lab_unavailable() -> Option<String> {
    if !is_root() {
        return Some("not root (the lab boots machines with systemd-nspawn)".into());
    }
    let found = Command::new("sh")
        .args(["-c", "command -v systemd-nspawn"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    (!found).then(|| "no systemd-nspawn (apt-get install systemd-container)".into())
}

/// How many lab tests this run has skipped: each skip says the count so far, so the last line
/// says how many were skipped in all (the harness has no hook at its end).
static SKIPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Says on the terminal that this test was skipped and why. Written to stderr itself, not
/// through `eprintln!`, which the test harness captures and shows only for a failure.
fn skipped(why: &str) {
    use std::io::Write;
    let test = std::thread::current()
        .name()
        .unwrap_or("a lab test")
        .to_string();
    let n = SKIPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    let _ = writeln!(
        std::io::stderr(),
        "skipped lab test {test} ({n} skipped so far): {why}; MESH_LAB=require makes this a failure"
    );
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false)
}

pub fn lab_state() -> PathBuf {
    let cache = std::env::var_os("MESH_LAB_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/var/tmp/mesh-lab".into());
    cache.join(format!("lab{}", lab_id()))
}

pub fn address(node: &str) -> String {
    std::fs::read_to_string(lab_state().join("nodes").join(node).join("address"))
        .expect("the node's address")
        .trim()
        .to_string()
}

/// The SHA256 fingerprint of `node`'s ed25519 host key, as the machine itself reads it.
pub fn host_fingerprint(node: &str) -> String {
    on(
        node,
        "ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub | cut -d' ' -f2",
    )
    .trim()
    .to_string()
}

/// Runs `cmd` with `input` on its stdin.
pub fn fed(mut cmd: Command, input: &str) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("it runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("written");
    Run::from(child.wait_with_output().expect("it ends"))
}

/// Runs a shell command on a lab machine over the system's ssh client (the test's own window onto
/// the machine, independent of mesh). Returns stdout; panics if it fails.
pub fn on(node: &str, script: &str) -> String {
    let out = ssh(node, script);
    assert_eq!(out.status, 0, "on {node}: {script}\nstderr: {}", out.stderr);
    out.stdout
}

pub fn ssh(node: &str, script: &str) -> Run {
    let out = ssh_command(node, script)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ssh runs");
    Run::from(out)
}

/// The system's ssh client, as root, to a lab machine, to run `script` there.
pub fn ssh_command(node: &str, script: &str) -> Command {
    let mut cmd = Command::new("ssh");
    cmd.args([
        "-q",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
    ])
    // sshd refuses connections for a moment while it re-executes on a reload a push caused.
    .args(["-o", "ConnectTimeout=5", "-o", "ConnectionAttempts=5", "-i"])
    .arg(lab_state().join("id_ed25519"))
    .arg(format!("root@{}", address(node)))
    .arg(script);
    cmd
}

/// The outcome of one node in a `push --json` answer.
pub fn node_result<'a>(results: &'a serde_json::Value, node: &str) -> &'a serde_json::Value {
    results
        .as_array()
        .and_then(|a| a.iter().find(|r| r["node"] == node))
        .unwrap_or_else(|| panic!("no result for {node} in {results}"))
}

/// The states of a node's resources in a `push --json` answer, by id.
pub fn states(result: &serde_json::Value) -> Vec<(String, String)> {
    result["report"]["resources"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    (
                        r["id"].as_str().unwrap_or("").to_string(),
                        r["state"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The unit's current invocation on a lab machine: it changes on a restart, not on a reload.
pub fn invocation(node: &str, unit: &str) -> String {
    on(
        node,
        &format!("systemctl show -p InvocationID --value {unit}"),
    )
    .trim()
    .to_string()
}

/// Reboots a lab machine at once, as a power cut would: its systemd gets SIGRTMIN+15 from the
/// host (no unit is stopped, nothing runs on the way down), and the lab's supervisor boots it
/// again. Returns once the machine went down (its systemd-nspawn ended and the supervisor
/// started the next); the machine answers SSH a few seconds later.
pub fn reboot_hard(node: &str) {
    let dir = lab_state().join("nodes").join(node);
    let pid = || std::fs::read_to_string(dir.join("pid")).unwrap_or_default();
    let nspawn = pid();
    assert!(!nspawn.is_empty(), "{node} has no nspawn pid: is it up?");
    let children = Command::new("sh")
        .arg("-c")
        .arg(format!("cat /proc/{}/task/*/children", nspawn.trim()))
        .output()
        .expect("sh runs");
    let init = String::from_utf8_lossy(&children.stdout)
        .split_whitespace()
        .next()
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{node}'s systemd-nspawn has no child"));
    let killed = Command::new("kill")
        .args(["-s", "RTMIN+15", &init])
        .status()
        .expect("kill runs");
    assert!(killed.success(), "cannot signal {node}'s systemd ({init})");
    let down = format!("{node} to go down");
    eventually(std::time::Duration::from_secs(60), &down, || {
        (pid() != nspawn).then_some(())
    });
}

/// Reinstalls a lab machine in place (`mesh lab rebuild`): a blank disk from the image, new host
/// keys (pinned in this inventory), the same address; the inventory keeps what it knew of it.
pub fn rebuild(mesh: &Mesh, node: &str) {
    mesh.run(&["lab", "rebuild", node]).ok();
}

/// Asks `probe` every quarter second until it answers `Some`, for at most `limit`: `None` past
/// it. Every wait of the tests for a machine to get somewhere goes through here (no fixed sleeps
/// standing for "long enough").
pub fn within<T>(limit: std::time::Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let until = std::time::Instant::now() + limit;
    loop {
        if let Some(answer) = probe() {
            return Some(answer);
        }
        if std::time::Instant::now() >= until {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// `within`, for a test that cannot go on without the answer: past `limit` it fails naming
/// `what` it waited for.
pub fn eventually<T>(
    limit: std::time::Duration,
    what: &str,
    probe: impl FnMut() -> Option<T>,
) -> T {
    within(limit, probe).unwrap_or_else(|| panic!("gave up after {limit:?} waiting for {what}"))
}

/// Puts a machine's os-release back (from `/etc/os-release.mesh-kept`, where a test that edits
/// it keeps the original) however the test ends: other tests share the machine.
pub struct OsRelease(pub &'static str);

impl Drop for OsRelease {
    fn drop(&mut self) {
        on(
            self.0,
            "mv /etc/os-release.mesh-kept /etc/os-release 2>/dev/null; true",
        );
    }
}
