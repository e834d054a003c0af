//! What a node's helper answered, read: the upload's outcome, the report, or the failure its
//! exit status and stdout name (a record it cannot trust, a newer generation, a busy machine,
//! a change awaiting confirmation).

use crate::wire::{
    EXIT_AWAITING, EXIT_RECORD_LOST, EXIT_RECORD_UNREADABLE, EXIT_STALE, EXIT_WRONG_PLATFORM, Mode,
    RecordRefusal, Report, Stale,
};

use super::helper::Stored;
use super::{Helper, PushError};

/// Refuses a generation the machine's record says that no push makes (see
/// [`crate::wire::MAX_GENERATION`]).
pub(super) fn impossible(
    node: &str,
    generation: Option<&crate::wire::Generation>,
) -> Result<(), PushError> {
    match generation {
        Some(g) if !crate::wire::Generation::possible(g.number) => {
            Err(PushError::ImpossibleGeneration {
                node: node.to_string(),
                number: g.number,
            })
        }
        _ => Ok(()),
    }
}

/// The helper's exit when another holds the machine's lock.
const EXIT_BUSY: u32 = crate::wire::HelperExit::Busy.status() as u32;

/// The helper's output where it ran, with whether it was stored first; the launcher's refusal to
/// store it (the machine's platform, or a helper that did not arrive whole) as the error it is.
pub(super) fn stored(
    stored: Stored,
    helper: &Helper,
    name: &str,
) -> Result<(crate::ssh::Output, bool), PushError> {
    let up = match stored {
        Stored::Ran { output, stored } => return Ok((output, stored)),
        Stored::NotStored(up) => up,
    };
    let stderr = String::from_utf8_lossy(&up.stderr).trim().to_string();
    match up.status {
        Some(EXIT_WRONG_PLATFORM) => Err(PushError::Platform {
            node: name.to_string(),
            machine: stderr,
        }),
        status => Err(PushError::Upload {
            node: name.to_string(),
            path: helper.remote_path(),
            status: describe(status),
            stderr,
        }),
    }
}

