//! Where the command line writes: stdout and stderr that a closed pipe does not turn into a
//! panic, one JSON document under `--json`, and an error as the operator (or a script) reads it.

use std::process::ExitCode;

use anyhow::Result;

use super::{answers, exit};

/// clap's own refusal of the command line: its message, and the usage status (help and
/// version are not errors).
pub(super) fn usage_error(e: &clap::Error, json: bool) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        out_raw!("{e}");
        return ExitCode::SUCCESS;
    }
    if json {
        let message = e.render().to_string();
        let _ = print_json(&error_json(("usage", None), message.trim_end()));
    } else {
        let _ = e.print();
    }
    ExitCode::from(exit::USAGE)
}

/// What kind of error ended a command (`kind`), and for an inventory error its class (`class`).
pub(super) type Kind<'a> = (&'a str, Option<&'static str>);

pub(super) fn error_json<'a>(
    (kind, class): Kind<'a>,
    message: &'a str,
) -> answers::ErrorAnswer<'a> {
    answers::ErrorAnswer {
        error: answers::ErrorBody {
            kind,
            class,
            message,
        },
        done: Vec::new(),
    }
}

/// What kind of error ended a command, for `--json`: from the typed error where there is one;
/// anything else is mesh refusing what it was asked. An inventory error also says whether the
/// inventory refused or its file failed (`class`), which its kind alone does not tell.
pub(super) fn error_kind(e: &anyhow::Error) -> Kind<'static> {
    for c in e.chain() {
        if let Some(inventory) = c.downcast_ref::<crate::inventory::InventoryError>() {
            let class = if inventory.is_refusal() {
                "refusal"
            } else {
                "storage"
            };
            return ("inventory", Some(class));
        }
        let kind = if c.is::<crate::catalogue::CatalogueError>() {
            "catalogue"
        } else if c.is::<crate::resolve::ResolveError>() {
            "resolve"
        } else if c.is::<crate::ssh::SshError>() {
            "ssh"
        } else if c.is::<crate::push::PushError>() {
            "push"
        } else if c.is::<crate::lab::LabError>() {
            "lab"
        } else if c.is::<std::io::Error>() {
            "io"
        } else {
            continue;
        };
        return (kind, None);
    }
    ("refused", None)
}

/// Set once stdout cannot be written: everything after is dropped.
static STDOUT_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes to stdout. A reader that went away (`mesh history | head -1`) stops the output, not
/// the command: a push still records every node and exits with its own status (ripgrep, too,
/// treats a closed pipe as the end of output, not as an error).
pub(crate) fn out(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    use std::sync::atomic::Ordering;
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        STDOUT_GONE.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            err!("mesh: cannot write to stdout, the rest of the output is lost: {e}");
        }
    }
}

/// Writes to stderr. `eprintln!` panics when stderr is closed (`mesh push 2>&-`); a message
/// nobody can read is dropped instead, and the command goes on to its own exit status.
pub(crate) fn err(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_fmt(args).and_then(|()| stderr.flush());
}

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<()> {
    out!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// An error and its causes, each said once: a typed error often quotes its cause in its own
/// message already (`cannot read F: No such file`), and anyhow's chain would say it again.
pub(super) fn said(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if !text.ends_with(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{InventoryError, Refusal, StorageError};

    #[test]
    fn an_inventory_error_keeps_its_kind_and_says_its_class() {
        let refused = anyhow::Error::from(InventoryError::from(Refusal::NoPush { id: 3 }));
        assert_eq!(error_kind(&refused), ("inventory", Some("refusal")));
        let missing = InventoryError::from(StorageError::Missing {
            path: "/x/inv.db".into(),
        });
        let wrapped = anyhow::Error::from(missing).context("cannot list the nodes");
        assert_eq!(error_kind(&wrapped), ("inventory", Some("storage")));
        let other = anyhow::anyhow!("nothing typed");
        assert_eq!(error_kind(&other), ("refused", None));
        let io = anyhow::Error::from(std::io::Error::other("disk"));
        assert_eq!(error_kind(&io), ("io", None));
        let answer = serde_json::to_value(error_json(error_kind(&refused), "m")).unwrap();
        assert_eq!(answer["error"]["class"], "refusal");
        let answer = serde_json::to_value(error_json(error_kind(&other), "m")).unwrap();
        assert!(answer["error"].get("class").is_none(), "{answer}");
    }
}
