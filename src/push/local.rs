//! The local transport: a node added with `mesh node add NAME --local DIR` is this machine, with
//! DIR standing for its `/`. Its helper runs as a child process of `mesh`, as the operator's own
//! user, as `mesh-host --root DIR VERB`, the declaration on its stdin and its answer read within
//! the same bounds as over SSH. The helper lives where a remote machine keeps it, under the
//! node's root (`DIR/var/lib/mesh/bin/mesh-host-SHA256`): written once, unpacked and checked
//! against its sha256 before it takes its name, as the remote upload is.
//!
//! A session that is dropped before its helper ends (a push's `--timeout`) kills the helper, as
//! a dropped SSH connection ends it on a machine.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::transport::{Boxed, Call, Links, PrepareError, Prepared, Session, Transport};
use super::{Helper, PushError};
use crate::inventory::Node;
use crate::ssh::{Bound, Output};
use crate::wire::{EXIT_HELPER_MISSING, EXIT_WRONG_PLATFORM};

/// Runs each node's helper on this machine against the node's root directory.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalTransport;

impl Transport for LocalTransport {
    fn prepare(&self, nodes: &[&Node], _all: &[Node]) -> Result<Prepared, PrepareError> {
        let unusable = nodes
            .iter()
            .filter_map(|n| {
                let why = match &n.local {
                    None => "it is not a node on this machine (`node add --local DIR`)".into(),
                    Some(dir) if !dir.is_absolute() || !dir.is_dir() => {
                        format!("its root {} is not a directory", dir.display())
                    }
                    Some(_) => return None,
                };
                Some((n.name.clone(), local_error(&n.name, why)))
            })
            .collect();
        Ok(Prepared {
            links: Arc::new(LocalLinks),
            unusable,
        })
    }
}

fn local_error(node: &str, reason: String) -> PushError {
    PushError::Local {
        node: node.to_string(),
        reason,
    }
}

struct LocalLinks;

impl Links for LocalLinks {
    fn open<'a>(
        &'a self,
        node: &'a Node,
        _timeout: Duration,
        _fresh: bool,
    ) -> Boxed<'a, Result<Box<dyn Session>, PushError>> {
        Box::pin(async move {
            let root = node.local.clone().ok_or_else(|| {
                local_error(&node.name, "it is not a node on this machine".into())
            })?;
            let session: Box<dyn Session> = Box::new(LocalSession {
                node: node.name.clone(),
                root,
            });
            Ok(session)
        })
    }
}

/// A node's root on this machine.
struct LocalSession {
    node: String,
    root: PathBuf,
}

impl LocalSession {
    /// Where the helper lives under the root, as on a remote machine.
    fn helper_path(&self, helper: &Helper) -> PathBuf {
        under(&self.root, &helper.remote_path())
    }

    fn error(&self, reason: String) -> PushError {
        local_error(&self.node, reason)
    }
}

/// `path` (absolute, as on the machine) under `root`.
fn under(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

impl Session for LocalSession {
    fn run<'a>(
        &'a self,
        helper: &'a Helper,
        call: Call<'a>,
        input: &'a [u8],
        bound: Bound,
    ) -> Boxed<'a, Result<Output, PushError>> {
        Box::pin(async move {
            let path = self.helper_path(helper);
            if !path.is_file() {
                return Ok(Output {
                    status: Some(EXIT_HELPER_MISSING),
                    ..Output::default()
                });
            }
            let mut command = Command::new(&path);
            command.arg("--root").arg(&self.root).args(call.args());
            run_bounded(command, input.to_vec(), bound)
                .await
                .map_err(|e| self.error(e))
        })
    }

    fn upload<'a>(&'a self, helper: &'a Helper) -> Boxed<'a, Result<Output, PushError>> {
        Box::pin(async move {
            if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
                return Ok(Output {
                    status: Some(EXIT_WRONG_PLATFORM),
                    stderr: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH)
                        .into_bytes(),
                    ..Output::default()
                });
            }
            let path = self.helper_path(helper);
            let stored = store(&path, helper);
            Ok(match stored {
                Ok(()) => Output {
                    status: Some(0),
                    ..Output::default()
                },
                Err(why) => Output {
                    status: Some(1),
                    stderr: why.into_bytes(),
                    ..Output::default()
                },
            })
        })
    }

    fn close(self: Box<Self>) -> Boxed<'static, ()> {
        Box::pin(async {})
    }
}