/// The helper's report, or the failure its exit status and stdout name; `via` is the jump host
/// the session went through, named where the connection was lost.
pub(super) fn answer(
    name: &str,
    via: Option<&str>,
    mode: Mode,
    out: crate::ssh::Output,
) -> Result<Report, PushError> {
    let name = name.to_string();
    if let Some(status @ (EXIT_RECORD_LOST | EXIT_RECORD_UNREADABLE)) = out.status {
        return Err(record_refusal(name, status, &out.stdout, &out.stderr));
    }
    if out.status == Some(EXIT_STALE)
        && let Ok(stale) = serde_json::from_slice::<Stale>(&out.stdout)
    {
        if !crate::wire::Generation::followable(stale.machine.number) {
            return Err(PushError::ImpossibleGeneration {
                node: name,
                number: stale.machine.number,
            });
        }
        return Err(PushError::Stale {
            node: name,
            stale: Box::new(stale),
        });
    }
    if out.status == Some(EXIT_BUSY) {
        return Err(PushError::Busy { node: name, mode });
    }
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status == Some(EXIT_AWAITING) && crate::wire::Awaiting::valid_id(&said) {
        return Err(PushError::Awaiting {
            node: name,
            id: said,
        });
    }
    if out.status.is_none() && mode == Mode::Apply {
        return Err(PushError::Lost {
            node: name,
            via: via.map(str::to_string),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    if out.status != Some(0) {
        return Err(PushError::Helper {
            node: name,
            status: describe(out.status),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let report: Report = serde_json::from_slice(&out.stdout).map_err(|e| PushError::Report {
        node: name.clone(),
        reason: e.to_string(),
    })?;
    impossible(&name, report.generation.as_ref())?;
    Ok(report)
}

/// Drops the facts of `report` when one breaks its shape, and says which: what a machine says of
/// itself reaches its consumers' files through templates, so it is checked as it arrives, like a
/// setting, and never stored or rendered otherwise.
pub(super) fn untrusted_facts(report: &mut Report) -> Option<crate::wire::FactRefused> {
    let refused = report.facts.as_ref()?.check().err()?;
    report.facts = None;
    Some(refused)
}

/// The helper's refusal to touch a machine whose record it cannot trust, as it said it on stdout.
fn record_refusal(node: String, status: u32, stdout: &[u8], stderr: &[u8]) -> PushError {
    match serde_json::from_slice::<RecordRefusal>(stdout) {
        Ok(refusal) => PushError::Record { node, refusal },
        Err(_) => PushError::Helper {
            node,
            status: describe(Some(status)),
            stderr: String::from_utf8_lossy(stderr).trim().to_string(),
        },
    }
}

/// An exit status as the operator reads it: with what it means when it is one the helper
/// gives (`4: another mesh-host is applying on this machine …`).
pub(super) fn describe(status: Option<u32>) -> String {
    match status {
        None => "none: killed or disconnected".to_string(),
        Some(s) => match crate::wire::HelperExit::of(s) {
            Some(e) if s != 0 => format!("{s}: {}", e.meaning()),
            _ => s.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::EXIT_NOT_STORED;

    #[test]
    fn a_helper_exit_is_named_with_what_it_means() {
        let busy = crate::wire::HelperExit::Busy.status();
        assert!(
            describe(Some(u32::from(busy))).starts_with("4: another mesh-host is applying"),
            "{}",
            describe(Some(4))
        );
        assert_eq!(describe(Some(1)), "1");
        assert_eq!(describe(None), "none: killed or disconnected");
    }

    #[test]
    fn a_helper_that_could_not_be_stored_names_the_node_the_path_and_the_fix() {
        let helper = Helper::embedded();
        let refused = |status: u32, stderr: &str| {
            let out = crate::ssh::Output {
                status: Some(status),
                stderr: stderr.as_bytes().to_vec(),
                ..Default::default()
            };
            stored(Stored::NotStored(out), &helper, "node5").unwrap_err()
        };
        let said = refused(EXIT_NOT_STORED, "the helper arrived incomplete").to_string();
        for words in [
            "node5: storing the helper at ",
            helper.remote_path().as_str(),
            "arrived incomplete",
            "nothing ran there",
            "run the same command again",
            "read-only",
        ] {
            assert!(said.contains(words), "{said}");
        }
        // a check (and a rollback) is refused with these words too: told to push, the operator
        // who only checked would apply what they meant to look at (attack37)
        assert!(!said.contains("push again"), "{said}");
        let other = refused(EXIT_WRONG_PLATFORM, "Linux aarch64");
        assert!(matches!(other, PushError::Platform { .. }), "{other}");
        assert!(other.to_string().contains("Linux aarch64"), "{other}");
    }

    #[test]
    fn a_run_without_an_exit_status_is_lost_and_says_the_machine_may_have_changed() {
        let out = crate::ssh::Output {
            status: None,
            ..Default::default()
        };
        let lost = answer("node5", Some("bastion"), Mode::Apply, out).unwrap_err();
        assert_eq!(lost.kind(), "helper");
        let said = lost.to_string();
        assert!(
            said.starts_with(
                "node5: the connection was lost before the helper answered (no exit status; \
                 through jump host bastion)"
            ) && said.contains("`mesh check node5`"),
            "{said}"
        );
    }

    #[test]
    fn a_record_refusal_is_a_typed_failure_that_names_the_fix() {
        let refusal = RecordRefusal::Lost {
            record: "/var/lib/mesh/record.json".into(),
            found: vec!["process bundles in /var/lib/mesh/bundles: web-worker".into()],
        };
        let stdout = serde_json::to_vec(&refusal).unwrap();
        let e = record_refusal("web1".into(), EXIT_RECORD_LOST, &stdout, b"");
        assert_eq!(e.kind(), "record");
        let said = e.to_string();
        for words in [
            "web1: refused, nothing on the machine was changed",
            "record.json is missing",
            "web-worker",
            "`mesh node adopt web1`",
        ] {
            assert!(said.contains(words), "{said}");
        }
        // a helper that said nothing readable is still a failure, with its own words
        let e = record_refusal("web1".into(), EXIT_RECORD_UNREADABLE, b"", b"oops");
        assert!(matches!(e, PushError::Helper { .. }) && e.to_string().contains("oops"));
        // and its exit is named, not left a number
        assert!(
            e.to_string()
                .contains("(exit 21: the machine's record cannot be trusted)"),
            "{e}"
        );
    }
}
