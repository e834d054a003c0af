//! The local transport: a node added with `mesh node add NAME --local DIR` is this machine, with
//! DIR standing for its `/`. Its helper runs as a child process of `mesh`, as the operator's own
//! user, as `mesh-host --root DIR VERB`, the declaration on its stdin and its answer read within
//! the same bounds as over SSH. The helper lives where a remote machine keeps it, under the
//! node's root (`DIR/var/lib/mesh/bin/mesh-host-SHA256`): unpacked and checked against its
//! sha256 before it takes its name, as the remote upload is, and checked again before each run,
//! in a root only the operator can change ([`stored`]). The child process itself is [`child`].
//!
//! A session that is dropped before its helper ends (a push's `--timeout`) kills the helper, as
//! a dropped SSH connection ends it on a machine.

mod child;
mod stored;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use super::transport::{Boxed, Call, Links, PrepareError, Prepared, Session, Transport};
use super::{Helper, PushError};
use crate::inventory::Node;
use crate::ssh::{Bound, Output};
use crate::wire::{EXIT_HELPER_MISSING, EXIT_NOT_STORED, EXIT_WRONG_PLATFORM};

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
            let found =
                stored::check(&self.root, &path, helper).map_err(|e| self.error(e.to_string()))?;
            if found == stored::Found::Missing {
                return Ok(Output {
                    status: Some(EXIT_HELPER_MISSING),
                    ..Output::default()
                });
            }
            let mut command = Command::new(&path);
            command.arg("--root").arg(&self.root).args(call.args());
            child::run_bounded(command, input.to_vec(), bound)
                .await
                .map_err(|e| self.error(e.to_string()))
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
            Ok(match stored::store(&self.root, &path, helper) {
                Ok(()) => Output {
                    status: Some(0),
                    ..Output::default()
                },
                Err(why) => Output {
                    status: Some(EXIT_NOT_STORED),
                    stderr: why.to_string().into_bytes(),
                    ..Output::default()
                },
            })
        })
    }

    fn close(self: Box<Self>) -> Boxed<'static, ()> {
        Box::pin(async {})
    }
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
        assert_eq!(out.status, Some(EXIT_NOT_STORED));
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

    /// Replaces the stored helper's bytes with a script that leaves `mark` under the root.
    fn tamper(root: &Path, helper: &Helper) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = root.join(format!("var/lib/mesh/bin/mesh-host-{}", helper.sha256()));
        std::fs::write(&path, "#!/bin/sh\ntouch \"$2/mark\"\nprintf tampered\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[tokio::test]
    async fn a_stored_helper_whose_bytes_changed_is_never_run_but_stored_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let helper = fake("printf answered");
        let s = session(root).await;
        s.upload(&helper).await.unwrap();
        tamper(root, &helper);
        let call = Call::Run(Mode::Apply);
        let out = s.run(&helper, call, b"", BOUND).await.unwrap();
        assert_eq!(out.status, Some(EXIT_HELPER_MISSING), "{out:?}");
        assert!(!root.join("mark").exists(), "the tampered helper ran");

        assert_eq!(s.upload(&helper).await.unwrap().status, Some(0));
        let out = s.run(&helper, call, b"", BOUND).await.unwrap();
        assert_eq!(out.stdout, b"answered");
        assert!(!root.join("mark").exists(), "the tampered helper ran");
    }

    #[tokio::test]
    async fn a_root_another_user_could_change_the_helper_in_is_refused_and_nothing_runs() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let helper = fake("printf answered");
        let s = session(root).await;
        s.upload(&helper).await.unwrap();
        let bin = root.join("var/lib/mesh/bin");
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = s
            .run(&helper, Call::Run(Mode::Apply), b"", BOUND)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "{} is writable by its group or by others",
                bin.display()
            )),
            "{e}"
        );
        let refused = s.upload(&helper).await.unwrap();
        assert_eq!(refused.status, Some(EXIT_NOT_STORED), "{refused:?}");

        // even the helper's own bytes are not run from there
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = tamper(root, &helper);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(
            s.run(&helper, Call::Run(Mode::Apply), b"", BOUND)
                .await
                .is_err()
        );
        assert!(!root.join("mark").exists(), "the helper ran");
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