/// Unpacks the helper to `path.part`, checks its sha256, and only then gives it its name.
fn store(path: &Path, helper: &Helper) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .ok_or_else(|| format!("{} has no directory", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut unpacked = Vec::with_capacity(helper.unpacked_len());
    flate2::read::GzDecoder::new(helper.gzipped())
        .read_to_end(&mut unpacked)
        .map_err(|e| format!("unpacking the helper: {e}"))?;
    let digest: String = Sha256::digest(&unpacked)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if digest != helper.sha256() {
        return Err(format!(
            "the helper arrived incomplete or changed (its sha256 is not {}): nothing stored",
            helper.sha256()
        ));
    }
    let part = path.with_extension("part");
    let written = std::fs::File::create(&part)
        .and_then(|mut f| f.write_all(&unpacked).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::rename(&part, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&part);
        format!("storing the helper at {}: {e}", path.display())
    })
}

/// Kills the child when the run is dropped before it ended.
struct Reaper(Arc<Mutex<Child>>);

impl Drop for Reaper {
    fn drop(&mut self) {
        let mut child = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// How long a helper's streams may stay open once it has exited (a process it left behind
/// holding them): then what was read is its answer.
const STREAMS_AFTER_EXIT: Duration = Duration::from_secs(5);

/// Runs `command` with `input` on its stdin, reading at most `bound` of each stream.
async fn run_bounded(mut command: Command, input: Vec<u8>, bound: Bound) -> Result<Output, String> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn(&mut command).await?;
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let child = Reaper(Arc::new(Mutex::new(child)));
    // a helper that stops reading early (it refused the declaration) is not an error here
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input);
        }
    });
    let out = tokio::task::spawn_blocking(move || read_bounded(stdout, bound.stdout));
    let err = tokio::task::spawn_blocking(move || read_bounded(stderr, bound.stderr));
    let status = loop {
        let waited = child.0.lock().unwrap_or_else(|p| p.into_inner()).try_wait();
        match waited {
            Ok(Some(status)) => break status,
            Ok(None) => tokio::time::sleep(Duration::from_millis(5)).await,
            Err(e) => return Err(format!("waiting for the helper: {e}")),
        }
    };
    let _ = writer.join();
    let read = |joined: Result<Result<Result<Vec<u8>, usize>, tokio::task::JoinError>, _>,
                stream: &str| match joined {
        Ok(Ok(Ok(bytes))) => Ok(bytes),
        Ok(Ok(Err(most))) => Err(format!(
            "{} sent more than {most} bytes on {stream}: refused",
            bound.what
        )),
        Ok(Err(e)) => Err(format!("reading the helper's {stream}: {e}")),
        Err(_) => Err(format!(
            "the helper's {stream} stayed open {} s after it exited",
            STREAMS_AFTER_EXIT.as_secs()
        )),
    };
    let stdout = read(
        tokio::time::timeout(STREAMS_AFTER_EXIT, out).await,
        "stdout",
    )?;
    let stderr = read(
        tokio::time::timeout(STREAMS_AFTER_EXIT, err).await,
        "stderr",
    )?;
    Ok(Output {
        status: status.code().and_then(|c| u32::try_from(c).ok()),
        stdout,
        stderr,
    })
}

/// How long a helper just stored may be busy to exec.
const BUSY_FOR: Duration = Duration::from_secs(5);

/// Starts `command`. A helper stored a moment ago can be refused as busy (ETXTBSY) while a
/// process forked by another thread of this one (another node's helper) still holds the file
/// open for writing, until it execs: tried again until [`BUSY_FOR`].
async fn spawn(command: &mut Command) -> Result<Child, String> {
    let started = tokio::time::Instant::now();
    loop {
        match command.spawn() {
            Err(e)
                if e.kind() == std::io::ErrorKind::ExecutableFileBusy
                    && started.elapsed() < BUSY_FOR =>
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            spawned => return spawned.map_err(|e| format!("starting the helper: {e}")),
        }
    }
}

/// All of `stream`, or `Err(most)` once it passes `most` bytes.
fn read_bounded(stream: Option<impl Read>, most: usize) -> Result<Vec<u8>, usize> {
    let mut bytes = Vec::new();
    if let Some(stream) = stream {
        let limit = u64::try_from(most).unwrap_or(u64::MAX).saturating_add(1);
        // an unreadable stream ends the answer where it broke
        let _ = stream.take(limit).read_to_end(&mut bytes);
    }
    if bytes.len() > most {
        return Err(most);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Mode;

    /// A stand-in helper: records its arguments and stdin under the root, answers `said`.
    fn fake(said: &str) -> Helper {
        Helper::of(
            format!(
                "#!/bin/sh\nroot=$2\necho \"$@\" >> \"$root/args\"\ncat > \"$root/stdin\"\n{said}\n"
            )
            .as_bytes(),
            None,
        )
    }

    fn node(root: &Path) -> Node {
        Node {
            local: Some(root.to_path_buf()),
            ..Node::new("box", "localhost")
        }
    }

    async fn session(root: &Path) -> Box<dyn Session> {
        let prepared = LocalTransport.prepare(&[&node(root)], &[]).unwrap();
        assert!(prepared.unusable.is_empty());
        prepared
            .links
            .open(&node(root), Duration::from_secs(1), false)
            .await
            .unwrap()
    }

    const BOUND: Bound = Bound {
        what: "the helper's answer",
        stdout: 1 << 16,
        stderr: 1 << 16,
    };

    #[tokio::test]
    async fn a_missing_helper_is_stored_once_under_the_root_then_run_against_it_with_the_declaration()
     {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let helper = fake("printf answered; exit 0");
        let s = session(root).await;
        let call = Call::Run(Mode::DryRun);
        let missing = s.run(&helper, call, b"{}", BOUND).await.unwrap();
        assert_eq!(missing.status, Some(EXIT_HELPER_MISSING));
        assert!(!root.join("args").exists(), "nothing ran");

        let stored = s.upload(&helper).await.unwrap();
        assert_eq!(stored.status, Some(0), "{stored:?}");
        let path = root.join(format!("var/lib/mesh/bin/mesh-host-{}", helper.sha256()));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );

        let out = s
            .run(&helper, call, b"the declaration", BOUND)
            .await
            .unwrap();
        assert_eq!(out.status, Some(0));
        assert_eq!(out.stdout, b"answered");
        let args = std::fs::read_to_string(root.join("args")).unwrap();
        assert_eq!(args, format!("--root {} apply --dry-run\n", root.display()));
        assert_eq!(
            std::fs::read(root.join("stdin")).unwrap(),
            b"the declaration"
        );
        s.close().await;
    }

    #[tokio::test]
    async fn a_helper_whose_bytes_are_not_its_sha256_is_never_stored() {
        let dir = tempfile::tempdir().unwrap();
        let forged = Helper::of(b"#!/bin/sh\nexit 0\n", Some(&"0".repeat(64)));
        let s = session(dir.path()).await;
        let out = s.upload(&forged).await.unwrap();
        assert_eq!(out.status, Some(1));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("arrived incomplete or changed"),
            "{out:?}"
        );
        let bin = dir.path().join("var/lib/mesh/bin");
        assert_eq!(
            std::fs::read_dir(bin).unwrap().count(),
            0,
            "no file, no .part"
        );
    }

    #[tokio::test]
    async fn an_answer_past_its_bound_is_refused_naming_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let helper = fake("head -c 100000 /dev/zero");
        let s = session(dir.path()).await;
        s.upload(&helper).await.unwrap();
        let e = s
            .run(&helper, Call::Run(Mode::Apply), b"", BOUND)
            .await
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("the helper's answer sent more than 65536 bytes on stdout"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_run_dropped_before_the_helper_ends_kills_it() {
        let dir = tempfile::tempdir().unwrap();
        let helper = fake("echo $$ > \"$root/pid\"; exec sleep 60");
        let s = session(dir.path()).await;
        s.upload(&helper).await.unwrap();
        let run = s.run(&helper, Call::Run(Mode::Apply), b"", BOUND);
        let started = std::time::Instant::now();
        assert!(
            tokio::time::timeout(Duration::from_secs(2), run)
                .await
                .is_err()
        );
        // dropped at once, not when the helper would have ended by itself
        assert!(started.elapsed() < Duration::from_secs(10));
        let pid = std::fs::read_to_string(dir.path().join("pid")).unwrap();
        assert!(
            !Path::new(&format!("/proc/{}", pid.trim())).exists(),
            "the helper {pid} still runs"
        );
    }

    #[test]
    fn a_node_whose_root_is_not_a_directory_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let gone = node(&dir.path().join("gone"));
        let here = Node {
            name: "here".into(),
            ..node(dir.path())
        };
        let prepared = LocalTransport.prepare(&[&gone, &here], &[]).unwrap();
        let said: Vec<String> = prepared.unusable.values().map(|e| e.to_string()).collect();
        assert_eq!(prepared.unusable.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("box: on this machine: its root"),
            "{said:?}"
        );
    }
}
